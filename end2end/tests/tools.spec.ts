import { expect, test, type Locator, type Page } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";
import { SERVERS } from "../servers";

// Tool steps and sources: the demo's [tools] scenario thinks, searches the web, thinks again,
// runs code, thinks, then answers citing two of the three pages it found. The bubble shows the
// steps in stream order between the thinking blocks, the answer with [1] [2] markers, and a
// Sources list; Copy carries the sources as markdown footnotes; all of it is saved with the
// answer.

const FIRST_SOURCE = "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/";

/** The classes of the bubble's steps above the answer, in document order. */
async function stepKinds(bubble: Locator): Promise<string[]> {
  return bubble.locator(".bubble-main").evaluate((main) =>
    [...main.children]
      .map((el) => (el.classList.contains("tool-step") ? "tool" : el.classList.contains("thinking") ? "thinking" : ""))
      .filter(Boolean),
  );
}

async function expectToolsTurn(page: Page, chat: ChatPage) {
  const bubble = chat.lastAssistant();
  expect(await stepKinds(bubble)).toEqual(["thinking", "tool", "thinking", "tool", "thinking"]);
  const tools = bubble.locator(".tool-step");
  await expect(tools.nth(0)).toHaveClass(/finished/);
  await expect(tools.nth(0)).toContainText("Web search");
  await expect(tools.nth(0).locator(".tool-input")).toHaveText("Rust 2024 edition release");
  await expect(tools.nth(0).locator(".tool-status")).toHaveText("Done");
  await expect(tools.nth(1)).toContainText("Code execution");
  await expect(tools.nth(1).locator(".tool-input")).toHaveText("print(sum(range(1, 11)))");
  // The output is behind its disclosure.
  const output = tools.nth(1).locator(".tool-output");
  await expect(output).toBeHidden();
  await tools.nth(1).locator("summary").click();
  await expect(output).toBeVisible();
  await expect(output).toHaveText("55");

  const answer = chat.answer();
  await expect(answer.locator(".cite")).toHaveText(["[1]", "[2]"]);
  await expect(answer).not.toContainText("[^");
  const sources = bubble.getByRole("region", { name: "Sources" });
  const items = sources.locator("li");
  await expect(items).toHaveCount(3);
  await expect(items.nth(0)).toContainText("Announcing Rust 1.85.0 and Rust 2024");
  await expect(items.nth(0).locator(".source-domain")).toHaveText("blog.rust-lang.org");
  const link = items.nth(0).locator("a");
  await expect(link).toHaveAttribute("href", FIRST_SOURCE);
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(link).toHaveAttribute("rel", "noopener noreferrer nofollow");
  await expect(items.nth(2).locator(".source-domain")).toHaveText("rust-lang.org");
}

test("tool steps sit between the thinking blocks, the answer cites its sources, and a reload keeps it all", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[tools] when did Rust 2024 ship, and what is 1 + … + 10?");
  // While the search runs its card says so.
  await expect(chat.lastAssistant().locator(".tool-step.running")).toHaveCount(1);
  await chat.waitForTurnEnd();
  await expectToolsTurn(page, chat);
  // Nothing a source points at is fetched.
  expect(requests.filter((u) => u.includes("rust-lang.org"))).toEqual([]);

  await chat.lastAssistant().getByRole("button", { name: "Copy answer" }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain("20 February 2025.[^1] The edition guide lists what changed.[^2]");
  expect(copied).toContain(`[^1]: [Announcing Rust 1.85.0 and Rust 2024](<${FIRST_SOURCE}>)`);
  expect(copied).toContain("[^3]: [Rust Programming Language](<https://www.rust-lang.org/>)");

  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectNoViolations(page, `tool steps and sources (${scheme})`);
  }

  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.lastAssistant().locator(".tool-step")).toHaveCount(2);
  await expectToolsTurn(page, chat);
});

test("tool steps and sources are kept in this browser and in its exports", async ({ page }) => {
  const chat = new ChatPage(page, SERVERS.browserHistory.url);
  await chat.goto();
  await chat.send("[tools] check it");
  await chat.waitForTurnEnd();
  await chat.savedContains(FIRST_SOURCE);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expectToolsTurn(page, chat);

  await page.getByText("Export", { exact: true }).click();
  const [md] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download Markdown" }).click()]);
  const markdown = await streamText(await md.createReadStream());
  expect(markdown).toContain("> Tool `web_search` (finished): Rust 2024 edition release");
  expect(markdown).toContain("20 February 2025.[^1]");
  expect(markdown).toContain(`[^1]: [Announcing Rust 1.85.0 and Rust 2024](<${FIRST_SOURCE}>)`);
  const [js] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download JSON" }).click()]);
  const record = JSON.parse(await streamText(await js.createReadStream()));
  expect(record.messages[1].tools.map((t: { name: string }) => t.name)).toEqual(["web_search", "code_execution"]);
  expect(record.messages[1].sources[0].url).toBe(FIRST_SOURCE);
});

for (const [provider, tools, cites] of [
  ["anthropic", ["Web search", "Code execution"], 2],
  ["responses", ["Web search", "Code execution"], 2],
  ["gemini", ["Google Search", "Code execution"], 0],
] as const) {
  test(`tool steps and sources from ${provider}'s wire format`, async ({ page }) => {
    const chat = new ChatPage(page, SERVERS[provider].url);
    await chat.goto();
    await chat.send("[tools] once more");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble.locator(".tool-step .tool-name")).toHaveText([...tools]);
    await expect(bubble.locator(".tool-step.finished")).toHaveCount(2);
    await expect(bubble.getByRole("region", { name: "Sources" }).locator("li")).toHaveCount(3);
    await expect(chat.answer().locator(".cite")).toHaveCount(cites);
    await expect(chat.thinkingBlocks()).toHaveCount(3);
  });
}

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { SERVERS } from "../servers";

// Ponder with PONDER_BASE_PATH=/ponder, as behind a proxy's `location /ponder/`.
const origin = SERVERS.basePath.url;
const base = `${origin}/ponder`;

/** Paths the page asked the server for, and anything that went wrong in the page. */
function watch(page: Page) {
  const paths: string[] = [];
  const problems: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.origin === origin) paths.push(url.pathname);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  return { paths, problems };
}

test("under /ponder/ the page hydrates from /ponder/pkg and a turn streams through /ponder/api/chat", async ({ page }) => {
  const seen = watch(page);
  const chat = new ChatPage(page, base);
  await chat.goto();
  await expect(page).toHaveURL(`${base}/`);

  await chat.send("Why is the sky blue?");
  const block = chat.thinkingBlocks().first();
  await expect(block.locator(".thinking-text")).toContainText("pin down what is really being asked");
  await expect(chat.answer()).toContainText("Here is what I found");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("Let me know if you want more detail.");
  await expect(block.locator("summary")).toContainText(/Thought for \d+\.\ds/);

  // The assets by their content-hashed names (make build).
  for (const ext of ["js", "wasm", "css"])
    expect(seen.paths.filter((p) => new RegExp(`^/ponder/pkg/ponder\\.[0-9a-f]{16}\\.${ext}$`).test(p))).toHaveLength(1);
  // The split loader the script imports, and the message bubbles' chunk it fetched, from there too.
  for (const file of ["split\\.js", "messages\\.wasm"])
    expect(seen.paths.filter((p) => new RegExp(`^/ponder/pkg/ponder\\.[0-9a-f]{16}\\.${file}$`).test(p))).toHaveLength(1);
  expect(seen.paths).toContain("/ponder/api/chat");
  expect(seen.paths.filter((p) => !p.startsWith("/ponder/"))).toEqual([]);
  expect(seen.problems).toEqual([]);
});

test("the root redirects to /ponder/, where the chat hydrates", async ({ page }) => {
  const chat = new ChatPage(page, origin);
  await chat.goto();
  await expect(page).toHaveURL(`${base}/`);
  await expect(chat.composer()).toBeEditable();
});

test("an unknown page under /ponder/ links back to the chat under /ponder/", async ({ page }) => {
  const seen = watch(page);
  const response = await page.goto(`${base}/no-such-page`);
  expect(response?.status()).toBe(404);
  const back = page.getByRole("link", { name: "Back to the chat" });
  await expect(back).toHaveAttribute("href", "/ponder/");
  await back.click();
  await expect(page).toHaveURL(`${base}/`);
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  expect(seen.paths.filter((p) => !p.startsWith("/ponder/"))).toEqual([]);
  expect(seen.problems.filter((p) => !p.includes("404"))).toEqual([]);
});

test("/ponder without its slash is the chat too, and hydrates as one", async ({ page }) => {
  const seen = watch(page);
  const response = await page.goto(base);
  expect(response?.status()).toBe(200);
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.getByRole("link", { name: "Back to the chat" })).toHaveCount(0);
  expect(seen.problems).toEqual([]);
});

import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import AxeBuilder from "@axe-core/playwright";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Share links as people use them: a link with and without the thinking, read by a visitor who is
// signed in nowhere, in a context of its own; Revoke and deleting the chat close it (404);
// "Continue in Ponder" copies it into another account; a server that lets only its own users
// open links refuses a visitor. The shared page loads no script and stays small on the wire.

const SHARING = SERVERS.sharing.url;
const PROXY = SERVERS.proxyAuth.url;

async function as(browser: Browser, url: string, user?: string): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({
    baseURL: url,
    extraHTTPHeaders: user ? { "Remote-User": user } : undefined,
  });
  return [context, await context.newPage()];
}

/** Opens the Share menu and makes a link with the thinking or without; its address. */
async function makeLink(page: Page, thinking: boolean): Promise<string> {
  const menu = page.locator("details.share-menu");
  if (!(await menu.evaluate((d) => (d as HTMLDetailsElement).open))) {
    await menu.locator("summary").click();
  }
  const box = page.locator(".share-panel").getByLabel("Include thinking");
  await expect(box).toBeVisible();
  await expect(box).not.toBeChecked();
  if (thinking) {
    await box.check();
  }
  const field = page.locator(".share-url");
  // A second link replaces the first in the same field: wait for the new one.
  const before = (await field.count()) ? await field.inputValue() : "";
  await page.getByRole("button", { name: "Create link" }).click();
  await expect(field).toHaveValue(/\/s\/[A-Za-z0-9_-]{43}$/);
  if (before) await expect(field).not.toHaveValue(before);
  const url = await field.inputValue();
  if (thinking) {
    await box.uncheck();
  }
  return url;
}

test.describe.serial("share links", () => {
  let plain = "";
  let withThinking = "";
  let reasoning = "";

  test("the owner makes two links, one with the thinking; the dialog lists both", async ({ browser }) => {
    const [context, page] = await as(browser, SHARING, "ana-owner-7");
    const chat = new ChatPage(page, SHARING);
    await chat.goto();
    await chat.send("[tools] What changed in Rust 2024?");
    await chat.waitForTurnEnd();
    await expect(page).toHaveURL(/\/c\/[0-9a-f]+$/);
    reasoning = ((await page.evaluate(async () => {
      const id = location.pathname.split("/c/")[1];
      const r = await fetch("/api/conversations/export", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id }),
      });
      return (await r.json()).messages[1].versions[0].blocks[0].text;
    })) as string).slice(0, 30);
    expect(reasoning.length).toBeGreaterThan(10);
    plain = await makeLink(page, false);
    withThinking = await makeLink(page, true);
    expect(withThinking).not.toBe(plain);
    await expect(page.getByText("Copy the link now")).toBeVisible();
    const links = page.locator(".share-links .share-link");
    await expect(links).toHaveCount(2);
    await expect(links.first()).toContainText("with thinking");
    await expect(links.last()).toContainText("without thinking");
    await expectNoViolations(page, "the Share panel is open");
    await context.close();
  });

  test("a visitor reads each link with the thinking exactly as chosen and nothing of the account", async ({ browser }) => {
    const [context, page] = await as(browser, SHARING);
    const scripts: string[] = [];
    page.on("request", (r) => {
      if (["script", "fetch", "xhr"].includes(r.resourceType())) scripts.push(r.url());
      expect(new URL(r.url()).origin).toBe(new URL(SHARING).origin);
    });
    const response = await page.goto(plain);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["referrer-policy"]).toBe("no-referrer");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("[tools] What changed in Rust 2024?");
    await expect(page.getByText("Shared conversation · read only")).toBeVisible();
    await expect(page.locator(".bubble.assistant .answer")).toContainText("Rust 2024 edition");
    await expect(page.locator(".tool-step")).toHaveCount(2);
    await expect(page.locator(".sources li")).toHaveCount(3);
    await expect(page.locator("details.thinking")).toHaveCount(0);
    await expect(page.locator("body")).not.toContainText(reasoning);
    await expect(page.locator("body")).not.toContainText("ana-owner-7");
    await expect(page.getByRole("textbox")).toHaveCount(0);
    await expect(page.getByRole("navigation")).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Sign in to continue in Ponder" })).toBeVisible();
    expect(await page.evaluate(() => document.scripts.length)).toBe(0);
    expect(await page.locator('meta[name="robots"]').getAttribute("content")).toBe("noindex, nofollow");

    await page.goto(withThinking);
    const block = page.locator("details.thinking").first();
    await expect(block).toBeVisible();
    await expect(block).not.toHaveAttribute("open", "");
    await expect(block.locator("summary")).toContainText("words");
    await block.locator("summary").click();
    await expect(block).toContainText(reasoning);
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"]).analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
    expect(scripts).toEqual([]);
    await context.close();
  });

  test("the shared page's first load stays under 60 KB on the wire, beside the chat page's", async ({ browser }) => {
    async function firstLoad(user: string | undefined, url: string, ready: (page: Page) => Promise<void>) {
      const [context, page] = await as(browser, SHARING, user);
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      let bytes = 0;
      let requests = 0;
      cdp.on("Network.loadingFinished", (e) => {
        bytes += e.encodedDataLength;
        requests += 1;
      });
      await page.goto(url, { waitUntil: "load" });
      await ready(page);
      await page.waitForLoadState("networkidle");
      await context.close();
      return { bytes, requests };
    }
    const shared = await firstLoad(undefined, withThinking, async (page) => {
      await expect(page.locator("details.thinking").first()).toBeVisible();
    });
    const chat = await firstLoad("ana-owner-7", `${SHARING}/`, async (page) => {
      await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    });
    console.log(
      `first load on the wire: shared page ${shared.bytes} bytes in ${shared.requests} requests; ` +
        `chat page ${chat.bytes} bytes in ${chat.requests} requests`,
    );
    expect(shared.bytes).toBeGreaterThan(1000);
    expect(shared.bytes).toBeLessThanOrEqual(60 * 1024);
    expect(shared.bytes * 10).toBeLessThan(chat.bytes);
  });

  test("Continue in Ponder copies the conversation into another account", async ({ browser }) => {
    const [context, page] = await as(browser, SHARING, "bo");
    await page.goto(withThinking);
    await page.getByRole("button", { name: "Continue in Ponder" }).click();
    await expect(page).toHaveURL(/\/c\/[0-9a-f]+$/);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    const chat = new ChatPage(page, SHARING);
    await expect(chat.userBubbles().first()).toContainText("What changed in Rust 2024?");
    await expect(chat.answer()).toContainText("Rust 2024 edition");
    await expect(
      page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open"),
    ).toHaveText(["[tools] What changed in Rust 2024?"]);
    await chat.send("And in 2027?");
    await chat.waitForTurnEnd();
    await expect(chat.assistantBubbles()).toHaveCount(2);
    await context.close();
  });

  test("revoking a link and deleting the chat answer 404", async ({ browser }) => {
    const [owner, page] = await as(browser, SHARING, "ana-owner-7");
    const chat = new ChatPage(page, SHARING);
    await chat.goto();
    await page.getByRole("navigation", { name: "Conversations" }).getByText("[tools] What changed in Rust 2024?").click();
    await page.locator("details.share-menu summary").click();
    const links = page.locator(".share-links .share-link");
    await expect(links).toHaveCount(2);
    await links.filter({ hasText: "without thinking" }).getByRole("button", { name: "Revoke" }).click();
    await expect(links).toHaveCount(1);
    const [visitor, anon] = await as(browser, SHARING);
    const gone = await anon.goto(plain);
    expect(gone?.status()).toBe(404);
    await expect(anon.getByRole("heading")).toHaveText("This link does not exist, or it was revoked.");
    expect((await anon.goto(withThinking))?.status()).toBe(200);

    await page.keyboard.press("Escape");
    await chat.rowAction("[tools] What changed in Rust 2024?", "Delete");
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await expect(page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open")).toHaveCount(0);
    await expect(page.locator(".notice[data-kind=deleted]")).toBeVisible();
    expect((await anon.goto(withThinking))?.status()).toBe(404);
    expect(await anon.content()).toBe(await (async () => {
      await anon.goto(`${SHARING}/s/${"x".repeat(43)}`);
      return anon.content();
    })());
    await visitor.close();
    await owner.close();
  });
});

test("where only this Ponder's users open links, a visitor is asked to sign in", async ({ browser }) => {
  const [owner, page] = await as(browser, PROXY, "sharer");
  const chat = new ChatPage(page, PROXY);
  await chat.goto();
  await chat.send("[no-think] for members only");
  await chat.waitForTurnEnd();
  const url = await makeLink(page, false);
  const [visitor, anon] = await as(browser, PROXY);
  const refused = await anon.goto(url);
  expect(refused?.status()).toBe(401);
  await expect(anon.getByRole("heading")).toHaveText("Sign in to this Ponder to open shared conversations.");
  await expect(anon.locator("body")).not.toContainText("for members only");
  const [member, other] = await as(browser, PROXY, "member");
  expect((await other.goto(url))?.status()).toBe(200);
  await expect(other.locator(".bubble.user")).toContainText("for members only");
  await member.close();
  await visitor.close();
  await owner.close();
});

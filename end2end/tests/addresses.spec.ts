import { expect, test, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Every chat has an address (`/c/<id>` under the base path): the address bar follows the chat
// shown, Back and Forward walk the chats seen, a reload or a new tab opens the chat by its
// address, and an address that names no chat of the reader's is the not-found page.

function conversations(page: Page) {
  return page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open");
}

function pathOf(page: Page) {
  return new URL(page.url()).pathname;
}

async function hydrated(page: Page) {
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
}

/** New chat, from the drawer on a phone. */
async function newChat(page: Page) {
  const button = page.getByRole("button", { name: "New chat" });
  const toggle = page.locator("#drawer-toggle");
  // The toggle's state, not the button's place: a closing drawer is on screen for a moment.
  if ((await toggle.isVisible()) && (await toggle.getAttribute("aria-expanded")) !== "true") {
    await toggle.click();
  }
  await button.click();
}

async function chatAt(chat: ChatPage, text: string): Promise<string> {
  await chat.send(text);
  await chat.waitForTurnEnd();
  await expect.poll(() => pathOf(chat.page)).toMatch(/^(\/ponder)?\/c\/[^/]+$/);
  return pathOf(chat.page);
}

for (const size of [
  { name: "desktop", viewport: { width: 1440, height: 900 } },
  { name: "phone", viewport: { width: 390, height: 844 }, hasTouch: true },
]) {
  test.describe(`addresses (${size.name})`, () => {
    test.use({ viewport: size.viewport, hasTouch: size.hasTouch ?? false });

    test("the address follows the chat; Back, Forward, reload and a new tab open it", async ({ page, context }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      expect(pathOf(page)).toBe("/");
      const first = await chatAt(chat, `first by address ${size.name}`);
      // The server's id is the address: the list names the same chat.
      const list = await (await page.request.post("/api/conversations/list", { data: {} })).json();
      expect(list.map((c: { id: string }) => `/c/${c.id}`)).toContain(first);

      await newChat(page);
      await expect.poll(() => pathOf(page)).toBe("/");
      await expect(chat.userBubbles()).toHaveCount(0);
      // Back from the empty new chat is the chat before it.
      await page.goBack();
      await expect.poll(() => pathOf(page)).toBe(first);
      await expect(chat.userBubbles().first()).toContainText(`first by address ${size.name}`);
      await page.goForward();
      await expect.poll(() => pathOf(page)).toBe("/");
      await expect(chat.userBubbles()).toHaveCount(0);
      // The new chat's first message gives it its address in place: Back skips the empty chat.
      const second = await chatAt(chat, `second by address ${size.name}`);
      expect(second).not.toBe(first);
      await page.goBack();
      await expect.poll(() => pathOf(page)).toBe(first);
      await expect(chat.userBubbles().first()).toContainText(`first by address ${size.name}`);
      await page.goForward();
      await expect.poll(() => pathOf(page)).toBe(second);
      await expect(chat.userBubbles().first()).toContainText(`second by address ${size.name}`);

      // The server draws the address as a chat being opened, never as an empty new chat.
      const served = await (await page.request.get(second)).text();
      expect(served).toContain("Opening the chat");
      expect(served).not.toContain("example-prompt");
      await page.reload();
      await hydrated(page);
      expect(pathOf(page)).toBe(second);
      await expect(chat.userBubbles().first()).toContainText(`second by address ${size.name}`);

      const tab = await context.newPage();
      await tab.goto(first);
      await hydrated(tab);
      const other = new ChatPage(tab);
      await expect(other.userBubbles().first()).toContainText(`first by address ${size.name}`);
      await expect(other.answer()).not.toBeEmpty();
      expect(pathOf(tab)).toBe(first);
      await tab.close();
    });

    test("the server draws a chat's messages on its first load, from its end, and nothing in it runs", async ({ page, context }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      const address = await chatAt(chat, `[long] drawn first ${size.name}`);
      await chat.send(`[xss] drawn second ${size.name}`);
      await chat.waitForTurnEnd();
      const served = await (await page.request.get(address)).text();
      expect(served).toContain(`drawn first ${size.name}`);
      expect(served).toContain(`drawn second ${size.name}`);
      expect(served).toContain('class="thinking done"');

      // The drawing alone, as a reader sees it before the page's code runs.
      const still = await context.newPage();
      await still.route(/\.(wasm|js)(\?.*)?$/, (route) => route.abort());
      let dialogs = 0;
      still.on("dialog", (dialog) => {
        dialogs += 1;
        void dialog.dismiss();
      });
      await still.goto(address);
      const drawing = still.locator(".first-paint");
      await expect(drawing.locator(".bubble.user")).toHaveCount(2);
      await expect(drawing.locator(".bubble.assistant")).toHaveCount(2);
      await expect(drawing.locator("details.thinking").first()).toBeVisible();
      // A chat opens at its end.
      await expect(drawing.locator(".bubble.assistant").last()).toBeInViewport();
      await expect(drawing.locator(".bubble.user").first()).not.toBeInViewport();
      expect(await drawing.locator("img, script, iframe, [onerror], [onclick]").count()).toBe(0);
      expect(dialogs).toBe(0);
      await still.close();

      // The page, once it runs, shows the chat itself in place of the drawing.
      await page.goto(address);
      await hydrated(page);
      await expect(chat.userBubbles().first()).toContainText(`drawn first ${size.name}`);
      await expect(page.locator(".first-paint")).toHaveCount(0);
    });

    test("opening a chat from the list is a step Back returns from", async ({ page }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      const one = await chatAt(chat, `listed one ${size.name}`);
      await newChat(page);
      const two = await chatAt(chat, `listed two ${size.name}`);
      if (size.name === "phone") {
        await page.locator("#drawer-toggle").click();
      }
      await conversations(page).filter({ hasText: `listed one ${size.name}` }).click();
      await expect.poll(() => pathOf(page)).toBe(one);
      await expect(chat.userBubbles().first()).toContainText(`listed one ${size.name}`);
      await page.goBack();
      await expect.poll(() => pathOf(page)).toBe(two);
      await expect(chat.userBubbles().first()).toContainText(`listed two ${size.name}`);
    });

    test("an address that names no chat of the reader's is the not-found page", async ({ page }) => {
      const response = await page.goto("/c/no-such-chat");
      expect(response?.status()).toBe(404);
      await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
      await expect(page.locator(".chat-page")).toHaveCount(0);
      await page.getByRole("link", { name: "Back to the chat" }).click();
      await hydrated(page);
      expect(pathOf(page)).toBe("/");
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto("/c/no-such-chat");
        await expectNoViolations(page, `the not-found page, ${scheme}`);
      }
    });
  });
}

test("an answer still being written is drawn on the first load as thinking, never as interrupted", async ({ page, context }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] drawn while it runs");
  await expect.poll(() => pathOf(page), { timeout: 15_000 }).toMatch(/^\/c\/[^/]+$/);
  await expect(page.locator(".thinking.streaming")).toHaveCount(1);
  // The server keeps the running answer's state about once a second; the drawing follows it.
  const address = pathOf(page);
  const served = async () => (await page.request.get(address)).text();
  await expect.poll(served).toContain('class="thinking streaming"');
  const still = await context.newPage();
  await still.route(/\.(wasm|js)(\?.*)?$/, (route) => route.abort());
  await still.goto(address);
  const drawing = still.locator(".first-paint");
  await expect(drawing.locator("details.thinking.streaming")).toHaveCount(1);
  await expect(drawing.locator(".thinking-label")).toContainText("Thinking…");
  await expect(drawing).not.toContainText("interrupted");
  await expect(drawing.locator(".thinking.interrupted, .error-message")).toHaveCount(0);
  await still.close();
  await chat.waitForTurnEnd();
});

test("with chats in this browser, the address opens the chat kept here; an unknown one is not found", async ({ page }) => {
  const url = SERVERS.browserHistory.url;
  const chat = new ChatPage(page, url);
  await chat.goto();
  await chat.send("kept in this browser");
  await chat.waitForTurnEnd();
  await expect.poll(() => pathOf(page)).toMatch(/^\/c\/[^/]+$/);
  const address = pathOf(page);
  await page.goto(`${url}/`);
  await hydrated(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect.poll(() => pathOf(page)).toBe("/");
  await page.goto(`${url}${address}`);
  await hydrated(page);
  await expect(chat.userBubbles().first()).toContainText("kept in this browser");
  await page.goto(`${url}/c/not-in-this-browser`);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await page.goBack();
  await hydrated(page);
  await expect(chat.userBubbles().first()).toContainText("kept in this browser");
});

test("under a base path the address is under it too", async ({ page }) => {
  const url = SERVERS.basePath.url;
  const chat = new ChatPage(page, `${url}/ponder`);
  await chat.goto();
  const address = await chatAt(chat, "under the base path");
  expect(address.startsWith("/ponder/c/")).toBe(true);
  await page.reload();
  await hydrated(page);
  await expect(chat.userBubbles().first()).toContainText("under the base path");
  expect((await page.goto(`${url}/ponder/c/missing`))?.status()).toBe(404);
});

test("the Arabic page keeps its address, right to left", async ({ browser }) => {
  const context = await browser.newContext({ locale: "ar" });
  const page = await context.newPage();
  await page.goto("/");
  await hydrated(page);
  await expect(page.locator("html")).toHaveAttribute("dir", "rtl");
  await page.getByRole("textbox").first().fill("عنوان المحادثة");
  await page.keyboard.press("Enter");
  await expect.poll(() => pathOf(page), { timeout: 15_000 }).toMatch(/^\/c\/[^/]+$/);
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto("/c/no-such-chat");
    await expect(page.locator("html")).toHaveAttribute("dir", "rtl");
    await expectNoViolations(page, `the Arabic not-found page, ${scheme}`);
  }
  await context.close();
});

// The first paint takes Enter before the page knows which chat it shows: a message sent then
// belongs to the chat at the address, never to a new one. The requests that tell the page which
// chat it shows (the server's copy, or this browser's reader) are held until the message is
// sent, so the window is always open when the test sends.
for (const where of ["server", "browser"] as const) {
  test(`a message sent while the addressed chat opens goes to that chat (${where} history)`, async ({ page }) => {
    const base = where === "server" ? "" : SERVERS.browserHistory.url;
    const chat = new ChatPage(page, base);
    await chat.goto();
    const address = await chatAt(chat, `opened first (${where})`);
    const chats = await conversations(page).count();

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = where === "server" ? "**/api/conversations/get" : /\.local_chats\.wasm(\?.*)?$/;
    await page.route(held, async (route) => {
      await gate;
      await route.continue();
    });
    const turns: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/api/chat")) turns.push(r.postData() ?? "");
    });
    await page.goto(`${base}${address}`);
    await hydrated(page);
    // This browser's reader is held, so that chat is still opening. The server's copy may be
    // shown without `conversations/get` (the list already holds it): there the test checks
    // only where the turn goes.
    if (where === "browser") await expect(page.locator(".chat-page")).toContainText("Opening the chat");
    await chat.send(`sent while opening (${where})`);
    release();

    await expect(chat.userBubbles()).toHaveCount(2);
    await expect(chat.userBubbles().first()).toContainText(`opened first (${where})`);
    await expect(chat.userBubbles().last()).toContainText(`sent while opening (${where})`);
    await chat.waitForTurnEnd();
    expect(pathOf(page)).toBe(address);
    // One turn, asked in the chat at the address (the page may know it from the address before
    // the chat is shown; it must never ask without it): the server's chat by its id, or this
    // browser's chat with its messages so far.
    expect(turns).toHaveLength(1);
    const asked = JSON.parse(turns[0]);
    if (where === "server") {
      expect(asked.conversation).toBe(address.split("/c/")[1]);
    } else {
      expect(asked.messages.map((m: { content: string }) => m.content)).toContain(`opened first (${where})`);
    }
    await expect(conversations(page)).toHaveCount(chats);
  });
}

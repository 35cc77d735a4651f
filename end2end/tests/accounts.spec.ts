import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, expectNoViolations } from "../pages/chat";
import { Words } from "../pages/i18n";

// Accounts and server-side history, as people use them: signing in (built-in accounts, a trusted
// proxy's header, no sign-in on loopback), the same history on a second device, nothing of it for
// another user, delete with Undo then the purge, search that reaches the thinking, and chats
// already in this browser moved onto the server.

const ACCOUNTS = SERVERS.accounts.url;
const PROXY = SERVERS.proxyAuth.url;
const ADMIN = { name: "admin", password: "admin-password-1" };
const BO = { name: "bo", password: "bo-password-12" };

async function signIn(page: Page, who: { name: string; password: string }, button = "Sign in") {
  await page.getByRole("textbox", { name: "Name" }).fill(who.name);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: button }).click();
  await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
}

async function device(browser: Browser, baseURL: string, headers?: Record<string, string>): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ baseURL, extraHTTPHeaders: headers });
  const page = await context.newPage();
  return [context, page];
}

async function hydrated(page: Page, url: string) {
  await page.goto(`${url}/`);
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
}

function conversations(page: Page) {
  return page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open");
}

async function api(page: Page, url: string, endpoint: string, body: unknown) {
  const response = await page.request.post(`${url}/api/${endpoint}`, { data: body });
  return { status: response.status(), body: await response.text() };
}

test.describe.serial("built-in accounts", () => {
  let adminConversation = "";

  test("the first visit creates the admin; their chat is on a second device after signing in", async ({ browser }) => {
    const [first, page] = await device(browser, ACCOUNTS);
    await hydrated(page, ACCOUNTS);
    await expect(page.getByRole("heading", { name: "Create the admin account" })).toBeVisible();
    await signIn(page, ADMIN, "Create account");
    const chat = new ChatPage(page, ACCOUNTS);
    await chat.send("[two-blocks] kept on the server");
    await chat.waitForTurnEnd();
    await expect(conversations(page)).toHaveText(["[two-blocks] kept on the server"]);
    const list = JSON.parse((await api(page, ACCOUNTS, "conversations/list", {})).body);
    adminConversation = list[0].id;

    const [second, other] = await device(browser, ACCOUNTS);
    await hydrated(other, ACCOUNTS);
    await expect(other.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
    await other.getByRole("textbox", { name: "Name" }).fill(ADMIN.name);
    await other.getByLabel("Password").fill("not-the-password");
    await other.getByRole("button", { name: "Sign in" }).click();
    await expect(other.getByRole("alert")).toContainText("the password is wrong");
    await signIn(other, ADMIN);
    await expect(conversations(other)).toHaveText(["[two-blocks] kept on the server"]);
    await conversations(other).first().click();
    const there = new ChatPage(other, ACCOUNTS);
    await expect(there.userBubbles().first()).toContainText("kept on the server");
    await expect(there.answer()).toContainText("Verified: the answer stands.");
    // The reasoning is not in the opened conversation; it loads when the block opens.
    const block = there.thinkingBlocks().first();
    await there.summary(block).click();
    await expect(block.locator(".thinking-text")).toContainText("pin down what is really being asked");
    await first.close();
    await second.close();
  });

  test("the admin adds a user, who sees none of the admin's chats and gets 404 for one", async ({ browser }) => {
    const [admin, page] = await device(browser, ACCOUNTS);
    await hydrated(page, ACCOUNTS);
    await signIn(page, ADMIN);
    await page.getByText("Settings", { exact: true }).click();
    await page.getByRole("button", { name: "API tokens and users…" }).click();
    const panel = page.getByRole("dialog", { name: /Account/ });
    await expect(panel.getByRole("list", { name: "Users" })).toContainText("admin");
    // A modal of its own, over a backdrop: the Settings menu it came from is closed.
    await expect(page.locator("details.menu[open]")).toHaveCount(0);
    await expect(page.locator(".modal-backdrop")).toBeVisible();
    await expect(panel.locator(".account-item-note")).toHaveText("Admin");
    await expect(panel).not.toContainText("….");
    await panel.getByRole("textbox", { name: "New user's name" }).fill(BO.name);
    await panel.getByLabel("Their password").fill(BO.password);
    await panel.getByRole("button", { name: "Add user" }).click();
    await expect(panel.getByRole("list", { name: "Users" })).toContainText(BO.name);
    // A token, shown once, works as a bearer.
    await panel.getByRole("textbox", { name: "New token's name" }).fill("script");
    await panel.getByRole("button", { name: "Make a token" }).click();
    const secret = (await panel.locator(".secret").textContent()) ?? "";
    expect(secret).toMatch(/^pt_/);
    const viaToken = await page.request.post(`${ACCOUNTS}/api/conversations/list`, {
      data: {},
      headers: { authorization: `Bearer ${secret}`, cookie: "" },
    });
    expect(viaToken.status()).toBe(200);
    await panel.getByRole("button", { name: "Close" }).click();
    await admin.close();

    const [bo, other] = await device(browser, ACCOUNTS);
    await hydrated(other, ACCOUNTS);
    await signIn(other, BO);
    await expect(conversations(other)).toHaveCount(0);
    const theirs = await api(other, ACCOUNTS, "conversations/get", { id: adminConversation });
    const missing = await api(other, ACCOUNTS, "conversations/get", { id: "no-such-conversation" });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toBe(missing.body);
    const block = await api(other, ACCOUNTS, "search", { query: "server", thinking: true });
    expect(block.status).toBe(200);
    expect(JSON.parse(block.body)).toEqual([]);
    await bo.close();
  });

  test("chats already in this browser are offered once and imported once", async ({ browser }) => {
    const [context, page] = await device(browser, ACCOUNTS);
    const record = {
      id: "legacy-1",
      title: "From before accounts",
      created_at: 1764489600000,
      updated_at: 1764489600000,
      rev: 1,
      messages: [
        { id: "u1", role: "user", content: "From before accounts", created_at: 1764489600000 },
        {
          id: "a1", role: "assistant", content: "An old answer.", created_at: 1764489600000,
          thinking: [{ text: "old reasoning about zanzibar", kind: "raw", duration_ms: 1200 }],
        },
      ],
    };
    const plant = (r: typeof record) => localStorage.setItem(`ponder.chat.v1.${r.id}`, JSON.stringify(r));
    await page.addInitScript(plant, record);
    await hydrated(page, ACCOUNTS);
    await signIn(page, BO);
    const offer = page.getByRole("region", { name: "Chats in this browser" });
    await expect(offer).toContainText("This browser holds 1 chat saved");
    await offer.getByRole("button", { name: "Import them" }).click();
    await expect(offer).toHaveCount(0);
    await expect(conversations(page)).toHaveText(["From before accounts"]);
    // The same chat in the browser again (another tab kept it): importing it again adds nothing.
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await page.getByRole("region", { name: "Chats in this browser" }).getByRole("button", { name: "Import them" }).click();
    await expect(page.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
    await expect(conversations(page)).toHaveText(["From before accounts"]);
    await conversations(page).first().click();
    const chat = new ChatPage(page, ACCOUNTS);
    await expect(chat.answer()).toContainText("An old answer.");
    await chat.summary(chat.thinkingBlocks().first()).click();
    await expect(chat.thinkingBlocks().first().locator(".thinking-text")).toContainText("zanzibar");
    await context.close();

    // Another browser with an older chat says Not now: it stays there and is not offered again.
    const [later, again] = await device(browser, ACCOUNTS);
    await again.addInitScript(plant, { ...record, id: "legacy-2", title: "Kept here" });
    await hydrated(again, ACCOUNTS);
    await signIn(again, BO);
    await again.getByRole("region", { name: "Chats in this browser" }).getByRole("button", { name: "Not now" }).click();
    await expect(again.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
    await again.reload();
    await expect(again.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(conversations(again)).toHaveText(["From before accounts"]);
    await expect(again.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
    expect(await again.evaluate(() => localStorage.getItem("ponder.chat.v1.legacy-2"))).not.toBeNull();
    await later.close();
  });

  test("signing out leaves nothing of the chat for the next person at this computer", async ({ browser }) => {
    const [context, page] = await device(browser, ACCOUNTS);
    await hydrated(page, ACCOUNTS);
    await signIn(page, ADMIN);
    const chat = new ChatPage(page, ACCOUNTS);
    await page.getByRole("button", { name: "New chat" }).click();
    await chat.send("secret plans for the weekend");
    await chat.waitForTurnEnd();
    await expect(page).toHaveTitle(/secret plans/);
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/c\//);
    const cached = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("ponder.chat.v1.")));
    expect(await cached()).not.toEqual([]);

    await page.getByText("Settings", { exact: true }).click();
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(page.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
    await expect(page).toHaveTitle("Ponder");
    expect(new URL(page.url()).pathname).toBe("/");
    await expect.poll(cached).toEqual([]);
    await expect(page.getByText("secret plans")).toHaveCount(0);

    await signIn(page, BO);
    await expect(conversations(page)).toHaveText(["From before accounts"]);
    await expect(page.getByText("That chat is no longer on the server")).toHaveCount(0);
    await expect(page.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
    await expect(chat.userBubbles()).toHaveCount(0);
    await context.close();
  });

  test("on a phone, in Arabic, signing out leaves nothing behind, and the sign-in page is accessible, light and dark", async ({ browser }) => {
    const ar = new Words("ar");
    const context = await browser.newContext({
      baseURL: ACCOUNTS,
      locale: "ar",
      viewport: { width: 390, height: 844 },
      hasTouch: true,
    });
    const page = await context.newPage();
    await hydrated(page, ACCOUNTS);
    await expect(page.locator("html")).toHaveAttribute("dir", "rtl");
    await page.getByRole("textbox", { name: ar.t("name") }).fill(BO.name);
    await page.getByLabel(ar.t("password")).fill(BO.password);
    await page.getByRole("button", { name: ar.t("sign_in"), exact: true }).click();
    const box = page.getByRole("textbox", { name: ar.t("message") });
    await expect(box).toBeVisible();
    // The page loads again signed in; Enter sends once it has hydrated.
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    const secret = `خطط سرية ${Date.now()}`;
    await box.fill(secret);
    await page.keyboard.press("Enter");
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toMatch(/^\/c\//);
    await expect(page).toHaveTitle(new RegExp(secret));
    const cached = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("ponder.chat.v1.")));
    await expect.poll(cached).not.toEqual([]);

    await page.locator("summary", { hasText: ar.t("settings") }).click();
    await page.getByRole("button", { name: ar.t("sign_out"), exact: true }).click();
    await expect(page.getByRole("heading", { name: ar.t("sign_in_title") })).toBeVisible();
    await expect(page).toHaveTitle("Ponder");
    expect(new URL(page.url()).pathname).toBe("/");
    await expect.poll(cached).toEqual([]);
    await expect(page.getByText(secret)).toHaveCount(0);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoViolations(page, `the Arabic sign-in page after sign-out on a phone, ${scheme}`);
    }
    await context.close();
  });
});

test.describe("a trusted proxy names the user", () => {
  test("the header signs in; without it the API answers 401", async ({ browser }) => {
    const [context, page] = await device(browser, PROXY, { "Remote-User": "carol" });
    await hydrated(page, PROXY);
    await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
    await page.getByText("Settings", { exact: true }).click();
    await expect(page.locator(".account-name")).toContainText("carol");
    await expect(page.getByRole("button", { name: "Sign out" })).toHaveCount(0);
    await context.close();
    const [bare, anon] = await device(browser, PROXY);
    expect((await api(anon, PROXY, "conversations/list", {})).status).toBe(401);
    await bare.close();
  });

  test("the account section comes with its chunk the first time the settings open; a failed fetch says so and the next opening shows it", async ({ browser }) => {
    const [context, page] = await device(browser, PROXY, { "Remote-User": "dana" });
    const panel = /\/pkg\/ponder\.[0-9a-f]{16}\.account_panel\.wasm$/;
    const fetched: string[] = [];
    page.on("request", (r) => {
      if (panel.test(new URL(r.url()).pathname)) fetched.push(r.url());
    });
    await page.route(panel, (route) => route.abort("connectionfailed"));
    await hydrated(page, PROXY);
    expect(fetched).toEqual([]);
    const settings = page.locator("summary", { hasText: "Settings" });
    await settings.click();
    await expect(page.locator(".notice[data-kind=server]")).toContainText("could not be loaded");
    await expect(page.locator(".account-name")).toHaveCount(0);
    await settings.click();
    await page.unroute(panel);
    await settings.click();
    await expect(page.locator(".account-name")).toContainText("dana");
    expect(fetched.length).toBe(2);
    await context.close();
  });

  test("delete offers Undo, and after the grace the purge removes the chat", async ({ browser }) => {
    const [context, page] = await device(browser, PROXY, { "Remote-User": "dora" });
    await hydrated(page, PROXY);
    const chat = new ChatPage(page, PROXY);
    await chat.send("short-lived");
    await chat.waitForTurnEnd();
    await expect(conversations(page)).toHaveText(["short-lived"]);
    const id = JSON.parse((await api(page, PROXY, "conversations/list", {})).body)[0].id;

    await chat.rowAction("short-lived", "Delete");
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await expect(conversations(page)).toHaveCount(0);
    await page.getByRole("button", { name: "Undo" }).click();
    await expect(conversations(page)).toHaveText(["short-lived"]);
    expect((await api(page, PROXY, "conversations/get", { id })).status).toBe(200);

    await chat.rowAction("short-lived", "Delete");
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await expect(conversations(page)).toHaveCount(0);
    // Restorable while the grace runs (2 s on this server); then the purge removes it.
    const deleted = async () => JSON.parse((await api(page, PROXY, "conversations/list", { deleted: true })).body).map((c: any) => c.id);
    expect(await deleted()).toContain(id);
    await expect.poll(deleted, { timeout: 15_000 }).not.toContain(id);
    expect((await api(page, PROXY, "conversations/restore", { id })).status).toBe(404);
    expect((await api(page, PROXY, "conversations/get", { id })).status).toBe(404);
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(conversations(page)).toHaveCount(0);
    await context.close();
  });

  test("search finds answers, and the reasoning only with Include thinking; a result opens its message", async ({ browser }) => {
    const [context, page] = await device(browser, PROXY, { "Remote-User": "erin" });
    await hydrated(page, PROXY);
    const chat = new ChatPage(page, PROXY);
    await chat.send("[two-blocks] searchable chat");
    await chat.waitForTurnEnd();
    await chat.send("a second question");
    await chat.waitForTurnEnd();
    await page.getByRole("button", { name: "New chat" }).click();

    const search = page.getByRole("searchbox", { name: "Search chats" });
    const results = page.getByRole("region", { name: "Search results" });
    await search.fill("really being asked");
    await search.press("Enter");
    await expect(results).toContainText("Nothing found.");
    await page.getByRole("search").getByRole("checkbox", { name: "Include thinking" }).check();
    await expect(results.locator(".search-group").first()).toContainText("searchable chat");
    const hit = results.locator(".search-hit").first();
    await expect(hit.locator("mark").first()).toBeVisible();
    await hit.click();
    await expect(chat.userBubbles().first()).toContainText("searchable chat");
    await expect(page.locator(".bubble[data-revealed]")).toHaveCount(1);
    await expect(page.locator(".bubble[data-revealed]")).toBeFocused();

    await search.fill("Verified answer stands");
    await search.press("Enter");
    await expect(results.locator(".search-group").first()).toContainText("searchable chat");
    await context.close();
  });
});

test("on loopback without PONDER_AUTH there is no sign-in, and the history is on the server", async ({ browser }) => {
  const [context, page] = await device(browser, SERVERS.main.url);
  await hydrated(page, SERVERS.main.url);
  await expect(page.getByRole("heading", { name: /Sign in|Create the admin/ })).toHaveCount(0);
  const chat = new ChatPage(page, SERVERS.main.url);
  await chat.send("on every device");
  await chat.waitForTurnEnd();
  const [otherContext, other] = await device(browser, SERVERS.main.url);
  await hydrated(other, SERVERS.main.url);
  await expect(conversations(other).filter({ hasText: "on every device" })).toHaveCount(1);
  await context.close();
  await otherContext.close();
});

test("a long conversation opens on its last messages; earlier ones come when the reader scrolls up", async ({ browser }) => {
  const url = SERVERS.main.url;
  const [context, page] = await device(browser, url);
  const tag = `long chat ${Date.now()}`;
  const messages = [];
  for (let i = 0; i < 60; i++) {
    messages.push({ role: "user", created_at: 1764489600000 + i * 2, active: 0, versions: [{ content: `question ${i} of ${tag}`, status: "done", created_at: 1764489600000 + i * 2 }] });
    messages.push({ role: "assistant", created_at: 1764489600001 + i * 2, active: 0, versions: [{ content: `answer ${i}`, status: "done", created_at: 1764489600001 + i * 2 }] });
  }
  const imported = await page.request.post(`${url}/api/conversations/import`, {
    data: { conversation: { key: tag, title: tag, created_at: 1764489600000, messages } },
  });
  expect(imported.status()).toBe(200);
  await hydrated(page, url);
  // The server sends only the last page: 40 messages, and how many come before them.
  const opening = page.waitForResponse((r) => r.url().endsWith("/api/conversations/get"));
  await conversations(page).filter({ hasText: tag }).click();
  const first = await (await opening).json();
  expect([first.messages.length, first.first]).toEqual([40, 80]);
  const chat = new ChatPage(page, url);
  await expect(chat.assistantBubbles().last()).toContainText("answer 59");
  await expect(chat.assistantBubbles().last()).toBeInViewport();
  // 120 messages, 40 rendered: the rest wait above.
  await expect(page.locator("main.conversation article")).toHaveCount(40);
  await expect(page.getByRole("button", { name: "Show earlier messages (80)" })).toHaveCount(1);
  // Scrolling to the top brings the 40 before, and what the reader was looking at stays in view.
  const scroller = page.locator("main.conversation");
  await scroller.evaluate((el) => el.scrollTo(0, 0));
  await expect(page.locator("main.conversation article")).toHaveCount(80);
  await expect(chat.userBubbles().filter({ hasText: `question 40 of ${tag}` })).toBeInViewport();
  await expect(page.getByRole("button", { name: "Show earlier messages (40)" })).toHaveCount(1);
  await scroller.evaluate((el) => el.scrollTo(0, 0));
  await expect(page.locator("main.conversation article")).toHaveCount(120);
  await expect(chat.userBubbles().first()).toContainText(`question 0 of ${tag}`);
  await expect(page.getByRole("button", { name: /Show earlier messages/ })).toHaveCount(0);
  await context.close();

  // A search result in a message the page has not loaded yet brings it in and into view.
  const [fresh, other] = await device(browser, url);
  await hydrated(other, url);
  const search = other.getByRole("searchbox", { name: "Search chats" });
  await search.fill(`question 3 of ${tag}`);
  await search.press("Enter");
  await other.getByRole("region", { name: "Search results" }).locator(".search-hit", { hasText: "question 3 of" }).first().click();
  const revealed = other.locator(".bubble[data-revealed]");
  await expect(revealed).toHaveCount(1);
  await expect(revealed).toContainText(`question 3 of ${tag}`);
  await expect(revealed).toBeInViewport();
  await expect(revealed).toBeFocused();
  await fresh.close();
});

import { expect, test, type Browser, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { EN, Words } from "../pages/i18n";
import { SERVERS } from "../servers";

// Code an empty chat page never runs is in WebAssembly chunks of their own (`make site` splits
// them out): the conversation's scrolling view with the message bubbles and the markdown
// renderer, following a turn's stream, chat files (export and import), the account panel, the
// list's actions on the server (rename, delete, undo, workspaces, import), the workspaces and the
// search form, search, the conversation list, the reader of this browser's saved chats, and the
// contents of the settings and model picker menus; and the words of each language but English. The first load carries none of them; each
// is fetched once, when first wanted (a page in another language wants its words before it
// hydrates, and preloads them); and nothing is lost when one cannot be fetched.

const chunk = (name: string) => new RegExp(`/pkg/ponder\\.[0-9a-f]{16}\\.${name}\\.wasm$`);
const MESSAGES = chunk("messages");
/** The conversation list's chunk: fetched as soon as there is a chat to list, which on the
 * shared server (other tests make chats there) is at once; pinned on its own below. */
const LIST = "conversation_list.wasm";
/** The workspaces and the search form: fetched once hydrated on a page with server-side history,
 * which the shared server has; pinned on their own below. */
const SERVER_PARTS = "server_sidebar.wasm";
/** A chunk of one split point's own (not shared code), other than the list's and the sidebar's
 * server parts. */
const own = (name: string) => !name.startsWith("chunk_") && name !== LIST && name !== SERVER_PARTS;
const ANY_CHUNK = chunk("[a-z0-9_]+");

/** The chunks the page fetched, by name; code two chunks share is in `chunk_<n>` files. */
function chunkRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (ANY_CHUNK.test(path)) seen.push(path.replace(/^.*\/ponder\.[0-9a-f]{16}\./, ""));
  });
  return seen;
}

/** A page of the server that keeps history in the browser, in a context of its own, loaded, with
 * the chunks it fetches. */
async function browserHistoryPage(browser: Browser) {
  const url = SERVERS.browserHistory.url;
  const context = await browser.newContext({ baseURL: url, locale: "en-US" });
  const page = await context.newPage();
  const chunks = chunkRequests(page);
  const chat = new ChatPage(page, url, EN);
  await chat.goto();
  await chat.settled();
  return { url, context, page, chunks, chat };
}

test("the first load leaves every chunk out; typing fetches the bubbles once and answers render as markdown", async ({ page }) => {
  const chunks = chunkRequests(page);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.settled();
  expect(chunks.filter(own)).toEqual([]);
  // The loader the script imports is preloaded beside it, not found a round trip later.
  await expect(page.locator('link[rel="modulepreload"][href$=".split.js"]')).toHaveCount(1);

  await chat.composer().pressSequentially("Why");
  await expect.poll(() => chunks.filter(own).sort()).toEqual(["messages.wasm", "turn.wasm"]);
  await chat.composer().fill("Why is the sky blue?");
  await chat.composer().press("Enter");
  await expect(chat.userBubbles().last()).toContainText("Why is the sky blue?");
  await chat.waitForTurnEnd();
  await expect(chat.thinkingBlocks().first().locator("summary")).toContainText(/Thought for/);
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  await expect(chat.answer().locator("li")).toHaveCount(2);
  await expect(chat.answer().locator("code")).toHaveText("2 + 2 = 4");

  // A second turn uses the same chunk: one fetch per page.
  await chat.send("And the sea?");
  await chat.waitForTurnEnd();
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  expect(chunks.filter(own).sort()).toEqual(["messages.wasm", "turn.wasm"]);
  expect(new Set(chunks).size).toBe(chunks.length);
  expect(errors).toEqual([]);
});

test("a saved chat opened on a fresh page fetches the bubbles without a keystroke", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  const chunks = chunkRequests(page);
  await page.reload();
  await chat.settled();
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  // This browser keeps a copy of the chat, so the reader of saved chats comes too.
  expect(chunks.filter(own).sort()).toEqual(["local_chats.wasm", "messages.wasm"]);
});

test("the reader of this browser's saved chats is fetched only by a page that finds one saved; a failed fetch says so and loses nothing", async ({ browser }) => {
  const { url, context, page, chunks, chat } = await browserHistoryPage(browser);
  expect(chunks).not.toContain("local_chats.wasm");
  await chat.send("[no-think] kept in this browser");
  await chat.waitForTurnEnd();
  const nav = page.getByRole("navigation", { name: EN.t("conversations") });
  await expect(nav.locator(".conversation-open", { hasText: "kept in this browser" })).toHaveCount(1);
  // The page lists what it saved itself; the reader is for a page that finds chats saved.
  expect(chunks).not.toContain("local_chats.wasm");

  // A page that cannot fetch it says so and still answers; the saved chat is not touched.
  const blocked = await context.newPage();
  await blocked.route(chunk("local_chats"), (route) => route.abort("connectionfailed"));
  const other = new ChatPage(blocked, url, EN);
  await other.goto();
  await other.settled();
  await expect(blocked.locator(".notice[data-kind=server]")).toContainText(EN.t("part_not_loaded"));
  await other.send("[no-think] a second chat");
  await other.waitForTurnEnd();
  await expect(other.answer()).not.toBeEmpty();

  await blocked.unroute(chunk("local_chats"));
  const reread = chunkRequests(blocked);
  await blocked.reload();
  await other.settled();
  await expect.poll(() => reread.filter((c) => c === "local_chats.wasm")).toHaveLength(1);
  const list = blocked.getByRole("navigation", { name: EN.t("conversations") });
  await expect(list.locator(".conversation-open", { hasText: "kept in this browser" })).toHaveCount(1);
  await expect(list.locator(".conversation-open", { hasText: "a second chat" })).toHaveCount(1);
  await context.close();
});

test("when the bubbles cannot be fetched the chat shows as plain text, and the next try renders it", async ({ page }) => {
  const chunks = chunkRequests(page);
  await page.route(MESSAGES, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  // Nothing is lost: the question, the reasoning and the whole answer are there, as text, and
  // nothing of it became markup; a notice says why.
  await expect(chat.userBubbles().last()).toContainText("Why is the sky blue?");
  await expect(chat.thinkingBlocks().first()).toContainText("pin down what is really being asked");
  const answer = chat.answer();
  await expect(answer).toContainText("**Short answer:** yes");
  await expect(answer).toContainText("Let me know if you want more detail.");
  await expect(answer.locator("strong")).toHaveCount(0);
  await expect(page.locator(".notice[data-kind=server]")).toContainText(chat.w.t("part_not_loaded"));
  expect(chunks.length).toBeGreaterThan(0);

  // The network is back: the next text typed fetches the chunk again and the chat renders.
  await page.unroute(MESSAGES);
  await chat.composer().pressSequentially("ok");
  await expect(answer.locator("strong")).toHaveText("Short answer:");
  await expect(answer).not.toContainText("**Short answer:**");
  await expect(answer.locator("li")).toHaveCount(2);
  await expect(chat.thinkingBlocks().first().locator("summary")).toContainText(/Thought for/);
});

test("opening the Export menu fetches chat files; a failed fetch says so and the next export works", async ({ page }) => {
  const chunks = chunkRequests(page);
  const FILES = chunk("chat_files");
  await page.route(FILES, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  expect(chunks.filter(own).sort()).toEqual(["messages.wasm", "turn.wasm"]);

  await page.getByText(chat.w.t("export"), { exact: true }).click();
  await expect.poll(() => chunks.filter((c) => c === "chat_files.wasm").length).toBeGreaterThan(0);
  await page.getByRole("button", { name: chat.w.t("download_json") }).click();
  await expect(page.locator(".notice[data-kind=server]")).toContainText(chat.w.t("part_not_loaded"));

  await page.unroute(FILES);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: chat.w.t("download_json") }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^ponder-.*\.json$/);
});

test("the settings' and the model picker's contents come with their chunk when a menu first opens; a failed fetch says so and the next opening shows them", async ({ page }) => {
  const chunks = chunkRequests(page);
  const PANELS = chunk("menu_panels");
  await page.route(PANELS, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.settled();
  expect(chunks.filter(own)).toEqual([]);
  const picker = page.locator(".model-picker");
  const search = page.getByLabel(chat.w.t("search_models"));

  await picker.locator("summary").click();
  await expect(page.locator(".notice[data-kind=server]")).toContainText(chat.w.t("part_not_loaded"));
  await expect(search).toHaveCount(0);
  await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo");

  await page.unroute(PANELS);
  await picker.locator("summary").click();
  await picker.locator("summary").click();
  await search.fill("mini");
  await picker.locator(".model-option").first().click();
  await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo mini (no reasoning)");
  await expect(picker).not.toHaveAttribute("open", "");

  // The settings share the chunk: no further fetch.
  const fetched = chunks.filter((c) => c === "menu_panels.wasm").length;
  expect(fetched).toBeGreaterThan(0);
  await page.locator("summary", { hasText: chat.w.t("settings") }).click();
  await expect(page.getByLabel(chat.w.t("language"))).toBeVisible();
  expect(chunks.filter((c) => c === "menu_panels.wasm")).toHaveLength(fetched);
});

test("a page with no chat to list fetches no chunk; the list's code comes with the first chat listed, and a failed fetch says so and loses nothing", async ({ browser }) => {
  // Chats in this browser only, in a fresh context: nothing to list at first.
  const url = SERVERS.browserHistory.url;
  const context = await browser.newContext({ baseURL: url, locale: "en-US" });
  const page = await context.newPage();
  const chunks = chunkRequests(page);
  await page.route(chunk("conversation_list"), (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page, url, EN);
  await chat.goto();
  await chat.settled();
  expect(chunks).toEqual([]);
  const nav = page.getByRole("navigation", { name: EN.t("conversations") });

  await chat.send("[no-think] keep me");
  await chat.waitForTurnEnd();
  await expect(page.locator(".notice[data-kind=server]")).toContainText(EN.t("part_not_loaded"));
  await expect(nav.locator(".conversation-item")).toHaveCount(0);
  expect(chunks.filter((c) => c === LIST).length).toBeGreaterThan(0);

  // Nothing was lost: the chat is saved, and listed once the chunk can be fetched.
  await page.unroute(chunk("conversation_list"));
  await page.reload();
  await expect(nav.locator(".conversation-open", { hasText: "keep me" })).toHaveCount(1);
  await expect(chat.userBubbles().last()).toContainText("keep me");
  await context.close();
});

test("the workspaces and the search form come once the page has hydrated with server-side history; a failed fetch says so, the chat still answers, and the next try shows them", async ({ page }) => {
  const chunks = chunkRequests(page);
  await page.route(chunk("server_sidebar"), (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.settled();
  const nav = page.getByRole("navigation", { name: chat.w.t("conversations") });
  await expect(page.locator(".notice[data-kind=server]")).toContainText(chat.w.t("part_not_loaded"));
  await expect(nav.locator(".workspace-menu")).toHaveCount(0);
  await expect(nav.getByRole("searchbox", { name: chat.w.t("search_chats") })).toHaveCount(0);
  expect(chunks.filter((c) => c === SERVER_PARTS).length).toBeGreaterThan(0);

  // The chat does not need them: a turn answers, and the list asked for again after it brings
  // the next try, which shows them.
  await page.unroute(chunk("server_sidebar"));
  await chat.send("[no-think] still here");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).not.toBeEmpty();
  await expect(nav.locator(".workspace-menu")).toBeVisible();
  await expect(nav.getByRole("searchbox", { name: chat.w.t("search_chats") })).toBeVisible();
});

test("a page without server-side history never fetches the workspaces and the search form", async ({ browser }) => {
  const { context, page, chunks, chat } = await browserHistoryPage(browser);
  await chat.send("[no-think] only here");
  await chat.waitForTurnEnd();
  await expect(page.getByRole("navigation", { name: EN.t("conversations") }).locator(".conversation-open", { hasText: "only here" })).toHaveCount(1);
  expect(chunks).not.toContain(SERVER_PARTS);
  await expect(page.locator(".workspace-menu")).toHaveCount(0);
  await context.close();
});

test.describe("in Japanese", () => {
  test.use({ locale: "ja" });
  const ja = new Words("ja");

  test("the page fetches its own language's words once, preloaded beside the script, and no other language's", async ({ browser }) => {
    // On a server without server-side history, whose page fetches no other chunk once hydrated
    // (the sidebar's server parts and the code they share would show here otherwise).
    const url = SERVERS.browserHistory.url;
    const context = await browser.newContext({ baseURL: url, locale: "ja" });
    const page = await context.newPage();
    const chunks = chunkRequests(page);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const chat = new ChatPage(page, url, ja);
    await chat.goto();
    await expect(page.locator('link[rel="preload"][href$=".words_ja.wasm"]')).toHaveCount(1);
    expect(chunks.filter(own)).toEqual(["words_ja.wasm"]);
    // The words need no code shared with another chunk: that would be a round trip after them.
    expect(chunks.filter((c) => c.startsWith("chunk_"))).toEqual([]);
    // Words the page writes after hydrating come from the fetched catalogue.
    await chat.send("Why is the sky blue?");
    const block = chat.thinkingBlocks().first();
    await expect(chat.summary(block)).toContainText(ja.re("thinking_live", { time: ja.liveSecondsSrc() }));
    await chat.waitForTurnEnd();
    await expect(chat.summary(block)).toHaveText(ja.thoughtRe(82));
    expect(chunks.filter(own).sort()).toEqual(["messages.wasm", "turn.wasm", "words_ja.wasm"]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("what the reader types while the page waits for its words stays in the box once it hydrates, and sends", async ({ page }) => {
    // The words' chunk is held until the reader has typed: the server's page takes keys at once.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\.words_ja\.wasm$/, async (route) => {
      await held;
      await route.continue();
    });
    const chat = new ChatPage(page, "", ja);
    await page.goto("/");
    const box = page.locator("textarea");
    await box.fill("Why is the sky blue?");
    await expect(page.locator(".chat-page[data-hydrated=true]")).toHaveCount(0);
    release();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(box).toHaveValue("Why is the sky blue?");
    await box.press("Enter");
    await chat.waitForTurnEnd();
    await expect(page.locator(".bubble.user")).toContainText("Why is the sky blue?");
    await expect(chat.answer()).toContainText("Short answer:");
  });

  test("when its words cannot be fetched the page still hydrates and answers, in English", async ({ page }) => {
    const chunks = chunkRequests(page);
    await page.route(chunk("words_ja"), (route) => route.abort("connectionfailed"));
    const chat = new ChatPage(page, "", EN);
    await page.goto("/");
    // The server wrote the page in Japanese; the page tries three times, then goes on.
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached({ timeout: 15_000 });
    // (The preload, then three tries: a browser may or may not hand the failed preload over.)
    expect(chunks.filter((c) => c === "words_ja.wasm").length).toBeGreaterThanOrEqual(3);
    await page.locator("textarea").fill("Why is the sky blue?");
    await page.locator("textarea").press("Enter");
    await chat.waitForTurnEnd();
    await expect(chat.summary(chat.thinkingBlocks().first())).toHaveText(EN.thoughtRe(82));
    await expect(chat.answer()).toContainText("Short answer:");
  });
});

test("when the stream's code cannot be fetched the turn ends with a retryable error, and Retry answers", async ({ page }) => {
  const chunks = chunkRequests(page);
  const blocked = chunk("turn");
  await page.route(blocked, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  await expect(chat.userBubbles().last()).toContainText("Why is the sky blue?");
  const unreachable = (chat.w.c.errors as unknown as Record<string, string>).ponder_unreachable;
  await expect(chat.lastAssistant()).toContainText(unreachable);
  await page.unroute(blocked);
  await chat.lastAssistant().getByRole("button", { name: chat.w.t("retry") }).click();
  await chat.waitForTurnEnd();
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  expect(chunks.filter((c) => c === "turn.wasm").length).toBeGreaterThanOrEqual(2);
});

test("the list's actions on the server are fetched at their first use, not before; a failed fetch says so and loses nothing", async ({ page }) => {
  const chunks = chunkRequests(page);
  const ACTIONS = chunk("list_actions");
  await page.route(ACTIONS, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  const w = chat.w;
  const nav = page.getByRole("navigation", { name: w.t("conversations") });
  // Other tests write to the same server: this one's chats have titles of their own.
  const question = `Why is the sky blue? ${Date.now().toString(36)}`;
  await chat.send(question);
  await chat.waitForTurnEnd();
  expect(chunks.filter(own).sort()).toEqual(["messages.wasm", "turn.wasm"]);
  const items = nav.locator(".conversation-open");
  await expect(items.filter({ hasText: question })).toHaveCount(1);

  // Choosing Rename starts fetching; it fails, and saving says a part could not be loaded.
  await chat.rowAction(question, "Rename");
  await expect.poll(() => chunks.filter((c) => c === "list_actions.wasm").length).toBeGreaterThan(0);
  await nav.getByLabel(w.t("new_title")).fill(`Sky colour ${question}`);
  await nav.getByLabel(w.t("new_title")).press("Enter");
  await expect(page.locator(".notice[data-kind=server]")).toContainText(w.t("part_not_loaded"));
  await expect(items.filter({ hasText: question })).toHaveText([question]);

  // The next try fetches again and the server keeps the new title.
  await page.unroute(ACTIONS);
  await chat.rowAction(question, "Rename");
  await nav.getByLabel(w.t("new_title")).fill(`Sky colour ${question}`);
  await nav.getByLabel(w.t("new_title")).press("Enter");
  await expect(items.filter({ hasText: question })).toHaveText([`Sky colour ${question}`]);

  // A workspace made from the sidebar is shown, with nothing in it yet.
  const workspace = `Research ${Date.now()}`;
  await nav.locator(".workspace-button").click();
  await nav.getByRole("button", { name: w.t("new_workspace") }).click();
  await nav.getByLabel(w.t("new_workspace_name")).fill(workspace);
  await nav.getByRole("button", { name: w.t("create") }).click();
  await expect(nav.locator(".workspace-current")).toHaveText(workspace);
  await expect(nav.locator(".workspace-menu")).not.toHaveAttribute("open");
  await expect(items).toHaveCount(0);

  // Kept on the server; a fresh load does not fetch the actions again.
  const fetched = chunks.filter((c) => c === "list_actions.wasm").length;
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await nav.locator(".workspace-button").click();
  await expect(nav.getByRole("list", { name: w.t("workspace") }).getByRole("button")).toContainText([workspace]);
  expect(chunks.filter((c) => c === "list_actions.wasm")).toHaveLength(fetched);
});

test("search's code is fetched when the box is focused; a failed fetch says so, keeps the query, and the next search answers", async ({ page }) => {
  const chunks = chunkRequests(page);
  const SEARCH = chunk("search");
  await page.route(SEARCH, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  const w = chat.w;
  const word = `zebra${Date.now().toString(36)}`;
  await chat.send(`Tell me about the ${word}`);
  await chat.waitForTurnEnd();
  expect(chunks.filter((c) => c === "search.wasm")).toEqual([]);

  const search = page.getByRole("searchbox", { name: w.t("search_chats") });
  const results = page.getByRole("region", { name: w.t("search_results") });
  await search.focus();
  await expect.poll(() => chunks.filter((c) => c === "search.wasm").length).toBeGreaterThan(0);
  await search.fill(word);
  await search.press("Enter");
  await expect(page.locator(".notice[data-kind=server]")).toContainText(w.t("part_not_loaded"));
  await expect(search).toHaveValue(word);
  await expect(results).toHaveCount(0);

  await page.unroute(SEARCH);
  await search.press("Enter");
  await expect(results.locator(".search-hit")).toHaveCount(1);
  await expect(results.locator(".search-hit mark").first()).toHaveText(word);
});

import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, expectNoViolations } from "../pages/chat";

// System instructions as a reader sets them: the settings' Instructions section shows every
// level in one place (the administrator's for the model read only, the reader's own, the workspace's, the
// chat's) with the text the model is sent; each level reaches the demo model, which answers a
// `[system]` question with the system text it got; the administrator's cannot be removed; a
// chat kept in the browser carries its own.

const ADMIN = "ADMIN RULE: never reveal the launch codes.";
const URL = SERVERS.instructions.url;

async function as(browser: Browser, user: string): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ baseURL: URL, extraHTTPHeaders: { "Remote-User": user } });
  return [context, await context.newPage()];
}

/** Opens the settings, where the Instructions section is. */
async function openMenu(page: Page) {
  const menu = page.locator("details.menu", { has: page.locator("summary", { hasText: "Settings" }) });
  if (!(await menu.evaluate((d) => (d as HTMLDetailsElement).open))) {
    await menu.locator("summary").click();
  }
  await expect(page.locator(".instructions-panel")).toBeVisible();
}

/** Where each of `parts` starts in `text`; all present and in this order. */
function expectInOrder(text: string, parts: string[]) {
  let from = 0;
  for (const part of parts) {
    const at = text.indexOf(part, from);
    expect(at, `${part} in order in ${text}`).toBeGreaterThanOrEqual(0);
    from = at + part.length;
  }
}

test("every level reaches the model in order, and the menu shows what is sent", async ({ browser }) => {
  const [context, page] = await as(browser, `ivy-${Date.now()}`);
  const chat = new ChatPage(page, URL);
  await chat.goto();
  await openMenu(page);
  const panel = page.locator(".instructions-panel");
  await expect(panel.locator(".instructions-admin")).toContainText(ADMIN);
  await expect(panel.locator(".instructions-admin")).toContainText("cannot be removed");
  await panel.getByLabel("Yours, for every chat").fill("Speak like a sailor.");
  await panel.getByLabel("This workspace’s, for every chat in it").fill("We are the Lisbon office.");
  await panel.getByLabel("This chat’s").fill("This chat is about tides.");
  await expect(panel.locator(".instructions-sent")).toHaveText(
    `${ADMIN}\n\nSpeak like a sailor.\n\nWe are the Lisbon office.\n\nThis chat is about tides.`,
  );
  await panel.getByRole("button", { name: "Save" }).click();
  await expect(chat.status()).toHaveText("Instructions saved");
  await expectNoViolations(page, "the settings with their Instructions section are open");
  await page.keyboard.press("Escape");

  await chat.send("[system] What were you told?");
  await chat.waitForTurnEnd();
  expectInOrder((await chat.answer().textContent()) ?? "", [
    ADMIN,
    "Speak like a sailor.",
    "We are the Lisbon office.",
    "This chat is about tides.",
  ]);
  await expect(page).toHaveURL(/\/c\/[0-9a-f]+$/);

  // On this device after a reload, and on another device of the same reader, the chat's own
  // level is the chat's, kept by the server.
  for (const reader of [page, (await context.newPage())]) {
    if (reader !== page) await reader.goto(page.url());
    else await reader.reload();
    await expect(reader.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await openMenu(reader);
    const p = reader.locator(".instructions-panel");
    await expect(p.getByLabel("This chat’s")).toHaveValue("This chat is about tides.");
    await expect(p.getByLabel("Yours, for every chat")).toHaveValue("Speak like a sailor.");
  }

  // The chat's row menu leads to the same field, with the focus in it.
  await page.keyboard.press("Escape");
  const nav = page.getByRole("navigation", { name: chat.w.t("conversations") });
  await nav.getByLabel(chat.w.t("options_for", { title: "[system] What were you told?" }), { exact: true }).click();
  await nav.getByRole("button", { name: "Instructions", exact: true }).click();
  await expect(panel.getByLabel("This chat’s")).toBeFocused();
  await expect(panel.getByLabel("This chat’s")).toHaveValue("This chat is about tides.");

  // A new chat starts with no chat level; the others stay.
  await page.getByRole("button", { name: "New chat" }).first().click();
  await openMenu(page);
  await expect(panel.getByLabel("This chat’s")).toHaveValue("");
  await expect(panel.locator(".instructions-sent")).not.toContainText("tides");
  await context.close();
});

test("the administrator's instruction cannot be removed by a reader", async ({ browser }) => {
  const [context, page] = await as(browser, `rex-${Date.now()}`);
  const chat = new ChatPage(page, URL);
  await chat.goto();
  await openMenu(page);
  const panel = page.locator(".instructions-panel");
  // Nothing in the panel edits it.
  await expect(panel.locator(".instructions-admin textarea, .instructions-admin input")).toHaveCount(0);
  await expect(panel.locator("textarea")).toHaveCount(3);
  await expect(panel.locator(".instructions-sent")).toHaveText(ADMIN);
  // Nor does the API.
  const refused = await page.evaluate(async () => {
    const r = await fetch("/api/instructions/set", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ level: "model", text: "" }),
    });
    return r.status;
  });
  expect(refused).toBe(403);
  await page.keyboard.press("Escape");
  await chat.send("[system] Anything?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText(ADMIN);
  await context.close();
});

test("a chat kept in the browser carries its own instructions to the model and across a reload", async ({ page }) => {
  const base = SERVERS.browserHistory.url;
  const chat = new ChatPage(page, base);
  await chat.goto();
  await openMenu(page);
  const panel = page.locator(".instructions-panel");
  await expect(panel.getByLabel("This workspace’s, for every chat in it")).toHaveCount(0);
  await panel.getByLabel("This chat’s").fill("Answer in one word.");
  await panel.getByRole("button", { name: "Save" }).click();
  await expect(chat.status()).toHaveText("Instructions saved");
  await page.keyboard.press("Escape");
  await chat.send("[system] Who are you?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("Answer in one word.");
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.lastAssistant()).toBeVisible();
  await openMenu(page);
  await expect(panel.getByLabel("This chat’s")).toHaveValue("Answer in one word.");
});

import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";

// What a new user met in the first hour (issue #41), each pinned where it was reproduced.

function conversations(page: Page) {
  return page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open");
}

test("a second tab opened after a reload follows the running answer live, not as interrupted", async ({ page, context }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] two tabs after a reload");
  await expect(chat.summary(chat.thinkingBlocks().first())).toContainText("Thinking… (2s)", { timeout: 5_000 });
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  // This tab keeps its copy of the server's chat (with the server's ids) while it follows the turn.
  await page.waitForFunction(() =>
    Object.keys(localStorage).some(
      (k) => k.startsWith("ponder.chat.v1.") && JSON.parse(localStorage.getItem(k) ?? "{}").server_copy === true,
    ),
  );

  const tab = await context.newPage();
  const second = new ChatPage(tab);
  await second.goto();
  await expect(second.userBubbles().first()).toContainText("two tabs after a reload");
  await expect(second.thinkingBlocks().first()).toHaveClass(/streaming/);
  await expect(second.lastAssistant().locator(".error-message")).toHaveCount(0);
  await expect(second.stopButton()).toBeVisible();
  await expect(second.answer()).toContainText("Let me know if you want more detail.", { timeout: 25_000 });
  await second.waitForTurnEnd();
  await expect(second.lastAssistant().locator(".error-message")).toHaveCount(0);
  await expect(second.summary(second.thinkingBlocks().first())).toContainText(/Thought for \d/);
  await chat.waitForTurnEnd();
});

test("a new chat is listed once while its first answer streams", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] listed once");
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  // Past the first throttled save under the server's id.
  await expect(chat.summary(chat.thinkingBlocks().first())).toContainText("Thinking… (2s)", { timeout: 5_000 });
  await expect(conversations(page).filter({ hasText: "listed once" })).toHaveCount(1);
  await chat.stopButton().click();
  await expect(conversations(page).filter({ hasText: "listed once" })).toHaveCount(1);
});

test("the browser's own copy of a server chat is never offered for import", async ({ page, context }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("a chat kept on the server");
  await chat.waitForTurnEnd();
  await chat.savedContains("a chat kept on the server");
  const marked = await page.evaluate(() =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith("ponder.chat.v1."))
      .map((k) => JSON.parse(localStorage.getItem(k) ?? "{}").server_copy),
  );
  expect(marked.length).toBeGreaterThan(0);
  expect(marked.every((m) => m === true)).toBe(true);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.userBubbles().first()).toContainText("a chat kept on the server");
  await expect(page.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
  const tab = await context.newPage();
  await new ChatPage(tab).goto();
  await expect(tab.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
});

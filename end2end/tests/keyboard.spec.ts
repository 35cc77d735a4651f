import { expect, test } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Every keyboard shortcut the sheet lists, pressed as a reader would. `ControlOrMeta` is Ctrl
// here and Command on Apple's systems, as the page reads it.

test.describe("keyboard shortcuts", () => {
  test("? opens the sheet (not while typing), Escape closes it", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.composer().fill("what is 2?");
    await expect(page.locator("dialog.shortcuts-sheet[open]")).toHaveCount(0);
    await chat.composer().fill("");
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("?");
    const sheet = page.getByRole("dialog", { name: chat.w.t("shortcuts_title") });
    await expect(sheet).toBeVisible();
    await expect(sheet.locator("tr")).toHaveCount(8);
    await expect(sheet).toContainText(chat.w.t("compare_models"));
    await expect(sheet).toContainText(chat.w.t("shortcut_thinking"));
    await expectNoViolations(page, "the shortcuts sheet is open");
    await page.keyboard.press("Escape");
    await expect(sheet).toBeHidden();
  });

  test("new chat, search, the message field and the latest thinking block", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    await expect(page).toHaveURL(/\/c\/[0-9a-f]+$/);

    const block = chat.thinkingBlocks().last();
    const open = () => block.evaluate((d) => (d as HTMLDetailsElement).open);
    const before = await open();
    await page.keyboard.press("ControlOrMeta+Shift+E");
    await expect.poll(open).toBe(!before);
    await page.keyboard.press("ControlOrMeta+Shift+E");
    await expect.poll(open).toBe(before);

    await page.keyboard.press("ControlOrMeta+K");
    await expect(page.getByRole("searchbox", { name: chat.w.t("search_chats") })).toBeFocused();
    await page.keyboard.press("Shift+Escape");
    await expect(chat.composer()).toBeFocused();

    await page.keyboard.press("ControlOrMeta+Shift+O");
    await expect(chat.assistantBubbles()).toHaveCount(0);
    await expect(page).not.toHaveURL(/\/c\//);
    await expect(chat.composer()).toBeFocused();
  });

  test("Esc stops the answer being written; Ctrl/Cmd+Shift+Enter answers again", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[long] write a lot");
    await expect(chat.answer()).toContainText("A longer answer");
    await page.keyboard.press("Escape");
    await expect(chat.lastAssistant().locator(".stopped-note")).toHaveText("Stopped.");
    await chat.waitForTurnEnd();

    await page.keyboard.press("ControlOrMeta+Shift+Enter");
    const versions = chat.lastAssistant().getByRole("group", { name: chat.w.t("answer_versions") });
    await expect(versions).toContainText(chat.w.t("version_of", { n: chat.w.num(2), total: chat.w.num(2) }));
    await page.keyboard.press("Escape");
    await chat.waitForTurnEnd();
  });
});

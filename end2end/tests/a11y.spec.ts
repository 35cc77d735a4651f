import { expect, test } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";

for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`accessibility (${colorScheme})`, () => {
    test.use({ colorScheme });

    test("thinking block: streaming, collapsed, expanded", async ({ page }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      await expectNoViolations(page, "empty");
      await chat.send("[long-think] think");
      const block = chat.thinkingBlocks().first();
      await expect(block).toHaveClass(/streaming/);
      await expectNoViolations(page, "streaming");
      await chat.waitForTurnEnd();
      expect(await chat.isOpen(block)).toBe(false);
      await expectNoViolations(page, "collapsed");
      await chat.openBlock(block);
      await expectNoViolations(page, "expanded");
    });

    test("bubbles: user, assistant with code, error, RTL; menus open", async ({ page }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      await chat.send("[long] with code and a table");
      await chat.waitForTurnEnd();
      await chat.send("[error] fail mid-answer");
      await chat.waitForTurnEnd();
      await expect(chat.lastAssistant()).toHaveClass(/error/);
      await expectNoViolations(page, "error");
      await page.getByText("Settings", { exact: true }).click();
      await page.getByText("Export", { exact: true }).click();
      await expectNoViolations(page, "menus open");
      await page.evaluate(() => document.documentElement.setAttribute("dir", "rtl"));
      await chat.send("مرحبا [no-think]");
      await chat.waitForTurnEnd();
      await expectNoViolations(page, "rtl");
    });
  });
}

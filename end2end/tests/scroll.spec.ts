import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";

test.describe("scrolling", () => {
  test("collapsing a block never moves what the reader is looking at", async ({ page }) => {
    await page.setViewportSize({ width: 900, height: 600 });
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[long] first");
    await chat.waitForTurnEnd();
    await chat.send("[slow] second");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    // The reader scrolls up to read the first answer's last heading while the second turn thinks.
    const target = chat.assistantBubbles().first().getByRole("heading", { name: "Part 12" });
    await target.scrollIntoViewIfNeeded();
    await page.mouse.wheel(0, -50);
    const before = (await target.boundingBox())!.y;
    await expect(chat.answer()).toContainText("Here is what I found");
    await expect.poll(() => chat.isOpen(block)).toBe(false);
    await chat.settled();
    const after = (await target.boundingBox())!.y;
    expect(Math.abs(after - before)).toBeLessThanOrEqual(2);
    await expect(page.getByRole("button", { name: "↓ Jump to latest" })).toBeVisible();
  });

  test("the conversation follows new text while the reader is at the bottom", async ({ page }) => {
    await page.setViewportSize({ width: 900, height: 600 });
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[long] write");
    await chat.waitForTurnEnd();
    const gap = await chat.conversation().evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
    expect(gap).toBeLessThan(50);
    await expect(page.getByRole("button", { name: "↓ Jump to latest" })).toHaveCount(0);
  });

  test("scrolling up stops following; Jump to latest goes back down", async ({ page }) => {
    await page.setViewportSize({ width: 900, height: 600 });
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[long] write");
    await expect(chat.answer()).toContainText("Part 2");
    await chat.conversation().evaluate((el) => el.scrollTo({ top: 0 }));
    const jump = page.getByRole("button", { name: "↓ Jump to latest" });
    await expect(jump).toBeVisible();
    await chat.waitForTurnEnd();
    expect(await chat.conversation().evaluate((el) => el.scrollTop)).toBeLessThan(100);
    await jump.click();
    await expect
      .poll(() => chat.conversation().evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight))
      .toBeLessThan(50);
  });
});

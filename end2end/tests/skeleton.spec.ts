import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";

test("a thinking turn fills the block, collapses it on the answer, and shows the answer", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");

  await expect(chat.userBubbles().last()).toContainText("Why is the sky blue?");
  const block = chat.thinkingBlocks().first();
  await expect(block).toBeVisible();
  await expect(block).toHaveAttribute("open", "");
  await expect(block.locator("summary")).toContainText("Thinking…");
  await expect(block.locator(".thinking-text")).toContainText("pin down what is really being asked");

  await expect(chat.answer()).toContainText("Here is what I found");
  await expect(block).not.toHaveAttribute("open", "");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("Let me know if you want more detail.");
  await expect(block.locator("summary")).toContainText(/Thought for \d+\.\ds · \d+ words/);
});

import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";

// The demo model lists ponder-demo (thinking on/off and effort), ponder-demo-deep (effort,
// always thinks) and ponder-demo-mini (no reasoning); every control is checked end to end.
test.describe("models and reasoning controls", () => {
  let chat: ChatPage;

  test.beforeEach(async ({ page }) => {
    chat = new ChatPage(page);
    await chat.goto();
  });

  test("the picker names the model, filters the list and shows only the controls that apply", async ({ page }) => {
    const picker = page.locator(".model-picker");
    await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo");
    await expect(page.getByRole("button", { name: "Thinking on" })).toBeVisible();
    await expect(page.getByLabel("Effort")).toBeVisible();
    await picker.locator("summary").click();
    await page.getByLabel("Search models").fill("mini");
    const options = picker.locator(".model-option");
    await expect(options).toHaveCount(1);
    await options.first().click();
    await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo mini (no reasoning)");
    await expect(page.getByRole("button", { name: /Thinking (on|off)/ })).toHaveCount(0);
    await expect(page.getByLabel("Effort")).toHaveCount(0);
    await chat.send("[long-think] hello");
    await chat.waitForTurnEnd();
    await expect(chat.thinkingBlocks()).toHaveCount(0);
    await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo-mini");
    await picker.locator("summary").click();
    await page.getByLabel("Search models").fill("deep");
    await picker.locator(".model-option").first().click();
    await expect(page.getByRole("button", { name: /Thinking (on|off)/ })).toHaveCount(0);
    await expect(page.getByLabel("Effort")).toBeVisible();
  });

  test("thinking off answers without a block; the effort changes how long it thinks", async ({ page }) => {
    await page.getByRole("button", { name: "Thinking on" }).click();
    await expect(page.getByRole("button", { name: "Thinking off" })).toHaveAttribute("aria-pressed", "false");
    await chat.send("hello");
    await chat.waitForTurnEnd();
    await expect(chat.thinkingBlocks()).toHaveCount(0);
    await expect(chat.answer()).toContainText("Here is what I found");
    await page.getByRole("button", { name: "Thinking off" }).click();
    await page.getByLabel("Effort").selectOption("high");
    await chat.send("again");
    await chat.waitForTurnEnd();
    await expect(chat.thinkingBlocks().first().locator(".thinking-text")).toContainText("Thinking harder", { useInnerText: false });
  });

  test("Answer now ends the thinking at once and the same message answers", async ({ page }) => {
    await chat.send("[long-think] why?");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    const answerNow = page.getByRole("button", { name: "Answer now" });
    await answerNow.click();
    await chat.waitForTurnEnd();
    await expect(chat.summary(block)).toHaveText(/cut short/);
    await expect(chat.answer()).toContainText("Here is what I found");
    await expect(chat.assistantBubbles()).toHaveCount(1);
    await expect(chat.thinkingBlocks()).toHaveCount(1);
    await expect(answerNow).toHaveCount(0);
    await page.reload();
    await expect(chat.summary(chat.thinkingBlocks().first())).toHaveText(/cut short/);
  });

  test("a conversation remembers its model across a reload", async ({ page }) => {
    const picker = page.locator(".model-picker");
    await picker.locator("summary").click();
    await page.getByLabel("Search models").fill("deep");
    await picker.locator(".model-option").first().click();
    await chat.send("[no-think] remember me");
    await chat.waitForTurnEnd();
    await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo-deep");
    await page.reload();
    await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo-deep");
    await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo (deep, always thinks)");
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(picker.locator("summary")).toHaveAccessibleName("Model: Ponder demo (deep, always thinks)");
  });

  test("Think more answers again at a higher effort, as a new version, leaving the composer's effort", async ({ page }) => {
    await page.getByLabel("Effort").selectOption("low");
    await chat.send("why?");
    await chat.waitForTurnEnd();
    const short = await chat.thinkingBlocks().first().locator(".thinking-text").textContent();
    await chat.lastAssistant().getByRole("button", { name: "Think more" }).click();
    await chat.waitForTurnEnd();
    await expect(chat.lastAssistant().locator(".version-label")).toHaveText("2/2");
    await expect(page.getByLabel("Effort")).toHaveValue("low", { timeout: 1000 });
    const longer = await chat.thinkingBlocks().first().locator(".thinking-text").textContent();
    expect((longer ?? "").length).toBeGreaterThan((short ?? "").length);
  });
});

import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { SERVERS, type Server } from "../servers";

// One thinking turn through each provider adapter, against the demo model speaking that
// provider's wire format: the reasoning lands in the thinking block, never in the answer.

const REASONING = "pin down what is really being asked";
const ANSWER_END = "Let me know if you want more detail.";

const MODES: { name: string; server: Server; prompt: string; origin?: string }[] = [
  { name: "openai (Chat Completions)", server: SERVERS.main, prompt: "Why is the sky blue?" },
  { name: "anthropic (Messages)", server: SERVERS.anthropic, prompt: "Why is the sky blue?" },
  {
    name: "anthropic Opus 4.7 (adaptive thinking, summarized)",
    server: SERVERS.opus,
    prompt: "Why is the sky blue?",
    origin: "summary",
  },
  { name: "responses (OpenAI Responses)", server: SERVERS.responses, prompt: "Why is the sky blue?", origin: "summary" },
  { name: "gemini (streamGenerateContent)", server: SERVERS.gemini, prompt: "Why is the sky blue?", origin: "summary" },
  { name: "ollama (native /api/chat)", server: SERVERS.ollama, prompt: "Why is the sky blue?" },
  { name: "openai with inline <think> tags", server: SERVERS.main, prompt: "[think-tags] Why is the sky blue?" },
  {
    name: "openai with only </think> (reclassified)",
    server: SERVERS.main,
    prompt: "[think-open] Why is the sky blue?",
  },
  {
    name: "openai with only </think> and PONDER_THINK_START",
    server: SERVERS.thinkStart,
    prompt: "[think-open] Why is the sky blue?",
  },
];

for (const mode of MODES) {
  test(`${mode.name}: renders thinking and answer`, async ({ page }) => {
    const chat = new ChatPage(page, mode.server.url);
    await chat.goto();
    await chat.send(mode.prompt);

    const block = chat.thinkingBlocks().first();
    await expect(block).toBeVisible();
    await chat.waitForTurnEnd();

    await expect(chat.thinkingBlocks()).toHaveCount(1);
    await expect(block.locator(".thinking-text")).toContainText(REASONING);
    await expect(block.locator("summary")).toContainText(/Thought( for \d+\.\ds)? · \d+ words/);
    await expect(chat.answer()).toContainText("Here is what I found");
    await expect(chat.answer()).toContainText(ANSWER_END);
    await expect(chat.answer()).not.toContainText(REASONING);
    await expect(chat.answer()).not.toContainText("think>");
    if (mode.origin) {
      await expect(block.locator(".thinking-origin")).toHaveText(mode.origin);
      await chat.summary(block).click();
      await expect(block.locator(".thinking-summary-note")).toHaveText("Summary of the model's reasoning");
    } else {
      await expect(block.locator(".thinking-origin")).toHaveCount(0);
    }
  });
}

// Reasoning without readable text: Anthropic's redacted_thinking (encrypted for safety) is
// "redacted"; a display the provider omitted, or a reasoning item without a summary, is
// "reasoning hidden by the provider". Either way the clock runs and nothing expands.
const WITHHELD: { name: string; server: Server; prompt: string; origin: string }[] = [
  { name: "anthropic redacted_thinking", server: SERVERS.anthropic, prompt: "[redacted] Why is the sky blue?", origin: "redacted" },
  { name: "Opus 4.7 omitted display", server: SERVERS.opus, prompt: "[hidden] Why is the sky blue?", origin: "reasoning hidden by the provider" },
  { name: "responses without a summary", server: SERVERS.responses, prompt: "[redacted] Why is the sky blue?", origin: "reasoning hidden by the provider" },
];

for (const mode of WITHHELD) {
  test(`${mode.name}: the block still shows that the model thought, and for how long, with nothing to expand`, async ({
    page,
  }) => {
    const chat = new ChatPage(page, mode.server.url);
    await chat.goto();
    await chat.send(mode.prompt);

    const block = chat.thinkingBlocks().first();
    await expect(block.locator(".thinking-label")).toContainText("Thinking…");
    await chat.waitForTurnEnd();
    await expect(block.locator(".thinking-label")).toHaveText(/^Thought for \d+\.\ds$/);
    await expect(block.locator(".thinking-origin")).toHaveText(mode.origin);
    await expect(block.locator("summary")).toHaveCount(0);
    await expect(block.locator(".thinking-text")).toHaveCount(0);
    await expect(chat.answer()).toContainText(ANSWER_END);
  });
}

// Reasoning state goes back to the model the next turn; when the provider refuses it, the turn
// says so and one click sends it again without it.
test("Opus 4.7: a refused replay of earlier reasoning offers a send without it, which answers", async ({ page }) => {
  const chat = new ChatPage(page, SERVERS.opus.url);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText(ANSWER_END);

  await chat.send("[reject-replay] And at sunset?");
  await chat.waitForTurnEnd();
  const bubble = chat.lastAssistant();
  await expect(bubble.locator(".error-message")).toContainText(
    "refused the reasoning carried over from earlier answers",
  );
  const without = bubble.getByRole("button", { name: "Send again without the earlier reasoning" });
  await expect(without).toBeVisible();
  await without.click();
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText(ANSWER_END);
  await expect(bubble.locator(".error-message")).toHaveCount(0);
  await expect(chat.assistantBubbles()).toHaveCount(2);
});

// The composer offers the effort levels the model takes: Opus 4.7 has xhigh and max, and a turn
// at xhigh is what the API accepts.
test("Opus 4.7: the effort menu lists its five levels and xhigh answers", async ({ page }) => {
  const chat = new ChatPage(page, SERVERS.opus.url);
  await chat.goto();
  const effort = page.getByLabel("Effort");
  await expect(effort.locator("option")).toHaveText(["Default", "Low", "Medium", "High", "Extra high", "Max"]);
  await effort.selectOption("xhigh");
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText(ANSWER_END);
  await expect(chat.thinkingBlocks().first().locator(".thinking-origin")).toHaveText("summary");
});

import { expect, test } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage } from "../pages/chat";

// A turn runs on the server whether or not a page watches it: a reload, another chat and back,
// or a second browser all find it still thinking, live, in the same block; Stop from any of them
// stops it for all.

async function demoStats(url: string) {
  const response = await fetch(`${url}/demo/stats`);
  return (await response.json()) as { active: number; disconnected: number };
}

/** The seconds a live block's label shows ("Thinking… (12s)"). */
async function liveSeconds(chat: ChatPage) {
  const label = (await chat.summary(chat.thinkingBlocks().first()).textContent()) ?? "";
  const match = /Thinking… \((\d+)s\)/.exec(label);
  expect(match, `a live label: ${label}`).not.toBeNull();
  return Number(match![1]);
}

test("a reload while it thinks keeps streaming in the same block, timed from the turn's start", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] keep going after a reload");
  const block = chat.thinkingBlocks().first();
  await expect(block).toHaveClass(/streaming/);
  // Two seconds in (a busy page may show 1s, then 3s: the clock counts from the turn's start).
  await expect
    .poll(async () => {
      const label = (await chat.summary(block).textContent()) ?? "";
      return Number(/Thinking… \((\d+)s\)/.exec(label)?.[1] ?? -1);
    }, { timeout: 5_000 })
    .toBeGreaterThanOrEqual(2);
  const before = (await block.locator(".thinking-peek, .thinking-text").first().textContent()) ?? "";

  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  // One answer, still thinking, its clock counted from when the turn began, not the reload.
  await expect(chat.assistantBubbles()).toHaveCount(1);
  const again = chat.thinkingBlocks().first();
  await expect(again).toHaveClass(/streaming/);
  expect(await liveSeconds(chat)).toBeGreaterThanOrEqual(2);
  await expect(chat.stopButton()).toBeVisible();
  // It goes on live: the block grows, ends with its time, and the answer follows.
  await expect(chat.summary(again)).toContainText(/Thought for \d/, { timeout: 20_000 });
  await expect(chat.answer()).toContainText("Let me know if you want more detail.", { timeout: 20_000 });
  await chat.waitForTurnEnd();
  await chat.summary(again).click();
  const text = (await again.locator(".thinking-text").textContent()) ?? "";
  expect(text).toContain("Step 12");
  expect(text.length).toBeGreaterThan(before.length);
  await expect(chat.lastAssistant().locator(".error-message")).toHaveCount(0);
  await expect(chat.assistantBubbles()).toHaveCount(1);
});

test("leaving for another chat does not stop the turn; coming back finds it live", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] still here when I come back");
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  const disconnected = (await demoStats(SERVERS.main.demoUrl)).disconnected;
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(chat.assistantBubbles()).toHaveCount(0);
  await page
    .getByRole("navigation", { name: "Conversations" })
    .locator(".conversation-open", { hasText: "still here when I come back" })
    .click();
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  await expect(chat.answer()).toContainText("Let me know if you want more detail.", { timeout: 20_000 });
  await chat.waitForTurnEnd();
  expect((await demoStats(SERVERS.main.demoUrl)).disconnected).toBe(disconnected);
});

test("a second browser sees the same live turn, and Stop from it stops both", async ({ browser, page }) => {
  const first = new ChatPage(page);
  await first.goto();
  await first.send("[long-think] watched from two places");
  await expect(first.thinkingBlocks().first()).toHaveClass(/streaming/);

  const context = await browser.newContext();
  const other = await context.newPage();
  const second = new ChatPage(other);
  await second.goto();
  await other
    .getByRole("navigation", { name: "Conversations" })
    .locator(".conversation-open", { hasText: "watched from two places" })
    .click();
  await expect(second.userBubbles().first()).toContainText("watched from two places");
  const block = second.thinkingBlocks().first();
  await expect(block).toHaveClass(/streaming/);
  // Live there too: its reasoning keeps arriving.
  await second.summary(block).click();
  const seen = ((await block.locator(".thinking-text").textContent()) ?? "").length;
  await expect.poll(async () => ((await block.locator(".thinking-text").textContent()) ?? "").length).toBeGreaterThan(seen);

  const before = await demoStats(SERVERS.main.demoUrl);
  await second.stopButton().click();
  for (const chat of [second, first]) {
    await expect(chat.lastAssistant().locator(".stopped-note")).toHaveText("Stopped.");
    // Interrupted if the Stop came while it thought, done if the answer had begun (a loaded
    // machine can get there first): settled either way, and the same in both browsers.
    await expect(chat.thinkingBlocks().first()).toHaveClass(/\b(interrupted|done)\b/);
    await expect(chat.sendButton()).toBeVisible();
  }
  const settledClass = await second.thinkingBlocks().first().getAttribute("class");
  await expect(first.thinkingBlocks().first()).toHaveAttribute("class", settledClass ?? "");
  await expect
    .poll(async () => (await demoStats(SERVERS.main.demoUrl)).disconnected, { timeout: 1_000, intervals: [50] })
    .toBeGreaterThan(before.disconnected);
  // Stored stopped: a reload in either shows it so, not running.
  await other.reload();
  await expect(other.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(second.lastAssistant().locator(".stopped-note")).toHaveText("Stopped.");
  await expect(second.stopButton()).toHaveCount(0);
  await context.close();
});

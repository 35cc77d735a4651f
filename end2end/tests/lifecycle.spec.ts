import { expect, test } from "@playwright/test";
import { ChatPage, demoStats } from "../pages/chat";
import { SERVERS } from "../servers";

test.describe("the turn lifecycle", () => {
  test("while thinking, send is replaced by Stop and the status says Thinking…", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("Why is the sky blue?");
    await expect(chat.stopButton()).toBeVisible();
    await expect(chat.sendButton()).toHaveCount(0);
    await expect(chat.status()).toHaveText("Thinking…");
    await expect(chat.lastAssistant().locator(".typing")).toHaveCount(0);
    await chat.waitForTurnEnd();
    await expect(chat.sendButton()).toBeVisible();
  });

  test("thinking without an answer shows the fallback with Retry", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[think-only]");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble.locator(".fallback")).toHaveText("I thought about it but didn't reach an answer — try again?");
    await expect(bubble.getByRole("button", { name: "Retry" })).toBeVisible();
    await expect(chat.summary(chat.thinkingBlocks().first())).toContainText("Thought");
  });

  test("an upstream error mid-answer keeps the partial answer and offers Retry, which works", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    // The demo model fails the first answer to this message and answers the next.
    await chat.send(`[error-once] go ${Date.now()}`);
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble).toHaveClass(/error/);
    await expect(bubble.locator(".error-message")).toContainText("overloaded");
    await expect(chat.answer()).toContainText("Partial answer");
    expect(await bubble.locator(".bubble-main").evaluate((el) => getComputedStyle(el).borderTopWidth)).toBe("2px");
    await bubble.getByRole("button", { name: "Retry" }).click();
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Here is what I found");
    await expect(bubble).not.toHaveClass(/error/);
  });

  test("stream-drop guard: a stream kept nowhere that ends with no done or error keeps what arrived and says so", async ({ page }) => {
    // Chats in the browser only: the turn is the connection's, so there is nothing to reconnect to.
    const chat = new ChatPage(page, SERVERS.browserHistory.url);
    await chat.goto();
    await page.route("**/api/chat", async (route) => {
      const response = await route.fetch();
      const body = await response.text();
      const cut = body.slice(0, body.indexOf('"type":"delta"') + 200);
      const truncated = cut.slice(0, cut.lastIndexOf("\n\n") + 2);
      await route.fulfill({ response, body: truncated });
    });
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble.locator(".error-message")).toHaveText("The stream ended before my answer finished — try again?");
    await expect(chat.answer()).toContainText("Here");
    await expect(chat.thinkingBlocks().first().locator(".thinking-text")).toContainText("pin down");
    await expect(bubble.getByRole("button", { name: "Retry" })).toBeVisible();
  });

  test("a stored turn whose connection breaks mid-answer is picked up again: nothing missed, nothing twice", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    let joins = 0;
    page.on("request", (request) => {
      if (request.url().includes("/api/turn/events")) joins += 1;
    });
    // The first response breaks right after the answer began, as a lost connection does.
    await page.route("**/api/chat", async (route) => {
      const response = await route.fetch();
      const body = await response.text();
      const cut = body.slice(0, body.indexOf('"type":"delta"') + 200);
      const truncated = cut.slice(0, cut.lastIndexOf("\n\n") + 2);
      await route.fulfill({ response, body: truncated });
    });
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble.locator(".error-message")).toHaveCount(0);
    await expect(chat.answer()).toHaveText(/^Here is what I found, step by step\.[\s\S]*Let me know if you want more detail\.\s*$/);
    expect((await chat.answer().textContent())!.match(/Here is what I found/g)).toHaveLength(1);
    await chat.summary(chat.thinkingBlocks().first()).click();
    expect(((await chat.thinkingBlocks().first().locator(".thinking-text").textContent()) ?? "").match(/pin down/g)).toHaveLength(1);
    expect(joins).toBeGreaterThan(0);
  });

  test("pre-token guard: no frame within the (shortened) guard is an error with Retry", async ({ page }) => {
    const chat = new ChatPage(page, SERVERS.guards.url);
    await chat.goto();
    await chat.send("[stall] hello?");
    const bubble = chat.lastAssistant();
    await expect(bubble.locator(".error-message")).toHaveText("No response from the model within 2 s — try again?", {
      timeout: 6_000,
    });
    await expect(bubble.getByRole("button", { name: "Retry" })).toBeVisible();
  });

  test("a block whose stream ends without thinking_end freezes its time and shows it was interrupted", async ({ page }) => {
    const chat = new ChatPage(page, SERVERS.guards.url);
    await chat.goto();
    await chat.send("[stall-mid]");
    await chat.waitForTurnEnd();
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/interrupted/);
    await expect(chat.summary(block)).toContainText("Thinking stopped");
    const label = await chat.summary(block).textContent();
    // Not a synchronisation: the check is that the label stays frozen across two of the
    // page's one-second ticks, so time has to pass.
    await page.waitForTimeout(2_200);
    expect(await chat.summary(block).textContent()).toBe(label);
    await expect(chat.summary(block)).not.toContainText("Thinking…");
  });

  for (const when of ["before the first token", "while thinking", "during the answer"] as const) {
    test(`Stop ${when}: the turn ends at once, what arrived stays, and the upstream sees the disconnect within 1 s`, async ({
      page,
    }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      const before = await demoStats(page, SERVERS.main.demoUrl);
      await chat.send(
        when === "before the first token" ? "[slow] wait" : when === "while thinking" ? "[long-think] write a lot" : "[long] write a lot",
      );
      if (when === "while thinking") await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
      if (when === "during the answer") await expect(chat.answer()).toContainText("A longer answer");
      if (when === "before the first token") {
        await expect.poll(async () => (await demoStats(page, SERVERS.main.demoUrl)).active).toBeGreaterThan(before.active);
      }
      const answerBefore = (await chat.answer().textContent()) ?? "";
      const stoppedAt = Date.now();
      await chat.stopButton().click();
      await expect(chat.lastAssistant().locator(".stopped-note")).toHaveText("Stopped.");
      await expect
        .poll(async () => (await demoStats(page, SERVERS.main.demoUrl)).disconnected, { timeout: 1_000, intervals: [50] })
        .toBeGreaterThan(before.disconnected);
      expect(Date.now() - stoppedAt).toBeLessThan(1_500);
      expect(((await chat.answer().textContent()) ?? "").length).toBeGreaterThanOrEqual(answerBefore.length);
      if (when === "while thinking") await expect(chat.thinkingBlocks().first()).toHaveClass(/interrupted/);
      await expect(chat.sendButton()).toBeVisible();
    });
  }

  test("kill switch: PONDER_STREAM_THINKING=0 shows no block, and the answer is unchanged", async ({ page }) => {
    const chat = new ChatPage(page, SERVERS.noThinking.url);
    await chat.goto();
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Let me know if you want more detail.");
    await expect(page.locator(".thinking")).toHaveCount(0);
  });
});

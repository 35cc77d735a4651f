import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";

// Things a new user trips over, each pinned by a test (issue: the chat feels like a finished product).

test("menus are popovers: one open at a time, Escape and a press outside close them, focus returns", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const menu = (name: string) => page.locator("details.menu", { has: page.locator("summary", { hasText: name }) });
  const [settings, exporter] = [menu("Settings"), menu("Export")];

  await settings.locator("summary").click();
  await expect(settings).toHaveAttribute("open");
  // Opening Export closes Settings, so nothing covers Export's buttons.
  await exporter.locator("summary").click();
  await expect(exporter).toHaveAttribute("open");
  await expect(settings).not.toHaveAttribute("open");
  await exporter.getByRole("checkbox", { name: "Include thinking" }).click({ trial: true });

  // Escape closes it and gives focus back to its button.
  await page.keyboard.press("Escape");
  await expect(exporter).not.toHaveAttribute("open");
  await expect(exporter.locator("summary")).toBeFocused();

  // A click inside keeps it open; a press anywhere else closes it.
  await settings.locator("summary").click();
  await settings.getByText("Thinking blocks").click();
  await expect(settings).toHaveAttribute("open");
  await page.locator("main.conversation").click({ position: { x: 20, y: 20 } });
  await expect(settings).not.toHaveAttribute("open");
});

test("a block that ended before a reload mid-answer still reads Thought, not stopped", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long] reload me mid-answer");
  const block = chat.thinkingBlocks().first();
  // The reasoning has ended and the answer is streaming.
  await expect(chat.summary(block)).toContainText("Thought");
  await expect(chat.answer()).toContainText(/\S/);
  await expect(chat.stopButton()).toBeVisible();
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  const restored = chat.thinkingBlocks().first();
  await expect(chat.summary(restored)).toContainText("Thought");
  await expect(chat.summary(restored)).not.toContainText("stopped");
  await page.getByRole("button", { name: "New chat" }).click();
});

test("the composer grows with what is typed, up to a cap, then scrolls", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const box = chat.composer();
  const empty = (await box.boundingBox())!.height;
  await box.fill(Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join("\n"));
  const eight = (await box.boundingBox())!.height;
  expect(eight).toBeGreaterThan(empty * 2.5);
  const fits = await box.evaluate((el) => el.scrollHeight <= el.clientHeight + 1);
  expect(fits).toBe(true);
  await box.fill(Array.from({ length: 80 }, (_, i) => `line ${i + 1}`).join("\n"));
  const capped = (await box.boundingBox())!.height;
  const view = page.viewportSize()!.height;
  expect(capped).toBeLessThanOrEqual(view * 0.4 + 1);
  expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
  await box.fill("");
  expect((await box.boundingBox())!.height).toBeLessThanOrEqual(empty + 1);
});

test("focus: the composer has it on load and gets it back after Stop; Rename starts in its field and Escape cancels", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await expect(chat.composer()).toBeFocused();

  await chat.send("[long-think] stop me with the mouse");
  await chat.stopButton().click();
  await expect(chat.composer()).toBeFocused();
  await chat.waitForTurnEnd();

  await chat.send("[long-think] stop me with the keyboard");
  await chat.stopButton().focus();
  await page.keyboard.press("Enter");
  await expect(chat.composer()).toBeFocused();
  await chat.waitForTurnEnd();

  // By place, not text: while renaming, the title is in the field, not in the item's text.
  const items = page.locator(".conversation-item");
  await expect(items.filter({ hasText: "stop me with the mouse" })).toHaveCount(1);
  const item = items.nth((await items.allInnerTexts()).findIndex((t) => t.includes("stop me with the mouse")));
  const title = await item.locator(".conversation-open").innerText();
  const options = item.getByLabel(/^Options for /);
  await options.click();
  await item.getByRole("button", { name: "Rename", exact: true }).click();
  const field = item.getByRole("textbox", { name: "New title" });
  await expect(field).toBeFocused();
  expect(await field.evaluate((el: HTMLInputElement) => [el.selectionStart, el.selectionEnd])).toEqual([0, title.length]);
  await page.keyboard.type("not kept");
  await page.keyboard.press("Escape");
  await expect(item.locator(".conversation-open")).toHaveText(title);
  await expect(options).toBeFocused();
  await page.getByRole("button", { name: "New chat" }).click();
});

test("the tab names the chat; an error bubble offers Retry alone, in the reader's words", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await expect(page).toHaveTitle("Ponder");
  await chat.send("[drop] a chat with a title");
  await chat.waitForTurnEnd();
  await expect(page).toHaveTitle("[drop] a chat with a title · Ponder");
  const bubble = chat.lastAssistant();
  await expect(bubble.getByRole("button", { name: "Retry" })).toBeVisible();
  await expect(bubble.getByRole("button", { name: "Regenerate answer" })).toHaveCount(0);
  await expect(bubble).not.toContainText("error decoding");
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveTitle("Ponder");
});

test("a user message's time sits against its bubble; Expand all waits for a thinking block", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  // In the Settings menu, whose contents render the first time it opens (and stay once it is
  // closed again): counted in the page, not by role.
  const settings = page.locator("summary", { hasText: "Settings" });
  await settings.click();
  await expect(page.getByRole("radio").first()).toBeVisible();
  await settings.click();
  const expandAll = page.locator(".expand-all");
  await expect(expandAll).toHaveCount(0);
  await chat.send("[no-think] no blocks here");
  await chat.waitForTurnEnd();
  await expect(expandAll).toHaveCount(0);
  const user = chat.userBubbles().last();
  const body = (await user.locator(".bubble-body").boundingBox())!;
  const time = (await user.locator("time").boundingBox())!;
  expect(Math.abs(body.x + body.width - (time.x + time.width))).toBeLessThan(16);
  await chat.send("and now with thinking");
  await chat.waitForTurnEnd();
  await expect(expandAll).toHaveCount(1);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(expandAll).toHaveCount(0);
});

test("a 200-character word and a long bare address stay inside the bubble, and the address is a link", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const word = "x".repeat(200);
  const url = `https://example.com/${"segment/".repeat(25)}end`;
  const tag = `long words ${Date.now()}`;
  const at = 1764489600000;
  const imported = await page.request.post("/api/conversations/import", {
    data: {
      conversation: {
        key: tag,
        title: tag,
        created_at: at,
        messages: [
          { role: "user", created_at: at, active: 0, versions: [{ content: `${word} ${url}`, status: "done", created_at: at }] },
          { role: "assistant", created_at: at + 1, active: 0, versions: [{ content: `A word: ${word}\n\nAnd see ${url}.`, status: "done", created_at: at + 1 }] },
        ],
      },
    },
  });
  expect(imported.status()).toBe(200);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await page.locator(".conversation-open", { hasText: tag }).click();
  const answer = chat.answer();
  await expect(answer.locator(`a[href="${url}"]`)).toHaveText(url);
  const main = (await page.locator("main.conversation").boundingBox())!;
  for (const box of [
    (await answer.boundingBox())!,
    (await chat.userBubbles().last().locator(".bubble-body").boundingBox())!,
  ]) {
    expect(box.x + box.width).toBeLessThanOrEqual(main.x + main.width + 1);
  }
  expect(await answer.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await page.getByRole("button", { name: "New chat" }).click();
});

test.describe("on a 390 px phone", () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  test("the page fits, Settings is in reach, one Stop shows, the placeholder fits, Escape closes the drawer", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    await chat.send("[long-think] on the phone");
    await expect(chat.stopButton()).toBeVisible();
    expect(await fits()).toBe(true);
    // One Stop: the composer's.
    await expect(page.getByRole("button", { name: /^Stop/ }).locator("visible=true")).toHaveCount(1);
    const settings = page.locator("summary", { hasText: "Settings" });
    const box = (await settings.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await settings.focus();
    expect(await page.evaluate(() => window.scrollX)).toBe(0);
    await settings.tap();
    await expect(page.locator("details.menu", { has: settings })).toHaveAttribute("open");
    expect(await fits()).toBe(true);
    await page.keyboard.press("Escape");
    await chat.stopButton().tap();
    await chat.waitForTurnEnd();
    // The placeholder is whole in the empty composer.
    await chat.composer().fill("");
    expect(await chat.composer().evaluate((el) => el.scrollHeight <= el.clientHeight + 1)).toBe(true);
    // The drawer closes on Escape and gives the focus back to its button.
    const toggle = page.getByRole("button", { name: "Conversations" });
    await toggle.tap();
    await expect(toggle).toHaveAttribute("aria-expanded", "true");
    await page.keyboard.press("Escape");
    await expect(toggle).toHaveAttribute("aria-expanded", "false");
    await expect(toggle).toBeFocused();
  });
});

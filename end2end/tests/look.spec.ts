import { test, expect } from "@playwright/test";
import { ChatPage, expectNoViolations as noViolations } from "../pages/chat";
import { SERVERS } from "../servers";

// The look (issue 21): icon buttons named and with tooltips, an answer without a card, a quiet
// thinking disclosure, a rounded composer with icon Send/Stop, a conversation list grouped by
// date with a menu per row, in light and dark, left to right and right to left.

const DAY = 86_400_000;

test("message actions are icon buttons: an SVG, a name, and the name as a tooltip on hover and on keyboard focus", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[no-think] icons");
  await chat.waitForTurnEnd();
  const buttons = page.locator("article.bubble .actions button");
  const count = await buttons.count();
  expect(count).toBeGreaterThanOrEqual(5);
  for (let i = 0; i < count; i++) {
    const b = buttons.nth(i);
    await expect(b).toHaveClass(/icon-button/);
    await expect(b.locator("svg")).toHaveCount(1);
    await expect(b).toHaveText("");
    await expect(b).toHaveAttribute("aria-label", /\w/);
  }
  const copy = chat.lastAssistant().getByRole("button", { name: "Copy answer" });
  expect(await copy.evaluate((el) => getComputedStyle(el, "::after").content)).toBe("none");
  await copy.hover();
  expect(await copy.evaluate((el) => getComputedStyle(el, "::after").content)).toBe('"Copy answer"');
  await page.mouse.move(0, 0);
  await chat.composer().focus();
  await page.keyboard.press("Shift+Tab");
  const focused = page.locator(":focus");
  await expect(focused).toHaveClass(/icon-button/);
  const name = await focused.getAttribute("aria-label");
  expect(await focused.evaluate((el) => getComputedStyle(el, "::after").content)).toBe(`"${name}"`);
  await page.getByRole("button", { name: "New chat" }).click();
});

test("the answer is text on the page, the thinking a pill-shaped disclosure above it", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("a card-less answer");
  await chat.waitForTurnEnd();
  const main = chat.lastAssistant().locator(".bubble-main");
  const style = await main.evaluate((el) => {
    const s = getComputedStyle(el);
    return { border: s.borderTopWidth, background: s.backgroundColor };
  });
  expect(style).toEqual({ border: "0px", background: "rgba(0, 0, 0, 0)" });
  const summary = chat.thinkingBlocks().first().locator("summary");
  const box = (await summary.boundingBox())!;
  expect(box.height).toBeGreaterThanOrEqual(44);
  // As wide as its label, not the column.
  expect(box.width).toBeLessThan((await main.boundingBox())!.width * 0.8);
  expect(await summary.evaluate((el) => parseFloat(getComputedStyle(el).borderTopLeftRadius))).toBeGreaterThanOrEqual(20);
  await page.getByRole("button", { name: "New chat" }).click();
});

test("the composer is one rounded box with an icon Send inside it, and an icon Stop while a turn runs", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const row = page.locator(".composer-row");
  const rowBox = (await row.boundingBox())!;
  const send = chat.sendButton();
  await expect(send.locator("svg")).toHaveCount(1);
  await expect(send).toHaveText("");
  const sendBox = (await send.boundingBox())!;
  expect(sendBox.x).toBeGreaterThanOrEqual(rowBox.x);
  expect(sendBox.x + sendBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
  expect(sendBox.y + sendBox.height).toBeLessThanOrEqual(rowBox.y + rowBox.height);
  expect(await row.evaluate((el) => parseFloat(getComputedStyle(el).borderTopLeftRadius))).toBeGreaterThanOrEqual(20);
  await expect(page.locator(".composer-keys")).toBeVisible();
  await chat.send("[long-think] stop me");
  await expect(chat.stopButton().locator("svg")).toHaveCount(1);
  await chat.stopButton().click();
  await chat.waitForTurnEnd();
  await page.getByRole("button", { name: "New chat" }).click();
});

test.describe("the conversation list", () => {
  const HISTORY = SERVERS.browserHistory.url;

  test.beforeEach(async ({ page }) => {
    await page.addInitScript((day) => {
      if (sessionStorage.getItem("seeded")) return;
      sessionStorage.setItem("seeded", "1");
      const now = Date.now();
      const midnight = new Date();
      midnight.setHours(0, 0, 0, 0);
      const seed = (id: string, title: string, at: number) =>
        localStorage.setItem(
          `ponder.chat.v1.${id}`,
          JSON.stringify({
            id,
            title,
            created_at: at,
            updated_at: at,
            messages: [
              { role: "user", content: title },
              { role: "assistant", content: "An answer." },
            ],
          }),
        );
      seed("t", "From today", now - 1000);
      seed("y", "From yesterday", midnight.getTime() - day / 2);
      seed("w", "From this week", midnight.getTime() - 4 * day);
      seed("o", "From last month", midnight.getTime() - 30 * day);
      seed("r", "مرحبا بالعالم", midnight.getTime() - 31 * day);
    }, DAY);
  });

  test("is grouped by date, most recent first, titles with dir=auto taking the row's width", async ({ page }) => {
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    const nav = page.getByRole("navigation", { name: "Conversations" });
    await expect(nav.locator(".group-label")).toHaveText(["Today", "Yesterday", "Previous 7 days", "Older"]);
    await expect(nav.getByRole("region", { name: "Older" }).locator(".conversation-open")).toHaveText(["From last month", "مرحبا بالعالم"]);
    await expect(nav.getByRole("region", { name: "Today" }).locator(".conversation-open")).toHaveText(["From today"]);
    const titles = nav.locator(".conversation-open");
    for (const dir of await titles.evaluateAll((els) => els.map((e) => e.getAttribute("dir")))) expect(dir).toBe("auto");
    const row = (await nav.locator(".conversation-item").first().boundingBox())!;
    const title = (await titles.first().boundingBox())!;
    expect(title.width).toBeGreaterThanOrEqual(row.width - 50);
  });

  test("each row has one menu: Rename, Instructions and Delete; one menu open at a time, Escape and an outside click close it", async ({ page }) => {
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    const nav = page.getByRole("navigation", { name: "Conversations" });
    const options = nav.getByLabel("Options for From yesterday");
    const menu = nav.locator("details.row-menu", { has: page.getByLabel("Options for From yesterday") });
    await options.click();
    await expect(menu).toHaveAttribute("open");
    await expect(menu.locator(".menu-panel").getByRole("button")).toHaveText(["Rename", "Instructions", "Delete"]);
    await noViolations(page, "a row menu open");

    // Opening Settings closes it.
    await page.locator("summary", { hasText: "Settings" }).click();
    await expect(menu).not.toHaveAttribute("open");
    await page.keyboard.press("Escape");

    await options.click();
    await page.keyboard.press("Escape");
    await expect(menu).not.toHaveAttribute("open");
    await expect(options).toBeFocused();

    await options.click();
    await page.mouse.click(700, 400);
    await expect(menu).not.toHaveAttribute("open");

    await options.click();
    await menu.getByRole("button", { name: "Rename", exact: true }).click();
    await nav.getByLabel("New title").fill("Renamed yesterday");
    await nav.getByLabel("New title").press("Enter");
    await expect(nav.locator(".conversation-open", { hasText: "Renamed yesterday" })).toHaveCount(1);

    await nav.getByLabel("Options for Renamed yesterday").click();
    await nav.getByRole("button", { name: "Delete", exact: true }).click();
    await nav.getByRole("button", { name: "Keep" }).click();
    await expect(nav.getByLabel("Options for Renamed yesterday")).toBeFocused();
    await nav.getByLabel("Options for Renamed yesterday").click();
    await nav.getByRole("button", { name: "Delete", exact: true }).click();
    await nav.getByRole("button", { name: "Yes, delete" }).click();
    await expect(nav.locator(".group-label")).toHaveText(["Today", "Previous 7 days", "Older"]);
  });
});

for (const scheme of ["light", "dark"] as const) {
  test.describe(`${scheme}, right to left`, () => {
    test.use({ colorScheme: scheme });

    test("the page mirrors: sidebar at the right, user bubble at the left, chevrons flipped; axe finds nothing", async ({ page }) => {
      const chat = new ChatPage(page);
      await chat.goto();
      await chat.send("[no-think] mirrored");
      await chat.waitForTurnEnd();
      await page.evaluate(() => document.documentElement.setAttribute("dir", "rtl"));
      const width = page.viewportSize()!.width;
      const sidebar = (await page.locator(".sidebar").boundingBox())!;
      expect(sidebar.x + sidebar.width).toBeGreaterThan(width - 2);
      const user = (await chat.userBubbles().last().locator(".bubble-body").boundingBox())!;
      const messages = (await page.locator("ol.messages").boundingBox())!;
      expect(user.x - messages.x).toBeLessThan(60);
      const flip = await page.locator(".icon.flip").first().evaluate((el) => getComputedStyle(el).transform);
      expect(flip).toBe("matrix(-1, 0, 0, 1, 0, 0)");
      await noViolations(page, `${scheme} RTL`);
      await page.evaluate(() => document.documentElement.setAttribute("dir", "ltr"));
      await page.getByRole("button", { name: "New chat" }).click();
    });
  });
}

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  test("touch targets are 48 px, the keys hint is gone, menus show their icon alone", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("[no-think] on a phone");
    await chat.waitForTurnEnd();
    await expect(page.locator(".composer-keys")).toBeHidden();
    const targets = page.locator(".icon-button:visible, .send:visible, .menu-button:visible, .new-chat:visible");
    const boxes = await targets.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => [r.width, r.height]));
    expect(boxes.length).toBeGreaterThanOrEqual(6);
    for (const [w, h] of boxes) {
      expect(w).toBeGreaterThanOrEqual(48);
      expect(h).toBeGreaterThanOrEqual(48);
    }
    const label = page.locator("summary", { hasText: "Settings" }).locator(".menu-label");
    expect((await label.boundingBox())!.width).toBeLessThanOrEqual(1);
    await noViolations(page, "a phone");
    await page.getByRole("button", { name: "Conversations" }).tap();
    await page.getByRole("button", { name: "New chat" }).tap();
  });
});

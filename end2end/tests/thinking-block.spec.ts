import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { SERVERS } from "../servers";

test.describe("the thinking block", () => {
  let chat: ChatPage;

  test.beforeEach(async ({ page }) => {
    chat = new ChatPage(page);
    await chat.goto();
  });

  test("T1 while reasoning streams: visible, open, 'Thinking…' with the pulsing indicator and a live time", async () => {
    await chat.send("Why is the sky blue?");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    expect(await chat.isOpen(block)).toBe(true);
    await expect(chat.summary(block)).toContainText(chat.w.re("thinking_live", { time: chat.w.liveSecondsSrc() }));
    const indicator = block.locator(".thinking-indicator");
    await expect(indicator).toBeVisible();
    expect(await indicator.evaluate((el) => getComputedStyle(el).animationName)).toBe("pulse");
    await expect(block.locator(".thinking-text")).toContainText("pin down what is really being asked");
  });

  test("T2 when done: 'Thought for N.Ns · N words', collapsed", async () => {
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/done/);
    expect(await chat.isOpen(block)).toBe(false);
    await expect(chat.summary(block)).toHaveText(chat.w.thoughtRe(82));
  });

  test("T3 a turn without reasoning renders no block at all", async () => {
    await chat.send("[no-think] hello");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Here is what I found");
    await expect(chat.thinkingBlocks()).toHaveCount(0);
  });

  test("T4 the reader's toggle during streaming wins: the block stays open after the answer", async () => {
    await chat.send("[slow] think carefully");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    await chat.summary(block).click();
    expect(await chat.isOpen(block)).toBe(false);
    await chat.summary(block).click();
    expect(await chat.isOpen(block)).toBe(true);
    await expect(chat.answer()).toContainText("Here is what I found");
    await chat.waitForTurnEnd();
    expect(await chat.isOpen(block)).toBe(true);
  });

  test("T5 two blocks in one turn each have their own state, time and label", async () => {
    await chat.send("[two-blocks] check it");
    await chat.waitForTurnEnd();
    const blocks = chat.thinkingBlocks();
    await expect(blocks).toHaveCount(2);
    await expect(chat.summary(blocks.nth(0))).toContainText(chat.w.count("words", 82));
    await expect(chat.summary(blocks.nth(1))).toContainText(chat.w.count("words", 20));
    await chat.summary(blocks.nth(1)).click();
    expect(await chat.isOpen(blocks.nth(1))).toBe(true);
    expect(await chat.isOpen(blocks.nth(0))).toBe(false);
    await expect(blocks.nth(1).locator(".thinking-text")).toContainText("let me verify the example");
  });

  test("T6 under prefers-reduced-motion the collapse is instant and nothing pulses", async ({ page }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await chat.send("Why is the sky blue?");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    expect(await block.locator(".thinking-indicator").evaluate((el) => getComputedStyle(el).animationName)).toBe("none");
    const heights = await chat.heightsAfterCollapse(block);
    expect(Math.abs(heights.block - heights.summary)).toBeLessThanOrEqual(3);
  });

  test("without reduced motion the collapse is animated", async () => {
    await chat.send("Why is the sky blue?");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    const heights = await chat.heightsAfterCollapse(block);
    expect(heights.block - heights.summary).toBeGreaterThan(10);
  });

  test("a block the reader collapsed while it streams shows a one-line peek of the latest thinking", async () => {
    await chat.send("[slow] think");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    await chat.summary(block).click();
    const peek = block.locator(".thinking-peek");
    await expect(peek).toBeVisible();
    await expect(peek).toContainText(/—\s+\S+/);
    const box = await peek.boundingBox();
    const line = await peek.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
    expect(box!.height).toBeLessThanOrEqual(line + 2);
    await chat.waitForTurnEnd();
    await expect(peek).toHaveCount(0);
  });

  test("the thinking text keeps its own scroll and stays at its bottom while streaming", async ({ page }) => {
    await page.setViewportSize({ width: 900, height: 700 });
    await chat.send("[long-think] think");
    const scroller = chat.thinkingBlocks().first().locator(".thinking-scroll");
    await expect(scroller).toBeVisible();
    const maxHeight = await scroller.evaluate((el) => getComputedStyle(el).maxHeight);
    expect(maxHeight).toBe("320px");
    await expect
      .poll(async () => scroller.evaluate((el) => el.scrollHeight > el.clientHeight))
      .toBe(true);
    await expect
      .poll(async () => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight))
      .toBeLessThan(30);
  });

  test("the settings menu's preference decides what new blocks do, and is kept", async ({ page, browser }) => {
    const w = chat.w;
    await page.getByText(w.t("settings"), { exact: true }).click();
    await page.getByLabel(w.t("pref_collapsed")).check();
    await chat.send("Why is the sky blue?");
    const block = chat.thinkingBlocks().first();
    await expect(block).toHaveClass(/streaming/);
    expect(await chat.isOpen(block)).toBe(false);
    await chat.waitForTurnEnd();

    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await page.getByText(w.t("settings"), { exact: true }).click();
    await expect(page.getByLabel(w.t("pref_collapsed"))).toBeChecked();
    await page.getByLabel(w.t("pref_open")).check();
    await chat.send("Why again?");
    await chat.waitForTurnEnd();
    expect(await chat.isOpen(chat.thinkingBlocks().first())).toBe(true);

    // The preference is the user's, per workspace, on the server: another browser has it too.
    const other = await browser.newPage();
    const there = new ChatPage(other, SERVERS.main.url);
    await there.goto();
    await other.getByText(w.t("settings"), { exact: true }).click();
    await expect(other.getByLabel(w.t("pref_open"))).toBeChecked();
    // Back to the default, for the specs that follow on this server.
    await other.getByLabel(w.t("pref_auto")).check();
    await expect.poll(async () => {
      const r = await other.request.post(`${SERVERS.main.url}/api/preferences/get`, { data: {} });
      return (await r.json()).thinking;
    }).toBe("open_while_thinking");
    await other.close();
  });

  test("expand all and collapse all show every block in detail or as one line", async ({ page }) => {
    await chat.send("[two-blocks] first");
    await chat.waitForTurnEnd();
    await chat.send("second question");
    await chat.waitForTurnEnd();
    const all = page.locator("details.thinking");
    await expect(all).toHaveCount(3);
    // In the Settings menu, with the other thinking settings.
    await page.locator("summary", { hasText: chat.w.t("settings") }).click();
    await page.getByRole("button", { name: chat.w.t("expand_all") }).click();
    for (const i of [0, 1, 2]) expect(await chat.isOpen(all.nth(i))).toBe(true);
    await page.getByRole("button", { name: chat.w.t("collapse_all") }).click();
    for (const i of [0, 1, 2]) expect(await chat.isOpen(all.nth(i))).toBe(false);
  });

  test("keyboard: Enter and Space on the summary toggle the block", async ({ page }) => {
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const block = chat.thinkingBlocks().first();
    await chat.summary(block).focus();
    await page.keyboard.press("Enter");
    expect(await chat.isOpen(block)).toBe(true);
    await page.keyboard.press("Space");
    expect(await chat.isOpen(block)).toBe(false);
  });

  test("the status region announces Thinking…, then Thought for N seconds, Generating… and Done, once each", async ({ page }) => {
    await chat.recordAnnouncements();
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const heard = await chat.announcements();
    const joined = heard.join(" | ");
    const w = chat.w;
    // "Thought for N seconds" in any of the locale's plural forms, or "less than a second".
    const thoughtFor = [w.t("announce_under_a_second"), ...Object.values(w.c.announce_thought_for as Record<string, string>)]
      .map((form) => w.src(form, { n: "\\d+" }))
      .join("|");
    const times = (src: string) => joined.match(new RegExp(src, "g"))?.length ?? 0;
    const thinking = w.src(w.t("thinking"));
    for (const phrase of [thinking, thoughtFor, w.src(w.t("announce_generating")), w.src(w.t("announce_done"))]) {
      expect(times(phrase), `${phrase} in ${joined}`).toBeGreaterThanOrEqual(1);
    }
    expect(times(thinking)).toBe(1);
    expect(heard.length).toBeLessThan(8);
  });
  test("a folded block keeps its text in the page but not its markup; opening puts the same markup back", async () => {
    await chat.send("[math] a formula or two");
    await chat.waitForTurnEnd();
    const block = chat.thinkingBlocks().first();
    const text = block.locator(".thinking-text");
    expect(await chat.isOpen(block)).toBe(false);
    // Parked: each section holds its text and no element.
    await expect(text.locator(".md-section.md-parked").first()).toBeAttached();
    await expect(text.locator(".md-section *")).toHaveCount(0);
    const folded = await text.evaluate((el) => el.textContent);
    expect(folded).toContain("antiderivative");

    await chat.summary(block).click();
    await expect(text.locator("math")).toHaveCount(3);
    await expect(text.locator(".md-parked")).toHaveCount(0);
    expect(await text.evaluate((el) => el.textContent)).toBe(folded);

    await chat.summary(block).click();
    await expect(text.locator(".md-section *")).toHaveCount(0);
    expect(await text.evaluate((el) => el.textContent)).toBe(folded);
    await chat.summary(block).click();
    await expect(text.locator("math")).toHaveCount(3);
  });
  test("a block the reader folds while it streams is parked whole when it ends, and opens whole and in order", async () => {
    await chat.send("[long-think] think it through");
    const block = chat.thinkingBlocks().first();
    const text = block.locator(".thinking-text");
    await expect(text).toContainText("pin down what is really being asked");
    await chat.summary(block).click();
    expect(await chat.isOpen(block)).toBe(false);
    await chat.waitForTurnEnd();
    await expect(text.locator(".md-section *")).toHaveCount(0);
    // Its reasoning (under 4 KB) fills one section: the one still being filled is not parked (and
    // so not cut in pieces) until the text ends.
    await expect(text.locator(".md-section")).toHaveCount(1);
    await expect(text.locator(".md-section.md-parked")).toHaveCount(1);
    const folded = (await text.evaluate((el) => el.textContent))!;
    expect(folded).toContain("Step 12:");

    await chat.summary(block).click();
    await expect(text.locator(".md-parked")).toHaveCount(0);
    const open = (await text.evaluate((el) => el.textContent))!;
    expect(open).toBe(folded);
    expect(open.indexOf("Step 3:")).toBeLessThan(open.indexOf("Step 9:"));
    await expect(text.locator("p").filter({ hasText: /^Step \d+:/ })).toHaveCount(12);
  });
});

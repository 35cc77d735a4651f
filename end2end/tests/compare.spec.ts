import { expect, test, type Locator, type Page } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Compare: one question to the demo's three models at once (the deep one thinks longest, the
// mini one not at all), their answers side by side, each with its live thinking block and its
// figures; Stop in one pane leaves the others; keeping an answer keeps the others as versions;
// a reload mid-comparison rejoins every stream; a phone shows one pane at a time; "Continue
// with each" makes a chat of every answer; Settings → Comparisons shows the record per model.

const MODELS = ["ponder-demo", "ponder-demo-deep", "ponder-demo-mini"];

/** A word of comparing models (the `compare_page` words of the catalogue). */
function cw(chat: ChatPage, key: string, values: Record<string, string> = {}): string {
  const words = chat.w.c["compare_page"] as unknown as Record<string, string>;
  return words[key].replace(/\{(\w+)\}/g, (all, name) => values[name] ?? all);
}

/** Turns compare mode on with the three demo models. */
async function compareThree(chat: ChatPage) {
  const page = chat.page;
  await page.getByRole("button", { name: chat.w.t("compare_models") }).click();
  const bar = page.getByRole("group", { name: cw(chat, "models_compared") });
  await expect(bar).toBeVisible();
  await bar.getByRole("button", { name: cw(chat, "add_model") }).click();
  for (const [i, model] of MODELS.entries()) {
    await bar.getByLabel(cw(chat, "model_n", { n: String(i + 1) })).selectOption(model);
  }
  await expect(bar.getByRole("button", { name: cw(chat, "add_model") })).toHaveCount(0);
}

function pane(page: Page, model: string): Locator {
  return page.locator(".compare-pane", { has: page.locator(".pane-model", { hasText: new RegExp(`^${model}$`) }) });
}

/** The seconds in a figures line's part, e.g. "thought 4.2s" → 4.2. */
function seconds(figures: string, pattern: RegExp): number {
  const m = pattern.exec(figures);
  expect(m, `${pattern} in ${figures}`).not.toBeNull();
  return Number(m![1]);
}

test("three models answer side by side, live, with their figures; Stop in one leaves the others; keeping one keeps the versions", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await compareThree(chat);
  await chat.send("[long-think] why is the sky blue?");

  const panes = page.locator(".compare-pane");
  await expect(panes).toHaveCount(3);
  // The two that think show their blocks live, at once, side by side.
  await expect(pane(page, "ponder-demo").locator("details.thinking.streaming")).toHaveCount(1);
  await expect(pane(page, "ponder-demo-deep").locator("details.thinking.streaming")).toHaveCount(1);
  const boxes = await Promise.all(MODELS.map((m) => pane(page, m).boundingBox()));
  expect(boxes[0]!.y).toBeCloseTo(boxes[1]!.y, 0);
  expect(boxes[0]!.x).toBeLessThan(boxes[1]!.x);

  // Stop in the deep pane: it stops, the others go on to their answers.
  const deep = pane(page, "ponder-demo-deep");
  await deep.getByRole("button", { name: chat.w.t("stop_answer") }).click();
  await expect(deep.locator(".stopped-note")).toHaveText(chat.w.t("stopped"));
  for (const model of ["ponder-demo", "ponder-demo-mini"]) {
    const p = pane(page, model);
    await expect(p).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
    await expect(p.locator(".answer")).not.toBeEmpty();
    await expect(p.locator(".stopped-note")).toHaveCount(0);
  }

  // The figures: the mini one never thought; the other thought, then answered, in that order.
  const mini = (await pane(page, "ponder-demo-mini").locator(".pane-figures").textContent()) ?? "";
  expect(mini).toContain(chat.w.t("compare_no_thinking"));
  const demo = (await pane(page, "ponder-demo").locator(".pane-figures").textContent()) ?? "";
  const thought = seconds(demo, /thought (\d+\.\d)s/);
  const first = seconds(demo, /first answer token at (\d+\.\d)s/);
  const total = seconds(demo, /(\d+\.\d)s in all/);
  expect(thought).toBeGreaterThan(0.5);
  expect(first).toBeGreaterThanOrEqual(thought - 0.2);
  expect(total).toBeGreaterThanOrEqual(first);
  const block = (await pane(page, "ponder-demo").locator("details.thinking summary").textContent()) ?? "";
  expect(block).toMatch(/Thought/);
  expect(demo).toMatch(/reasoning tokens/);
  await expectNoViolations(page, "three answers side by side");

  // Thumbs are kept; then the demo's answer is kept: the comparison folds into one answer
  // whose versions are the three, each with its model.
  await pane(page, "ponder-demo-mini").getByRole("button", { name: cw(chat, "bad") }).click();
  await expect(pane(page, "ponder-demo-mini").getByRole("button", { name: cw(chat, "bad") })).toHaveAttribute("aria-pressed", "true");
  await pane(page, "ponder-demo").getByRole("button", { name: cw(chat, "keep") }).click();
  await expect(panes).toHaveCount(0);
  const bubble = chat.lastAssistant();
  await expect(bubble.locator(".answer-model")).toHaveText("ponder-demo");
  await expect(bubble.locator(".version-label")).toHaveText(/1\D+3/);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo");
  await expect(page.locator(".compare-pane")).toHaveCount(0);
  await chat.lastAssistant().getByRole("button", { name: chat.w.t("next_version") }).click();
  await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo-deep");
});

test("a reload in the middle of a comparison rejoins every stream", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await compareThree(chat);
  await chat.send("[long-think] keep going after a reload");
  await expect(pane(page, "ponder-demo-deep").locator("details.thinking.streaming")).toHaveCount(1);
  await expect(pane(page, "ponder-demo-mini")).toHaveCount(1);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.locator(".compare-pane")).toHaveCount(3);
  // The deep one is still thinking, live in its block, after the reload.
  await expect(pane(page, "ponder-demo-deep")).toHaveAttribute("aria-busy", "true");
  await expect(pane(page, "ponder-demo-deep").locator("details.thinking.streaming")).toHaveCount(1);
  for (const model of MODELS) {
    const p = pane(page, model);
    await expect(p).toHaveAttribute("aria-busy", "false", { timeout: 30_000 });
    await expect(p.locator(".answer")).not.toBeEmpty();
    await expect(p.locator(".error-message")).toHaveCount(0);
  }
});

test("on a phone the answers stack, one shown at a time", async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  const chat = new ChatPage(page);
  await chat.goto();
  await compareThree(chat);
  await chat.send("which is bigger, 9.11 or 9.9?");
  const switcher = page.getByRole("group", { name: cw(chat, "answers") });
  await expect(switcher.getByRole("button")).toHaveCount(3);
  for (const model of MODELS) {
    await expect(pane(page, model)).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
  }
  await expect(pane(page, "ponder-demo")).toBeVisible();
  await expect(pane(page, "ponder-demo-deep")).toBeHidden();
  await switcher.getByRole("button", { name: "ponder-demo-deep" }).click();
  await expect(switcher.getByRole("button", { name: "ponder-demo-deep" })).toHaveAttribute("aria-pressed", "true");
  await expect(pane(page, "ponder-demo-deep")).toBeVisible();
  await expect(pane(page, "ponder-demo")).toBeHidden();
  const width = await pane(page, "ponder-demo-deep").evaluate((el) => el.getBoundingClientRect().width);
  expect(width).toBeLessThanOrEqual(390);
  await expectNoViolations(page, "a comparison on a phone");
  await context.close();
});

test("continuing with each answer makes a chat of each, and the record counts the kept ones", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  // A first comparison, kept: the record has a win for the deep model.
  await compareThree(chat);
  await chat.send("first question to compare");
  for (const model of MODELS) {
    await expect(pane(page, model)).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
  }
  await pane(page, "ponder-demo-deep").getByRole("button", { name: cw(chat, "good") }).click();
  await pane(page, "ponder-demo-deep").getByRole("button", { name: cw(chat, "keep") }).click();
  await expect(page.locator(".compare-pane")).toHaveCount(0);

  // A second question, compared again, then continued with each.
  const title = `compare-${Date.now()}`;
  await chat.send(`${title}: and the second?`);
  await expect(page.locator(".compare-pane")).toHaveCount(3);
  for (const model of MODELS) {
    await expect(pane(page, model)).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
  }
  await page.getByRole("button", { name: cw(chat, "continue_all") }).click();
  const list = page.getByRole("navigation", { name: chat.w.t("conversations") });
  for (const model of MODELS) {
    await expect(list.getByRole("button", { name: new RegExp(`· ${model}$`) }).first()).toBeVisible();
  }
  // The first branch opens: one answer shown, no panes, and the next question goes to its model.
  await expect(page.locator(".compare-pane")).toHaveCount(0);
  await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo");
  await page.getByRole("button", { name: chat.w.t("compare_models") }).click();
  await chat.send("a follow-up in the branch");
  await chat.waitForTurnEnd();
  await expect(chat.lastAssistant().locator(".answer-model")).toHaveText("ponder-demo");

  // Settings → Comparisons.
  const menu = page.locator("details.menu", { has: page.locator("summary", { hasText: chat.w.t("settings") }) });
  await menu.locator("summary").click();
  await page.getByRole("button", { name: cw(chat, "record_open") }).click();
  const dialog = page.getByRole("dialog", { name: cw(chat, "record_title") });
  await expect(dialog).toBeVisible();
  const table = dialog.getByRole("table");
  const deepRow = table.getByRole("row", { name: /ponder-demo-deep/ });
  await expect(deepRow.getByRole("cell").nth(1)).toHaveText(/^[1-9]\d*$/);
  for (const chart of ["wins_chart", "thinking_chart", "tokens_chart"]) {
    await expect(dialog.getByRole("img", { name: cw(chat, chart) })).toBeVisible();
  }
  await expectNoViolations(page, "the record of comparisons is open");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
});

test("the shortcut turns compare mode on and off", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const toggle = page.getByRole("button", { name: chat.w.t("compare_models") });
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await page.keyboard.press("Control+Shift+M");
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByRole("group", { name: cw(chat, "models_compared") })).toBeVisible();
  await page.keyboard.press("Control+Shift+M");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await expect(page.getByRole("group", { name: cw(chat, "models_compared") })).toHaveCount(0);
});

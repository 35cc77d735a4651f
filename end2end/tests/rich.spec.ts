import { expect, test } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Rich answers: formulas in every delimiter models use are typeset as MathML once their block is
// finished (the LaTeX never damaged), money stays prose, a formula that does not parse stays
// its source; the same in the reasoning.

test("formulas are typeset as MathML, dollar amounts stay text, a broken formula shows its source", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[math] integrate it");
  await chat.waitForTurnEnd();
  const answer = chat.answer();
  // $…$ and \(…\) inline, $$…$$ and \[…\] as blocks.
  await expect(answer.locator("math")).toHaveCount(4);
  await expect(answer.locator('math[display="block"]')).toHaveCount(2);
  await expect(answer.locator("math").first().locator("msubsup")).toHaveCount(1);
  await expect(answer.locator("math").first().locator("mfrac")).toHaveCount(1);
  expect(await answer.locator("math").nth(1).evaluate((m) => m.namespaceURI)).toBe("http://www.w3.org/1998/Math/MathML");
  await expect(answer).toContainText("It costs $5 and $10 at most.");
  const broken = answer.locator('code.math-inline[data-math="source"]');
  await expect(broken).toHaveText("\\notacommand{x}");
  await expect(broken).toHaveAttribute("title", /could not be typeset/);
  // Nothing of the formulas' source is left as code once typeset.
  await expect(answer.locator("code.math-display")).toHaveCount(0);

  // The reasoning's formulas too, with its own \( \) pair.
  const block = chat.thinkingBlocks().first();
  await chat.summary(block).click();
  await expect(block.locator(".thinking-text math")).toHaveCount(3);
  await expectNoViolations(page, "an answer with typeset formulas");
});

test("a formula still being written is shown as written, and typeset when its block is done", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  let requests = 0;
  page.on("request", (r) => {
    if (r.url().includes("/api/render/math")) requests += 1;
  });
  await chat.send("[math] once more");
  await chat.waitForTurnEnd();
  await expect(chat.answer().locator("math")).toHaveCount(4);
  // Typeset once per finished block, not per frame.
  expect(requests).toBeGreaterThan(0);
  expect(requests).toBeLessThanOrEqual(6);
});

test("finished code blocks are highlighted; their text, and what Copy takes, are unchanged", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[code] show me");
  await chat.waitForTurnEnd();
  const answer = chat.answer();
  const blocks = answer.locator(".code-block pre > code");
  await expect(blocks).toHaveCount(4);
  const rust = blocks.nth(0);
  await expect(rust).toHaveAttribute("data-hl", "done");
  await expect(rust.locator("span.hl-comment").first()).toContainText("// multiply");
  await expect(rust.locator("span.hl-storage").first()).toHaveText("fn");
  await expect(rust).toHaveText("fn square(x: u32) -> u32 {\n    // multiply\n    x * x\n}\n");
  await expect(blocks.nth(1).locator("span.hl-comment").first()).toContainText('# "same"');
  await expect(blocks.nth(1).locator(".hl-keyword").first()).toHaveText("def");
  await expect(blocks.nth(2).locator(".hl-markup.hl-inserted")).toContainText("let y = x * x;");
  // A language the highlighter does not know stays plain text, markup and all.
  const unknown = blocks.nth(3);
  await expect(unknown).toHaveAttribute("data-hl", "plain");
  await expect(unknown.locator("span, b")).toHaveCount(0);
  await expect(unknown).toHaveText("qapla' <b>not markup</b>\n");
  // The colours keep AA contrast, light or dark.
  await expectNoViolations(page, "an answer with highlighted code");
  await answer.locator(".code-block").first().getByRole("button", { name: "Copy code" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("fn square(x: u32) -> u32 {\n    // multiply\n    x * x\n}\n");
});

test("the disclaimer chip opens a short explanation: a modal dialog that keeps focus, closes on Escape and gives focus back", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  const chip = chat.lastAssistant().getByRole("button", { name: "AI-generated — verify" });
  await chip.click();
  const dialog = page.getByRole("dialog", { name: "About AI-generated answers" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("Check what matters");
  const gotIt = dialog.getByRole("button", { name: "Got it" });
  await expect(gotIt).toBeFocused();
  // Focus stays inside while it is open: the page behind is inert.
  await page.keyboard.press("Tab");
  expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  await page.keyboard.press("Shift+Tab");
  expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  await expectNoViolations(page, "the disclaimer's explanation open");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(chip).toBeFocused();
  // The button closes it too.
  await chip.press("Enter");
  await expect(dialog).toBeVisible();
  await gotIt.click();
  await expect(dialog).toBeHidden();
  await expect(chip).toBeFocused();
});

import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";

test.describe("the message bubble", () => {
  let chat: ChatPage;

  test.beforeEach(async ({ page, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    chat = new ChatPage(page);
    await chat.goto();
  });

  test("roles: the user's bubble is end-aligned and tinted, the assistant's start-aligned with an avatar and the disclaimer", async ({
    page,
  }) => {
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    const user = chat.userBubbles().first();
    const assistant = chat.lastAssistant();
    const main = (await page.locator("ol.messages").boundingBox())!;
    const userBox = (await user.locator(".bubble-body").boundingBox())!;
    const answerBox = (await assistant.locator(".bubble-main").boundingBox())!;
    // Start and end follow the language's direction: the page is laid out right to left in Arabic.
    const rtl = (new Intl.Locale(chat.w.tag) as any).textInfo.direction === "rtl";
    await expect(page.locator("html")).toHaveAttribute("dir", rtl ? "rtl" : "ltr");
    const fromStart = (box: { x: number; width: number }) => (rtl ? main.x + main.width - (box.x + box.width) : box.x - main.x);
    const fromEnd = (box: { x: number; width: number }) => (rtl ? box.x - main.x : main.x + main.width - (box.x + box.width));
    expect(fromEnd(userBox)).toBeLessThan(60);
    expect(fromStart(answerBox)).toBeLessThan(50);
    await expect(assistant.locator(".avatar")).toHaveAttribute("aria-hidden", "true");
    await expect(assistant.locator(".disclaimer")).toHaveText(chat.w.t("ai_disclaimer"));
    await expect(user.locator(".disclaimer")).toHaveCount(0);
    await expect(user.locator("time")).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);
    await expect(assistant.locator("time")).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);
    await expect(user.locator(".bubble-body")).toHaveAttribute("dir", "auto");
    await expect(assistant.locator(".answer")).toHaveAttribute("dir", "auto");
    expect(await page.locator("article.bubble").count()).toBe(2);
  });

  test("Copy on the assistant copies the answer as markdown without thinking; on the user, the text", async ({ page }) => {
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    await chat.lastAssistant().getByRole("button", { name: chat.w.t("copy_answer") }).click();
    await expect(chat.lastAssistant().getByRole("button", { name: chat.w.t("copy_answer") })).toHaveText(chat.w.t("copied"));
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain("**Short answer:** yes");
    expect(copied).not.toContain("pin down what is really being asked");
    await chat.userBubbles().first().getByRole("button", { name: chat.w.t("copy_message") }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("Why is the sky blue?");
  });

  test("a code block has a language label and its own Copy button", async ({ page }) => {
    await chat.send("[long] with code");
    await chat.waitForTurnEnd();
    const block = chat.answer().locator(".code-block").first();
    await expect(block.locator(".code-lang")).toHaveText("rust");
    await block.getByRole("button", { name: chat.w.t("copy_code") }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("fn part_4() -> u32 {\n    4\n}\n");
  });

  test("Regenerate makes a second version; the 1/2 switcher reaches both, each answer shown once", async () => {
    await chat.send("[no-think] first version");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    const answers = bubble.locator(".answer");
    const once = await answers.innerText();
    await bubble.getByRole("button", { name: chat.w.t("regenerate_answer") }).click();
    // While the new version streams, the old answer is not left under it.
    await expect(answers).toHaveCount(1);
    await chat.waitForTurnEnd();
    const w = chat.w;
    const versions = bubble.getByRole("group", { name: w.t("answer_versions") });
    const of = (n: number) => w.t("version_of", { n: w.num(n), total: w.num(2) });
    await expect(versions).toContainText(of(2));
    await expect(answers).toHaveCount(1);
    expect(await answers.innerText()).toBe(once);
    for (let round = 0; round < 3; round++) {
      await versions.getByRole("button", { name: w.t("previous_version") }).click();
      await expect(versions).toContainText(of(1));
      await expect(chat.answer()).toContainText("Here is what I found");
      expect(await answers.innerText()).toBe(once);
      await versions.getByRole("button", { name: w.t("next_version") }).click();
      await expect(versions).toContainText(of(2));
      expect(await answers.innerText()).toBe(once);
    }
    await expect(answers).toHaveCount(1);
  });

  test("Retry after a dropped stream shows the partial answer once", async () => {
    await chat.send("[drop] cut short");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await bubble.getByRole("button", { name: chat.w.t("retry") }).click();
    await chat.waitForTurnEnd();
    const text = await bubble.locator(".answer").innerText();
    expect(text.split("Here is the beginning of the answer").length - 1).toBe(1);
    await expect(bubble.locator(".answer")).toHaveCount(1);
  });

  test("Edit prefills the composer; sending drops the later messages, keeping the earlier text", async ({ page }) => {
    await chat.send("[no-think] one");
    await chat.waitForTurnEnd();
    await chat.send("[no-think] two");
    await chat.waitForTurnEnd();
    await chat.userBubbles().first().getByRole("button", { name: chat.w.t("edit_message") }).click();
    await expect(chat.composer()).toHaveValue("[no-think] one");
    await expect(chat.composer()).toBeFocused();
    await chat.composer().fill("[no-think] one, edited");
    await chat.composer().press("Enter");
    await chat.waitForTurnEnd();
    await expect(chat.userBubbles()).toHaveCount(1);
    await expect(chat.userBubbles().first()).toContainText("one, edited");
    await expect(chat.assistantBubbles()).toHaveCount(1);
    // The earlier text is kept as a version; the bubble says it was edited, to a screen reader too.
    const edited = page.getByRole("article", { name: chat.w.t("message_from_you_edited") });
    await expect(edited).toHaveCount(1);
    await expect(edited.locator(".edited")).toHaveText(chat.w.t("edited"));
    await edited.getByText(chat.w.count("earlier_versions", 1)).click();
    await expect(edited.locator(".earlier-versions li")).toHaveText(["[no-think] one"]);
    // The versions are on the server: another load shows the same.
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(page.getByRole("article", { name: chat.w.t("message_from_you_edited") })).toHaveCount(1);
  });

  test("Branch starts a new conversation with the history up to that message", async ({ page }) => {
    const alpha = `alpha ${Date.now()}`;
    await chat.send(`[no-think] ${alpha}`);
    await chat.waitForTurnEnd();
    await chat.send("[no-think] beta");
    await chat.waitForTurnEnd();
    await chat.assistantBubbles().first().getByRole("button", { name: chat.w.t("branch_from_here") }).click();
    await expect(chat.userBubbles()).toHaveCount(1);
    await expect(chat.assistantBubbles()).toHaveCount(1);
    // The branch's title is stored in no language and read in the reader's.
    const branched = chat.w.t("title_branch", { title: `[no-think] ${alpha}` });
    await expect(page.locator(".chat-title")).toHaveText(branched);
    // The list (shared with the suite's earlier chats on this server) holds the chat and its branch.
    const nav = page.getByRole("navigation", { name: chat.w.t("conversations") });
    await expect(nav.locator(".conversation-open", { hasText: alpha })).toHaveText([
      branched,
      `[no-think] ${alpha}`,
    ]);
  });

  test("a long answer is drawn in sections; those made while it streamed are skipped out of view, a stored copy's never", async ({ page }) => {
    await chat.send("[essay] please");
    await chat.waitForTurnEnd();
    const done = chat.lastAssistant().locator(".answer .md-done");
    await expect(done.locator(":scope > :not(.md-section)")).toHaveCount(0);
    const sections = done.locator(":scope > .md-section");
    expect(await sections.count()).toBeGreaterThanOrEqual(2);
    // Every section the stream made after its first step may be skipped out of view.
    const later = (await sections.evaluateAll((els) => els.map((el) => getComputedStyle(el).contentVisibility))).slice(1);
    expect(later).toEqual(Array(later.length).fill("auto"));
    // Opened again, the stored answer comes whole: no section is skipped at a guessed size.
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(chat.answer()).toContainText("Part 12");
    await expect(chat.lastAssistant().locator(".md-skip")).toHaveCount(0);
  });

  test("Stop is offered in the bubble while it streams", async () => {
    await chat.send("[long] go");
    const stop = chat.lastAssistant().getByRole("button", { name: chat.w.t("stop_answer") });
    await expect(stop).toBeVisible();
    // The button rides under the growing answer: Playwright's click would wait for it to stand
    // still, which it does only once the answer is complete. A reader clicks it where it is.
    await stop.dispatchEvent("click");
    await expect(chat.lastAssistant().locator(".stopped-note")).toBeVisible();
    await expect(stop).toHaveCount(0);
  });

  test("actions are reachable by keyboard, named, and at least 44 px", async ({ page }) => {
    await chat.send("[no-think] hi");
    await chat.waitForTurnEnd();
    const actions = page.locator("article.bubble .actions button");
    const count = await actions.count();
    expect(count).toBeGreaterThanOrEqual(5);
    for (let i = 0; i < count; i++) {
      const b = actions.nth(i);
      // Named in the page's language: a word character of any script, from the locale's catalogue.
      await expect(b).toHaveAttribute("aria-label", /[\p{L}\p{N}_]/u);
      expect(chat.w.strings()).toContain(await b.getAttribute("aria-label"));
      await b.focus();
      await expect(b).toBeVisible();
      const box = (await b.boundingBox())!;
      expect(box.height).toBeGreaterThanOrEqual(44);
      expect(box.width).toBeGreaterThanOrEqual(44);
    }
  });

  test("the error state: a red border, the message and Retry", async () => {
    await chat.send("[500]");
    await chat.waitForTurnEnd();
    const bubble = chat.lastAssistant();
    await expect(bubble).toHaveClass(/error/);
    const border = await bubble.locator(".bubble-main").evaluate((el) => getComputedStyle(el).borderTopColor);
    const [r, g, b] = border.match(/\d+/g)!.map(Number);
    expect(r).toBeGreaterThan(g + 60);
    expect(r).toBeGreaterThan(b + 60);
    await expect(bubble.locator(".error-message")).toContainText("500");
    await expect(bubble.getByRole("button", { name: chat.w.t("retry") })).toBeVisible();
  });

  test("RTL: under an RTL document the layout is mirrored; Arabic text reads right inside an LTR page", async ({ page }) => {
    await chat.send("مرحبا، كيف حالك؟ [no-think]");
    await chat.waitForTurnEnd();
    // The page starts out left to right (an Arabic page already is right to left: make it LTR).
    await page.evaluate(() => document.documentElement.setAttribute("dir", "ltr"));
    const ltrUser = (await chat.userBubbles().first().locator(".bubble-body").boundingBox())!;
    const direction = await chat.userBubbles().first().locator(".bubble-body").evaluate((el) => getComputedStyle(el).direction);
    expect(direction).toBe("rtl");
    await page.evaluate(() => document.documentElement.setAttribute("dir", "rtl"));
    const main = (await page.locator("ol.messages").boundingBox())!;
    const rtlUser = (await chat.userBubbles().first().locator(".bubble-body").boundingBox())!;
    const rtlAssistant = (await chat.lastAssistant().locator(".bubble-main").boundingBox())!;
    expect(rtlUser.x - main.x).toBeLessThan(60);
    expect(main.x + main.width - (rtlAssistant.x + rtlAssistant.width)).toBeLessThan(50);
    expect(rtlUser.x).toBeLessThan(ltrUser.x);
  });

  test("Generating… and Done are announced politely, nothing per token", async ({ page }) => {
    await chat.recordAnnouncements();
    await chat.send("[long] many tokens");
    await chat.waitForTurnEnd();
    const heard = await chat.announcements();
    expect(heard.join(" | ")).toContain(chat.w.t("announce_generating"));
    expect(heard[heard.length - 1]).toBe(chat.w.t("announce_done"));
    expect(heard.length).toBeLessThan(10);
    expect(await page.locator("[aria-live]").count()).toBe(1);
  });
});

import { expect, test, type Page } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";
import { EN, Words } from "../pages/i18n";
import { SERVERS } from "../servers";

// Ponder in Brazilian Portuguese, Japanese and Arabic: chosen from Accept-Language by the server
// (no flash of English), changed in the settings and kept, with the thinking labels in each
// language's grammar and numbers; no English left in the Japanese and Arabic pages; Arabic laid
// out right to left while each block of text reads in its own direction.

const DIR: Record<string, string> = { en: "ltr", "pt-BR": "ltr", ja: "ltr", ar: "rtl" };

for (const tag of ["pt-BR", "ja", "ar"]) {
  test.describe(`in ${tag}`, () => {
    test.use({ locale: tag });

    test("the server renders the page in the reader's language, and a turn reads in it", async ({ page }) => {
      const w = new Words(tag);
      // The HTML before any script runs: language, direction and words are already right.
      const html = await (await fetch(`${SERVERS.browserHistory.url}/`, { headers: { "Accept-Language": `${tag},en;q=0.5` } })).text();
      expect(html).toContain(`<html lang="${tag}" dir="${DIR[tag]}"`);
      expect(html).toContain(w.t("message_placeholder"));
      expect(html).not.toContain(EN.t("message_placeholder"));

      const chat = new ChatPage(page, "", w);
      await chat.goto();
      await expect(page.locator("html")).toHaveAttribute("lang", tag);
      await expect(page.locator("html")).toHaveAttribute("dir", DIR[tag]);
      await expect(chat.composer()).toHaveAttribute("placeholder", w.t("message_placeholder"));

      await chat.recordAnnouncements();
      await chat.send("Why is the sky blue?");
      const block = chat.thinkingBlocks().first();
      await expect(chat.summary(block)).toContainText(w.re("thinking_live", { time: w.liveSecondsSrc() }));
      await chat.waitForTurnEnd();
      await expect(chat.summary(block)).toHaveText(w.thoughtRe(82));
      await expect(chat.lastAssistant().locator(".disclaimer")).toHaveText(w.t("ai_disclaimer"));
      await expect(chat.answer()).toContainText("Here is what I found");
      const heard = (await chat.announcements()).join(" | ");
      expect(heard).toContain(w.t("thinking"));
      expect(heard).toContain(w.t("announce_generating"));
      expect(heard).toContain(w.t("announce_done"));

      // Reloaded from the server's history, the same words.
      await page.reload();
      await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
      await expect(chat.summary(chat.thinkingBlocks().first())).toHaveText(w.thoughtRe(82));
    });
  });
}

test.describe("choosing the language", () => {
  test("Settings → Language reloads the page in it and the choice is kept in this browser", async ({ browser }) => {
    // Chats in the browser only: the choice is this browser's (a cookie), not a user's.
    const url = SERVERS.browserHistory.url;
    const context = await browser.newContext({ baseURL: url, locale: "en-US" });
    const page = await context.newPage();
    const chat = new ChatPage(page, url, EN);
    await chat.goto();
    await expect(page.locator("html")).toHaveAttribute("lang", "en");
    await page.locator("summary", { hasText: EN.t("settings") }).click();
    const picker = page.getByLabel(EN.t("language"));
    // Each language is listed in its own name.
    await expect(picker.locator("option")).toHaveText(["English", "Português (Brasil)", "日本語", "العربية"]);
    await Promise.all([page.waitForEvent("load"), picker.selectOption("ja")]);
    await expect(page.locator("html")).toHaveAttribute("lang", "ja");
    const ja = new Words("ja");
    await expect(page.getByRole("textbox", { name: ja.t("message") })).toBeVisible();
    expect((await context.cookies()).find((c) => c.name === "ponder_locale")?.value).toBe("ja");

    // Another tab of this browser opens in Japanese whatever its Accept-Language says.
    const other = await context.newPage();
    await other.goto(`${url}/`);
    await expect(other.locator("html")).toHaveAttribute("lang", "ja");
    await other.close();

    await page.locator("summary", { hasText: ja.t("settings") }).click();
    await Promise.all([page.waitForEvent("load"), page.getByLabel(ja.t("language")).selectOption("en")]);
    await expect(page.locator("html")).toHaveAttribute("lang", "en");
    await context.close();
  });

  test("signed in, the choice is the user's: another device opens in it", async ({ browser }) => {
    const url = SERVERS.proxyAuth.url;
    const first = await browser.newContext({ baseURL: url, extraHTTPHeaders: { "Remote-User": "lena" } });
    const page = await first.newPage();
    const chat = new ChatPage(page, url, EN);
    await chat.goto();
    await page.locator("summary", { hasText: EN.t("settings") }).click();
    await Promise.all([page.waitForEvent("load"), page.getByLabel(EN.t("language")).selectOption("ar")]);
    await expect(page.locator("html")).toHaveAttribute("dir", "rtl");
    await first.close();

    // A second device: no cookie, an English browser, the same user.
    const second = await browser.newContext({ baseURL: url, locale: "en-US", extraHTTPHeaders: { "Remote-User": "lena" } });
    const there = await second.newPage();
    await there.goto(`${url}/`);
    await expect(there.locator("html")).toHaveAttribute("lang", "ar");
    await expect(there.getByRole("textbox", { name: new Words("ar").t("message") })).toBeVisible();
    // Somebody else on that server still gets their browser's language.
    const third = await browser.newContext({ baseURL: url, locale: "pt-BR", extraHTTPHeaders: { "Remote-User": "milo" } });
    const theirs = await third.newPage();
    await theirs.goto(`${url}/`);
    await expect(theirs.locator("html")).toHaveAttribute("lang", "pt-BR");
    await second.close();
    await third.close();
  });

  test("a language Ponder does not speak falls back to English; q-weights are honoured", async () => {
    // Straight over HTTP (a browser context would add its own Accept-Language).
    const get = async (accept: string) =>
      (await (await fetch(`${SERVERS.browserHistory.url}/`, { headers: { "Accept-Language": accept } })).text()).match(
        /<html lang="([^"]+)"/,
      )?.[1];
    expect(await get("fr-FR,fr;q=0.9")).toBe("en");
    expect(await get("fr-FR,ja;q=0.8,ar;q=0.9")).toBe("ar");
    expect(await get("pt-PT")).toBe("pt-BR");
  });
});

/**
 * How far the text of the last answer's blocks (its first two paragraphs, its first list item)
 * and of the last open thought's first paragraph stands from each side of its block, and the
 * direction code is laid out in.
 */
async function textEdges(page: Page) {
  return page.evaluate(() => {
    const last = (css: string) => Array.from(document.querySelectorAll(css)).pop()!;
    const answer = last(".bubble.assistant .answer");
    const measure = (el: Element) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const text = range.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return { left: text.left - box.left, right: box.right - text.right, width: box.width };
    };
    const ps = Array.from(answer.querySelectorAll("p"));
    return {
      english: measure(ps[0]),
      arabic: measure(ps[1]),
      item: measure(answer.querySelector("li")!),
      itemDir: getComputedStyle(answer.querySelector("li")!).direction,
      thinking: measure(last(".thinking-text p")),
      pre: getComputedStyle(answer.querySelector("pre")!).direction,
      code: getComputedStyle(answer.querySelector("p code")!).direction,
    };
  });
}

/** What a reader sees and hears that Ponder wrote (not the model, not the reader). */
async function interfaceTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const own = ".markdown, .thinking-text, .tool-input, .tool-output, .source-title, .source-domain, .chat-title, .conversation-open, .search-title, .search-snippet, .bubble-body, .earlier-versions li, .answer-model, .model-name, .model-option, .model-note, code, time, .account-name strong, .brand, .code-lang, .language-picker option";
    const out = new Set<string>();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = (n.textContent ?? "").trim();
      const el = n.parentElement;
      if (!text || !el || el.closest(own) || el.closest("script, style, template")) continue;
      out.add(text);
    }
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      if (el.closest(own) || el.closest("template")) continue;
      for (const attr of ["aria-label", "title", "placeholder", "alt"]) {
        const v = el.getAttribute(attr)?.trim();
        if (v) out.add(v);
      }
    }
    return [...out];
  });
}

/** The English catalogue strings found among `texts` that the page's own catalogue does not also use. */
function englishIn(texts: string[], w: Words): string[] {
  const mine = new Set(w.strings());
  const english = EN.strings().filter((s) => !mine.has(s));
  // Templates with enough words of their own to be told apart: "Options for {title}", "Thought for {time}".
  const patterns = english
    .filter((s) => /\{\w+\}/.test(s) && s.replace(/\{\w+\}/g, "").replace(/[^A-Za-z]/g, "").length >= 4)
    .map((s) => new RegExp(`^${EN.src(s, Object.fromEntries([...s.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], ".+"])))}$`));
  const exact = new Set(english.filter((s) => !/\{\w+\}/.test(s)));
  return texts.filter((t) => exact.has(t) || patterns.some((p) => p.test(t)));
}

for (const tag of ["ja", "ar"]) {
  test.describe(`no English in the ${tag} page`, () => {
    test.use({ locale: tag });

    test("in every state: empty, a turn with tools and sources, each menu, renaming, deleting", async ({ page }) => {
      const w = new Words(tag);
      const chat = new ChatPage(page, "", w);
      const seen: string[] = [];
      const look = async (state: string) => {
        const found = englishIn(await interfaceTexts(page), w);
        seen.push(...found.map((f) => `${state}: ${f}`));
      };
      await chat.goto();
      await look("empty");
      const title = `[tools] what is new in rust, in ${tag}?`;
      await chat.send(title);
      await expect(chat.thinkingBlocks().first()).toBeVisible();
      await look("streaming");
      await chat.waitForTurnEnd();
      await chat.lastAssistant().locator(".tool-details summary").first().click();
      await chat.summary(chat.thinkingBlocks().first()).click();
      await look("answered, a block and a tool open");
      await chat.send("[500] fail");
      await chat.waitForTurnEnd();
      await look("an error");
      await page.locator("summary", { hasText: w.t("settings") }).click();
      // The menus' contents render once their chunk is here.
      await expect(page.locator('input[name="thinking-pref"]').first()).toBeVisible();
      await look("settings");
      await page.locator("summary", { hasText: w.t("export") }).click();
      await look("export");
      await page.locator("summary.model-button").click();
      await expect(page.locator("#model-search")).toBeVisible();
      await look("model picker");
      await page.keyboard.press("Escape");
      const nav = page.getByRole("navigation", { name: w.t("conversations") });
      await nav.getByLabel(w.t("options_for", { title }), { exact: true }).click();
      await look("row menu");
      await nav.getByRole("button", { name: w.t("rename"), exact: true }).click();
      await look("renaming");
      await page.keyboard.press("Escape");
      await nav.getByLabel(w.t("options_for", { title }), { exact: true }).click();
      await nav.getByRole("button", { name: w.t("delete"), exact: true }).click();
      await look("confirm delete");
      await page.locator(".disclaimer").first().click();
      await look("disclaimer");
      expect(seen).toEqual([]);
    });

    test("the check finds English where it is: the same walk over the English page", async ({ browser }) => {
      const context = await browser.newContext({ baseURL: SERVERS.browserHistory.url, locale: "en-US" });
      const page = await context.newPage();
      const chat = new ChatPage(page, SERVERS.browserHistory.url, EN);
      await chat.goto();
      await chat.send("[tools] the control");
      await chat.waitForTurnEnd();
      const found = englishIn(await interfaceTexts(page), new Words(tag));
      for (const s of [EN.t("new_chat"), EN.t("copy_answer"), EN.t("sources"), EN.t("message_placeholder")]) expect(found).toContain(s);
      expect(found.some((t) => EN.thoughtRe(15).test(t) || /^Thought/.test(t))).toBe(true);
      await context.close();
    });

    test("the sign-in page", async ({ browser }) => {
      // A fresh server-side state is not needed: the sign-in form shows to anyone not signed in.
      const context = await browser.newContext({ baseURL: SERVERS.accounts.url, locale: tag });
      const page = await context.newPage();
      await page.goto(`${SERVERS.accounts.url}/`);
      await expect(page.locator(".sign-in-form")).toBeVisible();
      expect(englishIn(await interfaceTexts(page), new Words(tag))).toEqual([]);
      await context.close();
    });
  });
}

test.describe("right to left under Arabic, each block of text in its own direction", () => {
  test.use({ locale: "ar", viewport: { width: 1280, height: 900 } });

  test("the layout mirrors; paragraphs, lists and code keep their own direction", async ({ page }) => {
    const chat = new ChatPage(page, "", new Words("ar"));
    await chat.goto();
    await chat.send("[bidi] greetings");
    await chat.waitForTurnEnd();
    await chat.settled();
    const box = async (sel: string) => (await page.locator(sel).last().boundingBox())!;

    // The reader's bubble at the left, the assistant's at the right, the sidebar on the right.
    const conversation = await box(".conversation");
    const mine = await box(".bubble.user .bubble-body");
    const theirs = await box(".bubble.assistant .answer");
    expect(mine.x - conversation.x).toBeLessThan(conversation.x + conversation.width - (mine.x + mine.width));
    expect(theirs.x + theirs.width).toBeGreaterThan(mine.x + mine.width);
    const sidebar = await box(".sidebar");
    const main = await box(".chat-main");
    expect(sidebar.x).toBeGreaterThan(main.x);

    // Where each paragraph's text starts: the English one at the left, the Arabic ones at the right.
    await chat.openBlock(chat.thinkingBlocks().first());
    const edges = await textEdges(page);
    expect(edges.english.left).toBeLessThan(2);
    expect(edges.english.right).toBeGreaterThan(20);
    expect(edges.arabic.right).toBeLessThan(2);
    expect(edges.item.right).toBeLessThan(2);
    expect(edges.itemDir).toBe("rtl");
    expect(edges.thinking.width).toBeGreaterThan(100);
    expect(edges.thinking.right).toBeLessThan(2);
    expect(edges.pre).toBe("ltr");
    expect(edges.code).toBe("ltr");
  });

  test("an Arabic paragraph in the English interface reads right to left", async ({ browser }) => {
    const context = await browser.newContext({ locale: "en-US", baseURL: SERVERS.main.url });
    const page = await context.newPage();
    const chat = new ChatPage(page, SERVERS.main.url, EN);
    await chat.goto();
    await chat.send("[bidi] in english");
    await chat.waitForTurnEnd();
    await chat.openBlock(chat.thinkingBlocks().first());
    const edges = await textEdges(page);
    expect(edges.english.left).toBeLessThan(2);
    expect(edges.arabic.right).toBeLessThan(2);
    expect(edges.arabic.left).toBeGreaterThan(20);
    // An Arabic list in an English answer: its items run right to left, markers on the right.
    expect(edges.itemDir).toBe("rtl");
    expect(edges.item.right).toBeLessThan(2);
    // The thinking, in Arabic, reads right to left beside an English interface.
    expect(edges.thinking.width).toBeGreaterThan(100);
    expect(edges.thinking.right).toBeLessThan(2);
    await context.close();
  });

  for (const scheme of ["light", "dark"] as const) {
    test(`axe finds nothing in Arabic, ${scheme}`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const chat = new ChatPage(page, "", new Words("ar"));
      await chat.goto();
      await chat.send("[tools] sources please");
      await chat.waitForTurnEnd();
      await expectNoViolations(page, `an Arabic turn with tools and sources, ${scheme}`);
      await chat.summary(chat.thinkingBlocks().first()).click();
      await page.locator("summary", { hasText: chat.w.t("settings") }).click();
      await expectNoViolations(page, `Arabic settings open, ${scheme}`);
    });
  }
});

import { expect, test, type Page } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";
import { Words } from "../pages/i18n";

// Search as the reader types: no Enter needed, the latest query's results only, one entry per
// chat with its matches, and a match in the thinking opens the block with the words highlighted.

/** Opens the phone's drawer by its toggle's state, not by where the search box is: a drawer
 * closing after New chat is still on screen for its transition, and then leaves. */
async function openDrawer(page: Page) {
  const box = page.getByRole("searchbox", { name: "Search chats" });
  const toggle = page.locator("#drawer-toggle");
  if ((await toggle.isVisible()) && (await toggle.getAttribute("aria-expanded")) !== "true") {
    await toggle.click();
  }
  await expect(box).toBeInViewport();
}

async function newChat(page: Page) {
  await openDrawer(page);
  await page.getByRole("button", { name: "New chat" }).click();
}

for (const size of [
  { name: "desktop", viewport: { width: 1440, height: 900 } },
  { name: "phone", viewport: { width: 390, height: 844 }, hasTouch: true },
]) {
  test.describe(`search (${size.name})`, () => {
    test.use({ viewport: size.viewport, hasTouch: size.hasTouch ?? false });

    test("results come as the reader types, grouped by chat; a thinking match opens its block, highlighted", async ({ page }) => {
      const word = `okapi${size.name}${Date.now().toString(36)}`;
      const chat = new ChatPage(page);
      await chat.goto();
      await chat.send(`[two-blocks] first about the ${word}`);
      await chat.waitForTurnEnd();
      await chat.send(`more on the ${word}, please`);
      await chat.waitForTurnEnd();
      await newChat(page);
      await chat.send(`second about the ${word}`);
      await chat.waitForTurnEnd();
      await newChat(page);

      await openDrawer(page);
      const search = page.getByRole("searchbox", { name: "Search chats" });
      const results = page.getByRole("region", { name: "Search results" });
      await search.pressSequentially(word, { delay: 20 });
      // Two chats, each once, however many of their messages matched.
      await expect(results.locator(".search-group")).toHaveCount(2);
      const titles = await results.locator(".search-group > .search-title").allTextContents();
      expect(new Set(titles).size).toBe(2);
      const first = results.locator(".search-group", { hasText: `first about the ${word}` });
      await expect(first.locator(".search-hit")).toHaveCount(2);
      await expect(first.locator(".search-hit mark").first()).toHaveText(new RegExp(word, "i"));
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await expectNoViolations(page, `search results, ${scheme}`);
      }

      // A new query replaces the results; none are left below it.
      await search.fill(`${word}-nothing-like-it`);
      await expect(results).toContainText("Nothing found.");
      await expect(results.locator(".search-group")).toHaveCount(0);

      await page.getByRole("search").getByRole("checkbox", { name: "Include thinking" }).check();
      await search.fill("really being asked");
      const inThinking = results
        .locator(".search-group", { hasText: `first about the ${word}` })
        .locator(".search-hit", { hasText: "In the thinking" })
        .first();
      await inThinking.click();
      await expect(chat.userBubbles().first()).toContainText(`first about the ${word}`);
      const block = page.locator(".bubble[data-revealed] .thinking").first();
      await expect(block).toHaveJSProperty("open", true);
      await expect
        .poll(() =>
          page.evaluate(() => {
            const h = (CSS as any).highlights?.get("search-hit");
            if (!h) return "";
            const [range] = [...h] as Range[];
            const inside = range.startContainer.parentElement?.closest(".thinking-text") !== null;
            return inside ? range.toString().toLowerCase() : "";
          }),
        )
        .toContain("really being asked".split(" ")[0]);
    });
  });
}

test("in Arabic, right to left, results come as the reader types and are accessible, light and dark", async ({ browser }) => {
  const ar = new Words("ar");
  const context = await browser.newContext({ locale: "ar" });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.locator("html")).toHaveAttribute("dir", "rtl");
  const word = `زرافة${Date.now().toString(36)}`;
  const box = page.getByRole("textbox", { name: ar.t("message") });
  await box.fill(`سؤال عن ${word}`);
  await page.keyboard.press("Enter");
  await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toMatch(/^\/c\//);
  await expect(page.locator(".bubble.assistant[aria-busy=false]")).toHaveCount(1, { timeout: 15_000 });
  const search = page.getByRole("searchbox", { name: ar.t("search_chats") });
  await search.pressSequentially(word, { delay: 20 });
  const results = page.getByRole("region", { name: ar.t("search_results") });
  await expect(results.locator(".search-group")).toHaveCount(1);
  await expect(results.locator(".search-hit mark").first()).toHaveText(word);
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectNoViolations(page, `Arabic search results, ${scheme}`);
  }
  await context.close();
});

import AxeBuilder from "@axe-core/playwright";
import { expect, type Browser, type Locator, type Page } from "@playwright/test";
import { words, type Words } from "./i18n";

/** A device of `user`, named by the trusted proxy's header, with the chat at `url` open. */
export async function deviceOf(browser: Browser, url: string, user: string): Promise<[Page, ChatPage]> {
  const context = await browser.newContext({ baseURL: url, extraHTTPHeaders: { "Remote-User": user } });
  const page = await context.newPage();
  const chat = new ChatPage(page, url);
  await chat.goto();
  return [page, chat];
}

/** Runs axe (WCAG 2.2 A and AA) on the settled page and expects no violation. */
export async function expectNoViolations(page: Page, state: string) {
  await new ChatPage(page).settled();
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"]).analyze();
  const summary = result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(summary, `axe violations while ${state}`).toEqual([]);
}

/** The chat page, as a reader uses it: by roles and labels, in the test's language. */
export class ChatPage {
  constructor(
    readonly page: Page,
    readonly baseUrl = "",
    /** The page's words: the project's locale unless a test uses another. */
    readonly w: Words = words(),
  ) {}

  /** Opens the page and waits until hydration made it interactive and saved chats were read. */
  async goto() {
    await this.page.goto(`${this.baseUrl}/`);
    await expect(this.page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  }

  /** Opens the model picker (its list, presets and parameters), unless it is open. */
  async openPicker() {
    const picker = this.page.locator(".model-picker");
    if (!(await picker.evaluate((d) => (d as HTMLDetailsElement).open))) {
      await picker.locator("summary").click();
    }
    await expect(this.page.locator(".model-list")).toBeVisible();
  }

  /** Closes the model picker, if it is open. */
  async closePicker() {
    const picker = this.page.locator(".model-picker");
    if (await picker.evaluate((d) => (d as HTMLDetailsElement).open)) {
      await picker.locator("summary").click();
    }
  }

  /** Sets a sampling parameter in the open picker (blank: the model's default). */
  async setParameter(label: string, value: string) {
    const field = this.page.locator("fieldset.sampling").getByLabel(label);
    await field.fill(value);
    await field.press("Tab");
  }

  /** Picks Rename or Delete (or any item, by its words) in the row menu of the conversation titled `title`. */
  async rowAction(title: string, action: "Rename" | "Delete" | { name: string }) {
    const nav = this.page.getByRole("navigation", { name: this.w.t("conversations") });
    await nav.getByLabel(this.w.t("options_for", { title }), { exact: true }).click();
    const name = typeof action === "string" ? this.w.t(action === "Rename" ? "rename" : "delete") : action.name;
    await nav.getByRole("button", { name, exact: true }).click();
  }

  composer(): Locator {
    return this.page.getByRole("textbox", { name: this.w.t("message") });
  }

  async send(text: string) {
    await this.composer().fill(text);
    await this.composer().press("Enter");
  }

  assistantBubbles(): Locator {
    return this.page.getByRole("article", { name: this.w.t("message_from_assistant") });
  }

  lastAssistant(): Locator {
    return this.assistantBubbles().last();
  }

  userBubbles(): Locator {
    return this.page.getByRole("article", { name: this.w.t("message_from_you") });
  }

  thinkingBlocks(bubble: Locator = this.lastAssistant()): Locator {
    return bubble.locator(".thinking");
  }

  summary(block: Locator): Locator {
    return block.locator("summary");
  }

  answer(bubble: Locator = this.lastAssistant()): Locator {
    return bubble.locator(".answer");
  }

  stopButton(): Locator {
    return this.page.getByRole("button", { name: this.w.t("stop_generating") });
  }

  sendButton(): Locator {
    return this.page.getByRole("button", { name: this.w.t("send") });
  }

  status(): Locator {
    return this.page.locator("[role=status][aria-live=polite]");
  }

  conversation(): Locator {
    return this.page.getByRole("main", { name: this.w.t("conversation") });
  }

  /** Resolves once the last assistant turn stopped streaming. */
  async waitForTurnEnd(bubble: Locator = this.lastAssistant()) {
    await expect(bubble).toHaveAttribute("aria-busy", "false", { timeout: 20_000 });
  }

  /** Starts recording every text the polite status region takes; read them with `announcements()`. */
  async recordAnnouncements() {
    await this.page.evaluate(() => {
      const region = document.querySelector("[role=status][aria-live=polite]")!;
      (window as any).__heard = [];
      new MutationObserver(() => (window as any).__heard.push(region.textContent)).observe(region, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
  }

  async announcements(): Promise<string[]> {
    return this.page.evaluate(() => (window as any).__heard);
  }

  /** The heights of a block and its summary one frame after the block collapses by itself. */
  async heightsAfterCollapse(block: Locator): Promise<{ summary: number; block: number }> {
    return block.evaluate(
      (el) =>
        new Promise<{ summary: number; block: number }>((resolve) => {
          const details = el as HTMLDetailsElement;
          const obs = new MutationObserver(() => {
            if (!details.open) {
              obs.disconnect();
              requestAnimationFrame(() =>
                resolve({
                  summary: details.querySelector("summary")!.getBoundingClientRect().height,
                  block: details.getBoundingClientRect().height,
                }),
              );
            }
          });
          obs.observe(details, { attributes: true, attributeFilter: ["open"] });
        }),
    );
  }

  /**
   * Resolves once the page is settled: no transition or finite animation is running (an
   * infinite one, like the thinking pulse, never ends and is not waited for). Checks that look
   * at what is on screen (axe, geometry) run on a settled page.
   */
  async settled() {
    await this.page.waitForFunction(() =>
      document
        .getAnimations()
        .every((a) => a.playState !== "running" || a.effect?.getComputedTiming().iterations === Infinity),
    );
  }

  /** Resolves once the saved record of the open chat holds `text`. */
  async savedContains(text: string) {
    await this.page.waitForFunction(
      (needle) =>
        Object.keys(localStorage).some(
          (key) => key.startsWith("ponder.chat.v1.") && (localStorage.getItem(key) ?? "").includes(needle),
        ),
      text,
    );
  }

  /**
   * Opens a folded thinking block the way a reader does, and waits for what the reader then sees:
   * the block open and its reasoning's markup back in place (a folded block parks it).
   */
  async openBlock(block: Locator) {
    await this.summary(block).click();
    await expect(block).toHaveAttribute("open", "");
    await expect(block.locator(".md-parked")).toHaveCount(0);
  }

  async isOpen(block: Locator): Promise<boolean> {
    return block.evaluate((el) => (el as HTMLDetailsElement).open);
  }
}

/** Reads the demo model's counters (streams started, completed, disconnected). */
export async function demoStats(page: Page, demoUrl: string) {
  const res = await page.request.get(`${demoUrl}/demo/stats`);
  return (await res.json()) as { started: number; completed: number; disconnected: number; active: number };
}

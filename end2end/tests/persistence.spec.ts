import { expect, test, type Page } from "@playwright/test";
import { SERVERS } from "../servers";

// Chats kept in this browser only (PONDER_HISTORY=browser): what this spec pins is localStorage.
const HISTORY = SERVERS.browserHistory.url;
import { ChatPage } from "../pages/chat";

const PREFIX = "ponder.chat.v1.";

async function storedChats(page: Page) {
  return page.evaluate((prefix) => {
    const out: any[] = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i)!;
      if (key.startsWith(prefix)) out.push(JSON.parse(localStorage.getItem(key)!));
    }
    return out;
  }, PREFIX);
}

test.describe("saved chats", () => {
  test("a reload keeps the thinking collapsed with its label, and the reader's expanded choice", async ({ page }) => {
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    await chat.send("[two-blocks] remember this");
    await chat.waitForTurnEnd();
    const blocks = chat.thinkingBlocks();
    const labels = [await chat.summary(blocks.nth(0)).textContent(), await chat.summary(blocks.nth(1)).textContent()];
    await chat.summary(blocks.nth(1)).click();
    expect(await chat.isOpen(blocks.nth(1))).toBe(true);

    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(chat.userBubbles().first()).toContainText("remember this");
    await expect(blocks).toHaveCount(2);
    expect(await chat.isOpen(blocks.nth(0))).toBe(false);
    expect(await chat.isOpen(blocks.nth(1))).toBe(true);
    await expect(chat.summary(blocks.nth(0))).toHaveText(labels[0]!);
    await expect(chat.summary(blocks.nth(1))).toHaveText(labels[1]!);
    await expect(chat.answer()).toContainText("Verified: the answer stands.");
    await chat.summary(blocks.nth(0)).click();
    await expect(blocks.nth(0).locator(".thinking-text")).toContainText("pin down what is really being asked");
  });

  test("a reload mid-stream keeps the user message and what had arrived, marked interrupted", async ({ page }) => {
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    await chat.send("[long] cut me off");
    await expect(chat.answer()).toContainText("Part 2");
    await chat.savedContains("Part 2");
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(chat.userBubbles().first()).toContainText("cut me off");
    await expect(chat.answer()).toContainText("A longer answer");
    await expect(chat.lastAssistant().locator(".error-message")).toContainText(chat.w.t("error_interrupted"));
    await expect(chat.lastAssistant().getByRole("button", { name: chat.w.t("retry") })).toBeVisible();
  });

  test("an old record without thinking renders as a plain chat", async ({ page }) => {
    await page.addInitScript(() => {
      if (sessionStorage.getItem("seeded")) return;
      sessionStorage.setItem("seeded", "1");
      localStorage.setItem(
        "ponder.chat.v1.old",
        JSON.stringify({
          id: "old",
          title: "An old chat",
          created_at: 1700000000000,
          updated_at: 1700000000000,
          messages: [
            { role: "user", content: "What is 2+2?" },
            { role: "assistant", content: "It is **4**." },
          ],
        }),
      );
      localStorage.setItem("ponder.settings.v1", JSON.stringify({ last_conversation: "old" }));
    });
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    await expect(chat.userBubbles().first()).toHaveText(/What is 2\+2\?/);
    await expect(chat.answer()).toContainText("It is 4.");
    await expect(chat.answer().locator("strong")).toHaveText("4");
    await expect(page.locator(".thinking")).toHaveCount(0);
    await expect(chat.lastAssistant().locator(".error-message")).toHaveCount(0);
    await expect(page.getByRole("navigation", { name: chat.w.t("conversations") })).toContainText("An old chat");
  });

  test("corrupt data under the key: the app starts clean, keeps the value aside, and says so once", async ({ page }) => {
    await page.addInitScript(() => {
      if (sessionStorage.getItem("seeded")) return;
      sessionStorage.setItem("seeded", "1");
      localStorage.setItem("ponder.chat.v1.broken", "{this is not json");
      localStorage.setItem("ponder.chat.v1.foreign", JSON.stringify({ hello: "world" }));
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    const notice = page.locator(".notice[data-kind=corrupt]");
    await expect(notice).toHaveCount(1);
    await expect(notice).toContainText(chat.w.re("storage_unreadable", { detail: "\\S+" }));
    const backups = await page.evaluate(() =>
      Object.keys(localStorage).filter((k) => k.startsWith("ponder.backup.")).map((k) => localStorage.getItem(k)),
    );
    expect(backups).toContain("{this is not json");
    expect(backups).toContain(JSON.stringify({ hello: "world" }));
    await chat.send("[no-think] still works");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Here is what I found");
    await page.reload();
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(page.locator(".notice[data-kind=corrupt]")).toHaveCount(0);
    expect(errors).toEqual([]);
  });

  test("storage full (QuotaExceededError): chatting keeps working and a notice says history is not saved", async ({ page }) => {
    await page.addInitScript(() => {
      const original = Storage.prototype.setItem;
      Storage.prototype.setItem = function (key: string, value: string) {
        if (key.startsWith("ponder.chat.")) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
        return original.call(this, key, value);
      };
    });
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    await chat.send("Why is the sky blue?");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Let me know if you want more detail.");
    await expect(page.locator(".notice[data-kind=save]")).toContainText(chat.w.t("storage_full"));
    await chat.send("[no-think] and again");
    await chat.waitForTurnEnd();
    await expect(chat.assistantBubbles()).toHaveCount(2);
  });

  test("storage unavailable: chatting keeps working and says so", async ({ page }) => {
    await page.addInitScript(() => {
      Object.defineProperty(window, "localStorage", {
        get() {
          throw new DOMException("The operation is insecure.", "SecurityError");
        },
      });
    });
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    await expect(page.locator(".notice[data-kind=storage]")).toContainText(chat.w.t("storage_unavailable"));
    await chat.send("[no-think] hi");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("Here is what I found");
  });

  test("a second tab sees a new conversation appear in its list", async ({ page, context }) => {
    const first = new ChatPage(page, HISTORY);
    await first.goto();
    const other = await context.newPage();
    const second = new ChatPage(other, HISTORY);
    await second.goto();
    await first.send("[no-think] A chat from tab one");
    await first.waitForTurnEnd();
    await expect(other.getByRole("navigation", { name: second.w.t("conversations") })).toContainText("A chat from tab one");
    await other.getByRole("button", { name: "[no-think] A chat from tab one", exact: true }).click();
    await expect(second.answer()).toContainText("Here is what I found");
  });

  test("the same chat changed in two tabs: nothing is lost", async ({ page, context }) => {
    const first = new ChatPage(page, HISTORY);
    await first.goto();
    await first.send("[no-think] shared chat");
    await first.waitForTurnEnd();
    const other = await context.newPage();
    const second = new ChatPage(other, HISTORY);
    await second.goto();
    await expect(second.userBubbles().first()).toContainText("shared chat");
    await second.send("[no-think] from tab two");
    await second.waitForTurnEnd();
    await expect(first.userBubbles()).toHaveCount(2);
    await expect(first.userBubbles().last()).toContainText("from tab two");
    const chats = await storedChats(page);
    expect(chats).toHaveLength(1);
    expect(chats[0].messages).toHaveLength(4);
  });

  test("conversations: new, switch, rename, delete with confirm, most recent first; titles from the first message", async ({ page }) => {
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    const w = chat.w;
    const nav = page.getByRole("navigation", { name: w.t("conversations") });
    await chat.send("[no-think] First topic");
    await chat.waitForTurnEnd();
    await nav.getByRole("button", { name: w.t("new_chat") }).click();
    await expect(chat.userBubbles()).toHaveCount(0);
    await chat.send("Second topic");
    await chat.waitForTurnEnd();
    const items = nav.locator(".conversation-open");
    await expect(items).toHaveText(["Second topic", "[no-think] First topic"]);
    const chats = await storedChats(page);
    expect(chats.map((c) => c.title).sort()).toEqual(["Second topic", "[no-think] First topic"]);
    expect(JSON.stringify(chats)).not.toContain('"title":"The user wants');

    await nav.getByRole("button", { name: "[no-think] First topic", exact: true }).click();
    await expect(chat.userBubbles().first()).toContainText("First topic");

    await chat.rowAction("Second topic", "Rename");
    await nav.getByLabel(w.t("new_title")).fill("Renamed");
    await nav.getByLabel(w.t("new_title")).press("Enter");
    await expect(items.first()).toHaveText("Renamed");

    await chat.rowAction("Renamed", "Delete");
    await nav.getByRole("button", { name: w.t("keep") }).click();
    await expect(items).toHaveCount(2);
    await chat.rowAction("Renamed", "Delete");
    await nav.getByRole("button", { name: w.t("yes_delete") }).click();
    await expect(items).toHaveText(["[no-think] First topic"]);
    expect(await storedChats(page)).toHaveLength(1);
  });

  test("on a narrow screen the list is a drawer", async ({ page }) => {
    await page.setViewportSize({ width: 420, height: 800 });
    const chat = new ChatPage(page, HISTORY);
    await chat.goto();
    const nav = page.getByRole("navigation", { name: chat.w.t("conversations") });
    await expect(nav).not.toBeInViewport();
    const toggle = page.getByRole("button", { name: chat.w.t("open_sidebar") });
    await expect(toggle).toHaveAttribute("aria-expanded", "false");
    await toggle.click();
    await expect(toggle).toHaveAttribute("aria-expanded", "true");
    await expect(nav).toBeInViewport();
  });

  for (const withThinking of [true, false]) {
    test(`export as Markdown and JSON ${withThinking ? "with" : "without"} thinking`, async ({ page }) => {
      const chat = new ChatPage(page, HISTORY);
      await chat.goto();
      await chat.send("Why is the sky blue?");
      await chat.waitForTurnEnd();
      const w = chat.w;
      await page.getByText(w.t("export"), { exact: true }).click();
      const box = page.getByLabel(w.t("include_thinking"));
      if (withThinking) await box.check();
      else await box.uncheck();
      const [md] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: w.t("download_markdown") }).click()]);
      const markdown = await streamText(await md.createReadStream());
      expect(md.suggestedFilename()).toMatch(/\.md$/);
      expect(markdown).toContain("Why is the sky blue?");
      expect(markdown).toContain("Let me know if you want more detail.");
      expect(markdown.includes("<details>")).toBe(withThinking);
      expect(markdown.includes("pin down what is really being asked")).toBe(withThinking);
      // The block's header, as on the page, in the reader's language.
      const header = w.thoughtRe(82).source.replace(/^\^|\$$/g, "");
      if (withThinking) expect(markdown).toMatch(new RegExp(`<summary>${header}</summary>`));

      const [js] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: w.t("download_json") }).click()]);
      const record = JSON.parse(await streamText(await js.createReadStream()));
      expect(record.messages).toHaveLength(2);
      expect(record.messages[1].content).toContain("Let me know");
      expect(Boolean(record.messages[1].thinking)).toBe(withThinking);
    });
  }
});

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

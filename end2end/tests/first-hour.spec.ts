import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";

// What a new user met in the first hour (issue #41), each pinned where it was reproduced.

function conversations(page: Page) {
  return page.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open");
}

test("a second tab opened after a reload follows the running answer live, not as interrupted", async ({ page, context }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] two tabs after a reload");
  await expect(chat.summary(chat.thinkingBlocks().first())).toContainText("Thinking… (2s)", { timeout: 5_000 });
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  // This tab keeps its copy of the server's chat (with the server's ids) while it follows the turn.
  await page.waitForFunction(() =>
    Object.keys(localStorage).some(
      (k) => k.startsWith("ponder.chat.v1.") && JSON.parse(localStorage.getItem(k) ?? "{}").server_copy === true,
    ),
  );

  const tab = await context.newPage();
  const second = new ChatPage(tab);
  await second.goto();
  await expect(second.userBubbles().first()).toContainText("two tabs after a reload");
  await expect(second.thinkingBlocks().first()).toHaveClass(/streaming/);
  await expect(second.lastAssistant().locator(".error-message")).toHaveCount(0);
  await expect(second.stopButton()).toBeVisible();
  await expect(second.answer()).toContainText("Let me know if you want more detail.", { timeout: 25_000 });
  await second.waitForTurnEnd();
  await expect(second.lastAssistant().locator(".error-message")).toHaveCount(0);
  await expect(second.summary(second.thinkingBlocks().first())).toContainText(/Thought for \d/);
  await chat.waitForTurnEnd();
});

test("a new chat is listed once while its first answer streams", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const title = `listed once ${Date.now().toString(36)}`;
  await chat.send(`[long-think] ${title}`);
  await expect(chat.thinkingBlocks().first()).toHaveClass(/streaming/);
  await expect(conversations(page).filter({ hasText: title }).first()).toBeVisible();
  // Past the throttled saves under the server's id; still streaming, so the list has not been
  // asked for again (which would hide a second entry). Counted once, not waited on.
  await expect(chat.summary(chat.thinkingBlocks().first())).toContainText("Thinking… (3s)", { timeout: 6_000 });
  expect(await conversations(page).filter({ hasText: title }).count()).toBe(1);
  await chat.stopButton().click();
  await expect(conversations(page).filter({ hasText: title })).toHaveCount(1);
});

test("the browser's own copy of a server chat is never offered for import", async ({ page, context }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("a chat kept on the server");
  await chat.waitForTurnEnd();
  await chat.savedContains("a chat kept on the server");
  const marked = await page.evaluate(() =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith("ponder.chat.v1."))
      .map((k) => JSON.parse(localStorage.getItem(k) ?? "{}").server_copy),
  );
  expect(marked.length).toBeGreaterThan(0);
  expect(marked.every((m) => m === true)).toBe(true);
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(chat.userBubbles().first()).toContainText("a chat kept on the server");
  await expect(page.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
  const tab = await context.newPage();
  await new ChatPage(tab).goto();
  await expect(tab.getByRole("region", { name: "Chats in this browser" })).toHaveCount(0);
});

test("the picker reads as a control, has one panel, and a model without controls does not move the box", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const picker = page.locator(".model-picker");
  const chevron = await picker.locator(".model-button").evaluate((el) => getComputedStyle(el, "::after").content);
  expect(chevron).not.toBe("none");
  await picker.locator("summary").click();
  await expect(picker.locator(".model-panel")).toHaveCount(1);
  const panel = await picker.locator(".model-panel").boundingBox();
  const search = await page.getByLabel("Search models").boundingBox();
  expect(search!.y - panel!.y).toBeLessThan(20);
  const before = (await page.locator(".composer-row").boundingBox())!.y;
  await page.getByLabel("Search models").fill("mini");
  await picker.locator(".model-option").first().click();
  await expect(page.getByLabel("Effort")).toHaveCount(0);
  expect((await page.locator(".composer-row").boundingBox())!.y).toBe(before);
});

test("closing a block with the reader at the top leaves no phantom room, and the next chat no Jump to latest", async ({ page }) => {
  await page.setViewportSize({ width: 1000, height: 600 });
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[two-blocks] room check");
  await chat.waitForTurnEnd();
  await chat.send("[two-blocks] and once more");
  await chat.waitForTurnEnd();
  const block = chat.thinkingBlocks().first();
  await chat.summary(block).click();
  await expect.poll(() => chat.isOpen(block)).toBe(true);
  await page.locator("main.conversation").evaluate((el) => (el.scrollTop = 0));
  await chat.summary(block).click();
  await expect.poll(() => chat.isOpen(block)).toBe(false);
  await expect.poll(() => page.locator(".scroll-spacer").evaluate((el) => el.getBoundingClientRect().height)).toBe(0);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(chat.userBubbles()).toHaveCount(0);
  await expect(page.locator(".jump-latest")).toHaveCount(0);
  expect(await page.locator(".scroll-spacer").evaluate((el) => el.getBoundingClientRect().height)).toBe(0);
});

test("a finished block opens at the start of its reasoning, before and after a reload", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[long-think] where does it open");
  await chat.waitForTurnEnd();
  for (const reload of [false, true]) {
    if (reload) {
      await page.reload();
      await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    }
    const block = chat.thinkingBlocks().first();
    if (await chat.isOpen(block)) await chat.summary(block).click();
    await chat.summary(block).click();
    const scroller = block.locator(".thinking-scroll");
    await expect(block.locator(".thinking-text")).toContainText("Step 12");
    // Taller than its box: there is somewhere else it could have started.
    expect(await scroller.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))));
    expect(await scroller.evaluate((el) => el.scrollTop)).toBe(0);
  }
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true });

  test("the model picker opens inside the screen, and the chat's title has room", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await chat.send("a long title about the migration of birds over the sea");
    await chat.waitForTurnEnd();
    const title = await page.locator(".chat-title").boundingBox();
    expect(title!.width).toBeGreaterThanOrEqual(80);
    await page.locator(".model-picker summary").tap();
    const search = await page.getByLabel("Search models").boundingBox();
    expect(search!.x).toBeGreaterThanOrEqual(0);
    expect(search!.x + search!.width).toBeLessThanOrEqual(390);
    const option = await page.locator(".model-picker .model-option").first().boundingBox();
    expect(option!.x).toBeGreaterThanOrEqual(0);
  });
});

test("no console warning about the Permissions-Policy, and no refused models request before sign-in", async ({ browser }) => {
  const { SERVERS } = await import("../servers");
  const context = await browser.newContext();
  const page = await context.newPage();
  const warnings: string[] = [];
  const refused: string[] = [];
  page.on("console", (m) => warnings.push(m.text()));
  page.on("response", (r) => {
    if (r.status() >= 400) refused.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(`${SERVERS.accounts.url}/`);
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.getByRole("textbox", { name: "Name" })).toBeVisible();
  await page.waitForLoadState("networkidle");
  expect(warnings.filter((w) => w.includes("Permissions-Policy") || w.includes("Unrecognized feature"))).toEqual([]);
  expect(refused.filter((r) => r.includes("/api/models"))).toEqual([]);

  // A sign-in that cannot reach Ponder says so in words, not in the transport's.
  await page.route("**/api/auth/**", (r) => r.abort());
  await page.getByRole("textbox", { name: "Name" }).fill("someone");
  await page.getByLabel("Password").fill("a-password-123");
  await page.locator(".sign-in button[type=submit], .sign-in-form button[type=submit]").first().click();
  await expect(page.locator(".sign-in-error")).toHaveText("Ponder could not be reached.");
  await context.close();
});

test("the keyboard starts with a skip link, reaches the header before the chat list, and Regenerate keeps the focus", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  for (let i = 0; i < 3; i++) {
    await chat.send(`chat number ${i}`);
    await chat.waitForTurnEnd();
    await page.getByRole("button", { name: "New chat" }).click();
  }
  await chat.send("the one to regenerate");
  await chat.waitForTurnEnd();

  // From the start of the page, as a keyboard reader arriving does.
  await page.evaluate(() => {
    document.body.tabIndex = -1;
    document.body.focus();
    document.body.removeAttribute("tabindex");
  });
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to the message box" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press("Enter");
  await expect(chat.composer()).toBeFocused();

  // In tab order the header's Settings comes before the first chat of the list.
  const order = await page.evaluate(() => {
    const focusable = [...document.querySelectorAll<HTMLElement>("a[href], button, summary, input, textarea, select")].filter(
      (el) => el.offsetParent !== null && el.tabIndex >= 0,
    );
    const settings = focusable.findIndex((el) => el.closest("details.menu") && el.textContent?.includes("Settings"));
    const firstChat = focusable.findIndex((el) => el.classList.contains("conversation-open"));
    return { settings, firstChat };
  });
  expect(order.settings).toBeGreaterThanOrEqual(0);
  expect(order.settings).toBeLessThan(order.firstChat);

  await chat.lastAssistant().getByRole("button", { name: "Regenerate" }).click();
  await expect(chat.stopButton()).toBeFocused();
  await chat.waitForTurnEnd();
  expect(await page.evaluate(() => document.activeElement === document.body)).toBe(false);
});

test("the picker names what its model can do; every plain choice is the same styled control", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const button = page.locator(".model-picker .model-button");
  await expect(button.locator(".model-tag")).toHaveText("reasons");
  await expect(page.getByLabel("Effort")).toBeVisible();
  await page.getByText("Settings", { exact: true }).click();
  await expect(page.getByLabel("Language")).toBeVisible();
  // No native select beside the pills: each is drawn as the app's pill, with the menus' chevron.
  const selects = page.locator("select");
  expect(await selects.count()).toBeGreaterThanOrEqual(2);
  for (const select of await selects.all()) {
    const look = await select.evaluate((el) => {
      const style = getComputedStyle(el);
      const wrapper = el.parentElement!;
      return {
        appearance: style.appearance,
        radius: style.borderTopLeftRadius,
        chevron: getComputedStyle(wrapper, "::after").content,
        choice: wrapper.classList.contains("choice"),
      };
    });
    expect(look.choice).toBe(true);
    expect(look.appearance).not.toBe("auto");
    expect(look.radius).toBe("999px");
    expect(look.chevron).not.toBe("none");
  }
});

test("a chat's title has the row's width in the list, the menu button over its end only when wanted", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const chat = new ChatPage(page);
  await chat.goto();
  const long = `A title long enough to need the whole row ${Date.now()}`;
  await chat.send(long);
  await chat.waitForTurnEnd();
  await page.getByRole("button", { name: "New chat" }).click();
  const row = conversations(page).filter({ hasText: long }).locator("xpath=..");
  await page.mouse.move(900, 400);
  const widths = await row.evaluate((li) => {
    const title = li.querySelector(".conversation-open") as HTMLElement;
    return { row: li.clientWidth, title: title.clientWidth, text: title.scrollWidth };
  });
  expect(widths.title).toBe(widths.row);
  // About 30 characters of the title show in a 1280 px window (17 did before).
  expect(widths.title).toBeGreaterThanOrEqual(250);
});

import { expect, test } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage } from "../pages/chat";

// Titles by the model: after a new chat's first answer the model's title replaces the first
// words in the top bar and the list, with none of the reasoning the model wrote around it; a
// reload and the list keep it.

test("a model-made title appears with no reasoning in it", async ({ page }) => {
  const chat = new ChatPage(page, SERVERS.main.url);
  await chat.goto();
  await chat.send("[titled] Why do tides come twice a day?");
  await chat.waitForTurnEnd();
  await expect(page.locator(".chat-title")).toHaveText("A Title by the Demo Model");
  const list = page.getByRole("navigation", { name: "Conversations" });
  await expect(list.getByText("A Title by the Demo Model")).toBeVisible();
  await expect(page.locator("body")).not.toContainText("DEMO-TITLE-REASONING");
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.locator(".chat-title")).toHaveText("A Title by the Demo Model");
  expect(await page.title()).not.toContain("DEMO-TITLE-REASONING");
});

test("a reader who turns titles off in the settings keeps the first words", async ({ browser }) => {
  const url = SERVERS.instructions.url;
  const context = await browser.newContext({ baseURL: url, extraHTTPHeaders: { "Remote-User": `tia-${Date.now()}` } });
  const page = await context.newPage();
  const chat = new ChatPage(page, url);
  await chat.goto();
  await page.locator("details.menu", { has: page.locator("summary", { hasText: "Settings" }) }).locator("summary").click();
  const setting = page.getByLabel("Let the model name new chats after their first answer");
  await expect(setting).toBeChecked();
  const kept = page.waitForResponse((r) => r.url().endsWith("/api/preferences/set"));
  await setting.uncheck();
  expect((await kept).status()).toBe(200);
  await page.keyboard.press("Escape");
  await chat.send("[titled] Why do tides come twice a day?");
  await chat.waitForTurnEnd();
  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(page.locator(".chat-title")).toHaveText("[titled] Why do tides come twice a day?");
  await context.close();
});

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

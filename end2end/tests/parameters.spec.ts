import { expect, test, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage } from "../pages/chat";

// Sampling parameters in the model picker: a field shows only for a parameter the model takes
// (the demo's deep model lists only an output limit), nothing is sent unless set, what is set
// reaches the model (the demo answers `[params]` with what it got) and stays with the chat
// across a reload; a value out of range is refused with its range; a parameter the upstream
// refuses ends with "Send again without the setting".

async function pick(page: Page, query: string) {
  await new ChatPage(page).openPicker();
  await page.getByLabel("Search models").fill(query);
  await page.locator(".model-option").first().click();
}

test("a field shows only for a parameter the model takes, and what is set reaches it", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.openPicker();
  const sampling = page.locator("fieldset.sampling");
  await expect(sampling.getByLabel("Temperature")).toBeVisible();
  await expect(sampling.getByLabel("Top-p")).toBeVisible();
  await expect(sampling.getByLabel("Output limit (tokens)")).toHaveAttribute("placeholder", "Model default");

  await chat.setParameter("Top-p", "3");
  await expect(sampling.getByLabel("Top-p")).toHaveAttribute("aria-invalid", "true");
  await expect(sampling.locator(".sampling-hint.wrong")).toHaveText("From 0 to 1.");
  await chat.setParameter("Top-p", "");
  await expect(sampling.getByLabel("Top-p")).toHaveAttribute("aria-invalid", "false");

  await chat.setParameter("Temperature", "0.7");
  await chat.setParameter("Output limit (tokens)", "400");
  await chat.closePicker();
  await chat.send("[params] what did you get?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("temperature: 0.7");
  await expect(chat.answer()).toContainText("top-p: not sent");
  await expect(chat.answer()).toContainText("output limit: 400");

  await page.reload();
  await chat.openPicker();
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveValue("0.7");
  await chat.closePicker();

  await pick(page, "deep");
  await chat.openPicker();
  await expect(page.locator("fieldset.sampling").getByLabel("Output limit (tokens)")).toBeVisible();
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveCount(0);
  await chat.closePicker();
  await chat.send("[params] and the deep one?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("temperature: not sent");
  await expect(chat.answer()).toContainText("output limit: 400");

  await chat.openPicker();
  await page.getByRole("button", { name: "Use the model’s defaults" }).click();
  await chat.closePicker();
  await chat.send("[params] and now?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).not.toContainText("output limit: 400");
});

test("a parameter the model server refuses ends with Send again without the setting", async ({ browser }) => {
  const url = SERVERS.instructions.url;
  const context = await browser.newContext({ baseURL: url, extraHTTPHeaders: { "Remote-User": `pia-${Date.now()}` } });
  const page = await context.newPage();
  const chat = new ChatPage(page, url);
  await chat.goto();
  await pick(page, "deep");
  await chat.openPicker();
  const sampling = page.locator("fieldset.sampling");
  await chat.setParameter("Temperature", "0.5");
  await chat.closePicker();
  await chat.send("hello there");
  const again = chat.lastAssistant().getByRole("button", { name: "Send again without the setting" });
  await expect(again).toBeVisible();
  await expect(chat.lastAssistant()).toContainText("temperature");
  await again.click();
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("Here is what I found");
  await chat.openPicker();
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveValue("");
  await context.close();
});

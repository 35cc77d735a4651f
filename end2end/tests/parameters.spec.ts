import { expect, test, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage } from "../pages/chat";

// Sampling parameters in the model picker: a field shows only for a parameter the model takes
// (the demo's deep model lists only an output limit), nothing is sent unless set, what is set
// reaches the model (the demo answers `[params]` with what it got) and stays with the chat
// across a reload; a value out of range is refused with its range; a parameter the upstream
// refuses ends with "Send again without the setting".

async function openPicker(page: Page) {
  const picker = page.locator(".model-picker");
  if (!(await picker.evaluate((d) => (d as HTMLDetailsElement).open))) {
    await picker.locator("summary").click();
  }
  await expect(page.locator(".model-list")).toBeVisible();
}

async function closePicker(page: Page) {
  const picker = page.locator(".model-picker");
  if (await picker.evaluate((d) => (d as HTMLDetailsElement).open)) {
    await picker.locator("summary").click();
  }
}

async function pick(page: Page, query: string) {
  await openPicker(page);
  await page.getByLabel("Search models").fill(query);
  await page.locator(".model-option").first().click();
}

test("a field shows only for a parameter the model takes, and what is set reaches it", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await openPicker(page);
  const sampling = page.locator("fieldset.sampling");
  await expect(sampling.getByLabel("Temperature")).toBeVisible();
  await expect(sampling.getByLabel("Top-p")).toBeVisible();
  await expect(sampling.getByLabel("Output limit (tokens)")).toHaveAttribute("placeholder", "Model default");

  await sampling.getByLabel("Top-p").fill("3");
  await sampling.getByLabel("Top-p").press("Tab");
  await expect(sampling.getByLabel("Top-p")).toHaveAttribute("aria-invalid", "true");
  await expect(sampling.locator(".sampling-hint.wrong")).toHaveText("From 0 to 1.");
  await sampling.getByLabel("Top-p").fill("");
  await sampling.getByLabel("Top-p").press("Tab");
  await expect(sampling.getByLabel("Top-p")).toHaveAttribute("aria-invalid", "false");

  await sampling.getByLabel("Temperature").fill("0.7");
  await sampling.getByLabel("Temperature").press("Tab");
  await sampling.getByLabel("Output limit (tokens)").fill("400");
  await sampling.getByLabel("Output limit (tokens)").press("Tab");
  await closePicker(page);
  await chat.send("[params] what did you get?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("temperature: 0.7");
  await expect(chat.answer()).toContainText("top-p: not sent");
  await expect(chat.answer()).toContainText("output limit: 400");

  await page.reload();
  await openPicker(page);
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveValue("0.7");
  await closePicker(page);

  await pick(page, "deep");
  await openPicker(page);
  await expect(page.locator("fieldset.sampling").getByLabel("Output limit (tokens)")).toBeVisible();
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveCount(0);
  await closePicker(page);
  await chat.send("[params] and the deep one?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("temperature: not sent");
  await expect(chat.answer()).toContainText("output limit: 400");

  await openPicker(page);
  await page.getByRole("button", { name: "Use the model’s defaults" }).click();
  await closePicker(page);
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
  await openPicker(page);
  const sampling = page.locator("fieldset.sampling");
  await sampling.getByLabel("Temperature").fill("0.5");
  await sampling.getByLabel("Temperature").press("Tab");
  await closePicker(page);
  await chat.send("hello there");
  const again = chat.lastAssistant().getByRole("button", { name: "Send again without the setting" });
  await expect(again).toBeVisible();
  await expect(chat.lastAssistant()).toContainText("temperature");
  await again.click();
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("Here is what I found");
  await openPicker(page);
  await expect(page.locator("fieldset.sampling").getByLabel("Temperature")).toHaveValue("");
  await context.close();
});

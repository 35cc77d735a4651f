import { expect, test } from "@playwright/test";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Presets in the model picker: the current model, reasoning settings, parameters and
// instructions saved under a name, kept on the server (a reload, another device), and set
// again in one pick; the demo reports what reached it.

test("a preset sets the model, effort, parameters and instructions in one pick", async ({ page, browser }) => {
  const name = `Focused ${Date.now()}`;
  const chat = new ChatPage(page);
  await chat.goto();
  await page.getByLabel("Effort").selectOption("high");
  await chat.openPicker();
  await chat.setParameter("Temperature", "0.4");
  await chat.setParameter("Output limit (tokens)", "300");
  await page.getByRole("button", { name: "Save these settings as a preset…" }).click();
  await page.getByLabel("Preset name").fill(name);
  await page.getByLabel("Instructions for the chats it starts (optional)").fill("PRESET-RULE: answer in haiku.");
  await page.locator(".preset-form").getByRole("button", { name: "Save" }).click();
  await expect(chat.status()).toHaveText("Preset saved");
  await expect(page.locator(".preset-option", { hasText: name })).toBeVisible();
  await expectNoViolations(page, "the model picker shows presets and parameters");

  // Everything back to other values, as on another day.
  await page.getByLabel("Search models").fill("mini");
  await page.locator(".model-option").first().click();
  await chat.openPicker();
  await page.getByRole("button", { name: "Use the model’s defaults" }).click();
  await chat.closePicker();
  await expect(page.getByLabel("Effort")).toHaveCount(0);

  // Another device: the preset is on the server.
  const other = await browser.newPage();
  const elsewhere = new ChatPage(other);
  await elsewhere.goto();
  await elsewhere.openPicker();
  await other.locator(".preset-option", { hasText: name }).click();
  await expect(other.locator(".model-picker summary")).toHaveAccessibleName("Model: Ponder demo");
  await expect(other.getByLabel("Effort")).toHaveValue("high");
  await elsewhere.openPicker();
  await expect(other.locator("fieldset.sampling").getByLabel("Temperature")).toHaveValue("0.4");
  await expect(other.locator("fieldset.sampling").getByLabel("Output limit (tokens)")).toHaveValue("300");
  await elsewhere.closePicker();
  await elsewhere.send("[params] what did you get?");
  await elsewhere.waitForTurnEnd();
  await expect(elsewhere.answer()).toContainText("temperature: 0.4");
  await expect(elsewhere.answer()).toContainText("output limit: 300");
  await elsewhere.send("[system] and what were you told?");
  await elsewhere.waitForTurnEnd();
  await expect(elsewhere.answer()).toContainText("PRESET-RULE: answer in haiku.");
  await other.close();

  // Its owner deletes it.
  await chat.openPicker();
  await page.getByRole("button", { name: `Delete the preset ${name}` }).click();
  await expect(page.locator(".preset-option", { hasText: name })).toHaveCount(0);
});

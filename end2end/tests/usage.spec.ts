import { expect, test, type Browser, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, deviceOf, expectNoViolations } from "../pages/chat";

// Settings → Usage after a few demo turns: the month's totals, tokens per day split into
// reasoning, answer and input, time spent thinking and cost per day (each an SVG with its table),
// each model's share; the administrator sees every reader and exports CSV; in light and dark, axe
// clean. A reader over their limit (one token a day on this server) sees the refusal, with when it
// resets, in the page and nothing is sent to the model.

const URL = SERVERS.usage.url;

function device(browser: Browser, user: string): Promise<[Page, ChatPage]> {
  return deviceOf(browser, URL, user);
}

async function openUsage(page: Page) {
  await page.getByText("Settings", { exact: true }).click();
  await page.getByRole("button", { name: "Usage", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Usage" });
  await expect(dialog).toBeVisible();
  await expect(page.locator("details.menu[open]")).toHaveCount(0);
  return dialog;
}

test("the administrator's usage page charts the month, reader by reader, in light and dark", async ({ browser }) => {
  // The first reader of this server is its administrator, exempt from the limit.
  const [page, chat] = await device(browser, "usage-admin");
  for (const question of ["why is the sky blue?", "and the sunset?"]) {
    await chat.send(question);
    await chat.waitForTurnEnd();
  }
  // The answer's line says what it counted and what it cost.
  await expect(chat.lastAssistant().locator(".answer-usage")).toContainText(/out \([\d,]+ thinking\) · EUR \d+\.\d+/);

  const dialog = await openUsage(page);
  const totals = dialog.locator(".usage-totals");
  await expect(totals).toContainText("Turns2");
  await expect(totals).toContainText("EUR");
  const tokens = dialog.getByRole("region", { name: "Tokens per day" });
  const chart = tokens.getByRole("img", { name: "Tokens per day" });
  await expect(chart).toBeVisible();
  // Today's bar has its three parts; every day so far has a column.
  const today = new Date().getUTCDate();
  await expect(chart.locator("g.usage-bar")).toHaveCount(today);
  const last = chart.locator("g.usage-bar").last();
  for (const part of ["input", "answer", "reasoning"]) {
    await expect(last.locator(`rect.usage-${part}`)).toHaveCount(1);
  }
  await expect(last.locator("title")).toContainText("reasoning");
  // The table behind it holds the same day.
  await tokens.getByText("The numbers").click();
  const day = new Date().toISOString().slice(0, 10);
  await expect(tokens.getByRole("row", { name: new RegExp(day) })).toBeVisible();
  await expect(dialog.getByRole("region", { name: "Time spent thinking per day" }).getByRole("img")).toBeVisible();
  await expect(dialog.getByRole("region", { name: "Cost per day" }).getByRole("img")).toBeVisible();
  const models = dialog.getByRole("region", { name: "By model" });
  await expect(models.getByRole("row")).toHaveCount(2);
  await expect(models).toContainText("100.0%");
  await expectNoViolations(page, "the usage page is open, light");

  // Everyone's usage: another reader's turn shows up under their name.
  const [other, otherChat] = await device(browser, "usage-bo");
  await otherChat.send("hello there");
  await otherChat.waitForTurnEnd();
  await other.context().close();
  await dialog.getByLabel("Everyone's usage").check();
  const readers = dialog.getByRole("region", { name: "By reader" });
  await expect(readers).toContainText("usage-bo");
  await expect(readers).toContainText("usage-admin");
  await expect(totals).toContainText("Turns3");
  const href = await dialog.getByRole("link", { name: "Download CSV" }).getAttribute("href");
  expect(href).toContain("everyone=1");
  const csv = await page.request.get(`${URL}${href!.replace(/^.*\/api/, "/api")}`);
  expect(csv.status()).toBe(200);
  const lines = (await csv.text()).trim().split(/\r?\n/);
  expect(lines[0]).toContain("reasoning_tokens");
  expect(lines.filter((l) => l.includes(",usage-bo,"))).toHaveLength(1);

  // One reader's month, from everyone's.
  await readers.getByRole("button", { name: "usage-bo" }).click();
  await expect(dialog.getByRole("heading", { name: "Reader: usage-bo" })).toBeVisible();
  await expect(totals).toContainText("Turns1");
  expect(await dialog.getByRole("link", { name: "Download CSV" }).getAttribute("href")).toContain("reader=usage-bo");

  await page.emulateMedia({ colorScheme: "dark" });
  await expectNoViolations(page, "the usage page is open, dark");
  await dialog.getByRole("button", { name: "Close" }).click();
  await expect(dialog).toHaveCount(0);
});

test("a reader over their limit sees the refusal and when it resets; the model is not asked", async ({ browser }) => {
  const [page, chat] = await device(browser, `usage-ann-${Date.now()}`);
  await chat.send("first question of the day");
  await chat.waitForTurnEnd();
  // That turn crossed the limit: it finished, and its usage line says so.
  await expect(chat.lastAssistant().locator(".answer-usage")).toContainText(/usage limit reached: new turns from \d{4}-\d{2}-\d{2}T00:00:00Z/);
  const before = await (await page.request.get(`${SERVERS.usage.demoUrl}/demo/stats`)).json();
  await chat.send("and a second one");
  const alert = chat.lastAssistant().locator(".error-message").getByText(/You have reached your usage limit \(1\)\. New turns can start again at \d{4}-\d{2}-\d{2}T00:00:00Z\./);
  await expect(alert).toBeVisible();
  const after = await (await page.request.get(`${SERVERS.usage.demoUrl}/demo/stats`)).json();
  expect(after.started).toBe(before.started);
  // The limit is on the usage page too, reached.
  const dialog = await openUsage(page);
  await expect(dialog.locator(".usage-limits li.usage-over")).toContainText("of 1 per day");
  await expectNoViolations(page, "the usage page shows a reached limit");
});

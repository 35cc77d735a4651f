import { expect, test, type Browser, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, deviceOf } from "../pages/chat";

// A temporary chat (chats on the server): switched on in the empty chat, it says so in the
// composer, has no address and no place in the list or the server's history, follows the
// workspace's instructions, and its files are judged but not kept; it comes back on a reload of
// the same tab, is nowhere on another device, and is gone after "New chat".

const URL = SERVERS.instructions.url;

function device(browser: Browser, user: string): Promise<[Page, ChatPage]> {
  return deviceOf(browser, URL, user);
}

async function listed(page: Page): Promise<string[]> {
  const answer = await page.request.post(`${URL}/api/conversations/list`, { data: {} });
  expect(answer.status()).toBe(200);
  return ((await answer.json()) as { title: string }[]).map((c) => c.title);
}

test("a temporary chat stays in its tab only and is gone after New chat", async ({ browser }) => {
  const user = `temp-${Date.now()}`;
  const [page, chat] = await device(browser, user);
  const spaces = await page.request.post(`${URL}/api/workspaces/list`, { data: {} });
  const [space] = (await spaces.json()) as { id: string }[];
  const set = await page.request.post(`${URL}/api/instructions/set`, {
    data: { level: "workspace", id: space.id, text: "We are the Porto office." },
  });
  expect(set.status()).toBe(200);

  const note = page.locator(".temporary-note");
  await expect(note).toHaveCount(0);
  await page.getByLabel("Temporary chat").check();
  await expect(note).toContainText("not saved to your history");
  await chat.send("[system] a temporary question");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("We are the Porto office.");
  await expect(page).toHaveURL(`${URL}/`);
  const nav = page.getByRole("navigation", { name: "Conversations" });
  await expect(nav.locator(".conversation-open", { hasText: "a temporary question" })).toHaveCount(0);
  expect(await listed(page)).not.toContain("[system] a temporary question");

  // A file is judged, not kept: the page sends it inside the request.
  const upload = await page.evaluate(async () => {
    const r = await fetch("/api/attachments?name=note.txt&keep=0", {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: "plain words",
    });
    const file = (await r.json()) as { id: string };
    const back = await fetch(`/api/attachments/${file.id}`);
    return [r.status, back.status];
  });
  expect(upload).toEqual([200, 404]);

  // The same tab, reloaded: the chat is back, still temporary and without an address.
  await page.reload();
  await expect(page.locator(".bubble.user", { hasText: "a temporary question" })).toBeVisible();
  await expect(chat.answer()).toContainText("We are the Porto office.");
  await expect(note).toBeVisible();
  await expect(page).toHaveURL(`${URL}/`);
  const sent = page.waitForRequest((r) => r.url().includes("/api/attachments?") && r.url().includes("keep=0"));
  await page.locator("#attach-input").setInputFiles([
    { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("plain words in a file") },
  ]);
  await sent;
  const tray = page.getByRole("list", { name: "Files to send" });
  await expect(tray.locator("[aria-busy=true]")).toHaveCount(0);
  await expect(tray.locator(".file-about", { hasText: /·/ })).toHaveCount(1);
  await chat.send("and a second one");
  await chat.waitForTurnEnd();
  await expect(page.locator(".bubble.user")).toHaveCount(2);
  await expect(chat.answer()).toContainText('text "notes.txt": "plain words in a file"');
  expect(await listed(page)).toEqual([]);

  // Another device of the same reader: nowhere.
  const [other] = await device(browser, user);
  await expect(other.locator(".empty-state")).toBeVisible();
  await expect(other.locator(".bubble.user")).toHaveCount(0);
  await expect(other.getByRole("navigation", { name: "Conversations" }).locator(".conversation-open")).toHaveCount(0);

  // New chat: gone, and a reload does not bring it back.
  await page.getByRole("button", { name: "New chat" }).first().click();
  await expect(page.locator(".bubble.user")).toHaveCount(0);
  await expect(note).toHaveCount(0);
  await expect(page.getByLabel("Temporary chat")).not.toBeChecked();
  await page.reload();
  await expect(page.locator(".empty-state")).toBeVisible();
  await expect(page.locator(".bubble.user")).toHaveCount(0);

  // A chat that is not temporary is kept as before.
  await chat.send("a kept question");
  await chat.waitForTurnEnd();
  await expect(page).toHaveURL(/\/c\//);
  expect(await listed(page)).toContain("a kept question");
});

test("with chats in the browser, a temporary chat is never saved there", async ({ page }) => {
  const url = SERVERS.browserHistory.url;
  const chat = new ChatPage(page, url);
  await chat.goto();
  await chat.send("a kept one");
  await chat.waitForTurnEnd();
  await page.getByRole("button", { name: "New chat" }).first().click();
  await page.getByLabel("Temporary chat").check();
  await chat.send("an unkept one");
  await chat.waitForTurnEnd();
  const nav = page.getByRole("navigation", { name: "Conversations" });
  await expect(nav.locator(".conversation-open")).toHaveText(["a kept one"]);
  const kept = () =>
    page.evaluate(() =>
      Object.keys(localStorage)
        .filter((k) => k.startsWith("ponder.chat."))
        .map((k) => localStorage.getItem(k) ?? ""),
    );
  expect((await kept()).some((v) => v.includes("an unkept one"))).toBe(false);
  await page.reload();
  await expect(page.locator(".bubble.user", { hasText: "an unkept one" })).toBeVisible();
  await expect(page.locator(".temporary-note")).toBeVisible();
  await expect(page).toHaveURL(`${url}/`);
  // A new tab of the same browser: not there.
  const second = await page.context().newPage();
  await new ChatPage(second, url).goto();
  await expect(second.locator(".bubble.user", { hasText: "an unkept one" })).toHaveCount(0);
  await nav.locator(".conversation-open", { hasText: "a kept one" }).click();
  await expect(page.locator(".temporary-note")).toHaveCount(0);
  expect((await kept()).some((v) => v.includes("an unkept one"))).toBe(false);
  await page.reload();
  await expect(page.locator(".bubble.user", { hasText: "a kept one" })).toBeVisible();
});

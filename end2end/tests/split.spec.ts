import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";

// The markdown renderer is a WebAssembly chunk of its own (`make site` splits it out): the first
// load does not carry it, the first typed text fetches it, and an answer is never lost when it
// cannot be fetched.

const CHUNK = /\/pkg\/ponder\.[0-9a-f]{16}\.markdown\.wasm$/;

function chunkRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (CHUNK.test(path)) seen.push(path);
  });
  return seen;
}

test("the first load leaves the markdown renderer out; typing fetches it once and answers render as markdown", async ({ page }) => {
  const chunks = chunkRequests(page);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.settled();
  expect(chunks).toEqual([]);
  // The loader the script imports is preloaded beside it, not found a round trip later.
  await expect(page.locator('link[rel="modulepreload"][href$=".split.js"]')).toHaveCount(1);

  await chat.composer().pressSequentially("Why");
  await expect.poll(() => chunks.length).toBe(1);
  await chat.composer().fill("Why is the sky blue?");
  await chat.composer().press("Enter");
  await chat.waitForTurnEnd();
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  await expect(chat.answer().locator("li")).toHaveCount(2);
  await expect(chat.answer().locator("code")).toHaveText("2 + 2 = 4");

  // A second turn and a reload of the conversation use the same chunk: one fetch per page.
  await chat.send("And the sea?");
  await chat.waitForTurnEnd();
  await expect(chat.answer().locator("strong")).toHaveText("Short answer:");
  expect(chunks).toHaveLength(1);
  expect(errors).toEqual([]);
});

test("when the renderer cannot be fetched the answer shows as plain text, and the next try renders it", async ({ page }) => {
  const chunks = chunkRequests(page);
  await page.route(CHUNK, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("Why is the sky blue?");
  await chat.waitForTurnEnd();
  // Nothing is lost: the whole source is there, as text, and nothing of it became markup.
  const answer = chat.answer();
  await expect(answer).toContainText("**Short answer:** yes");
  await expect(answer).toContainText("Let me know if you want more detail.");
  await expect(answer.locator("strong")).toHaveCount(0);
  expect(chunks.length).toBeGreaterThan(0);

  // The network is back: the next text typed fetches the renderer again and the answer renders.
  await page.unroute(CHUNK);
  await chat.composer().pressSequentially("ok");
  await expect(answer.locator("strong")).toHaveText("Short answer:");
  await expect(answer).not.toContainText("**Short answer:**");
  await expect(answer.locator("li")).toHaveCount(2);
});

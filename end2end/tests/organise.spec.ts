import { expect, test, type Browser, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, deviceOf } from "../pages/chat";

// Organising the list (chats on the server): a pinned chat heads the list in a Pinned group,
// tags show under a title and a chip narrows the list to them, a chat moves to another
// workspace; all of it holds across a reload and on another device.

const URL = SERVERS.instructions.url;

function device(browser: Browser, user: string): Promise<[Page, ChatPage]> {
  return deviceOf(browser, URL, user);
}

test("pin, tags with a filter, and move to another workspace", async ({ browser }) => {
  const user = `org-${Date.now()}`;
  const [page, chat] = await device(browser, user);
  await chat.send("alpha question");
  await chat.waitForTurnEnd();
  await page.getByRole("button", { name: "New chat" }).first().click();
  await chat.send("beta question");
  await chat.waitForTurnEnd();
  const nav = page.getByRole("navigation", { name: "Conversations" });
  await expect(nav.locator(".conversation-open", { hasText: "alpha question" })).toBeVisible();

  await chat.rowAction("alpha question", { name: "Pin" });
  const pinned = nav.locator("section.conversation-group", { has: page.getByRole("heading", { name: "Pinned" }) });
  await expect(pinned.locator(".conversation-open")).toHaveText(["alpha question"]);

  await chat.rowAction("beta question", { name: "Tags" });
  await nav.getByLabel("Tags, separated by commas").fill("work, ideas , Work");
  await nav.getByRole("button", { name: "Save" }).click();
  await expect(nav.locator(".conversation-open", { hasText: "beta question" }).locator(".row-tags")).toHaveText("work · ideas");
  const filter = nav.getByRole("group", { name: "Filter by tag" });
  await expect(filter.getByRole("button")).toHaveText(["All", "ideas", "work"]);
  await filter.getByRole("button", { name: "work" }).click();
  await expect(nav.locator(".conversation-open")).toHaveCount(1);
  await expect(nav.locator(".conversation-open")).toContainText("beta question");
  await filter.getByRole("button", { name: "All" }).click();
  await expect(nav.locator(".conversation-open")).toHaveCount(2);

  // Another device, and a reload: the same.
  const [other] = await device(browser, user);
  const otherNav = other.getByRole("navigation", { name: "Conversations" });
  await expect(
    otherNav.locator("section.conversation-group", { has: other.getByRole("heading", { name: "Pinned" }) }).locator(".conversation-open"),
  ).toHaveText(["alpha question"]);
  await expect(otherNav.locator(".row-tags")).toHaveText(["work · ideas"]);
  await chat.rowAction("alpha question", { name: "Unpin" });
  await expect(pinned).toHaveCount(0);
  await page.reload();
  await expect(nav.locator("section.conversation-group", { has: page.getByRole("heading", { name: "Pinned" }) })).toHaveCount(0);
  await expect(nav.locator(".row-tags")).toHaveText(["work · ideas"]);

  // Move to another workspace.
  const made = await page.request.post(`${URL}/api/workspaces/create`, { data: { name: "Research" } });
  expect(made.status()).toBe(200);
  await page.reload();
  await chat.rowAction("beta question", { name: "Move to Research" });
  await expect(nav.locator(".conversation-open", { hasText: "beta question" })).toHaveCount(0);
  await page.locator(".workspace-menu summary").click();
  await page.getByRole("button", { name: "Research" }).click();
  await expect(nav.locator(".conversation-open", { hasText: "beta question" })).toBeVisible();
  await expect(nav.locator(".conversation-open", { hasText: "alpha question" })).toHaveCount(0);
});

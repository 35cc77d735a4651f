import { expect, test } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { SERVERS } from "../servers";

// The demo model streams all 204 payloads of tests/fixtures/xss-payloads.txt, each split
// across deltas, first as thinking and then as the answer.
test("hostile model output: no dialog, no script, no dangerous markup, no request to another origin", async ({ page }) => {
  const origin = new URL(SERVERS.main.url).origin;
  const dialogs: string[] = [];
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on("dialog", async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) foreign.push(url);
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.exposeFunction("__xssMarker", (m: string) => dialogs.push(`marker: ${m}`));
  await page.addInitScript(() => {
    for (const name of ["alert", "confirm", "prompt", "print"] as const) {
      (window as any)[name] = (...args: unknown[]) => (window as any).__xssMarker(`${name}(${args.join(",")})`);
    }
  });

  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[xss] show me everything");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("alert(1)");
  await expect(chat.thinkingBlocks().first()).toBeAttached();
  await chat.summary(chat.thinkingBlocks().first()).click();
  await expect.poll(() => chat.isOpen(chat.thinkingBlocks().first())).toBe(true);
  await chat.settled();

  const found = await page.evaluate(() => {
    const bad: string[] = [];
    const scripts = [...document.querySelectorAll("script")].filter((s) => !s.hasAttribute("nonce"));
    if (scripts.length) bad.push(`${scripts.length} script(s) without the page's nonce`);
    const rendered = [...document.querySelectorAll(".markdown")];
    if (rendered.length < 2) bad.push("nothing rendered");
    for (const el of rendered.flatMap((r) => [...r.querySelectorAll("*")])) {
      const tag = el.tagName.toLowerCase();
      if (["script", "iframe", "object", "embed", "svg", "math", "style", "form", "img", "base", "meta", "link", "frame", "frameset"].includes(tag)) {
        bad.push(`<${tag}>`);
      }
      for (const attr of el.getAttributeNames()) {
        if (attr.startsWith("on")) bad.push(`${tag}[${attr}]`);
        if (attr === "style") bad.push(`${tag}[style]`);
        if (["href", "src", "action", "formaction", "xlink:href"].includes(attr)) {
          const value = (el.getAttribute(attr) ?? "").replace(/[\u0000-\u0020]/g, "").toLowerCase();
          if (!/^(https?:|mailto:)/.test(value)) bad.push(`${tag}[${attr}=${value}]`);
        }
      }
    }
    return bad;
  });
  expect(found).toEqual([]);
  expect(dialogs).toEqual([]);
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});

// Screenshots of the main states of the chat page, to review the look by eye: an empty chat, a
// turn that is thinking, a finished answer with its thinking open, the settings menu, a row
// menu in the conversation list, and (on a phone) the drawer. Each in light and dark, desktop
// (1280×800) and phone (390×844, touch), in each language: English, Brazilian Portuguese,
// Japanese and Arabic (right to left).
//
//   make screenshots                                  PNGs in target/screenshots/
//   ONLY=phone-dark-ar node end2end/screenshots.mjs   the variants whose name holds this

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, startServer } from "./bench/ponder-server.mjs";

const OUT = resolve(ROOT, "target/screenshots");
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));
const WORDS = JSON.parse(execFileSync(resolve(ROOT, "target/release/ponder"), ["catalogue"], { encoding: "utf8" }));
const DEVICES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 },
};

const settled = (page) =>
  page.waitForFunction(() =>
    document
      .getAnimations()
      .every((a) => a.playState !== "running" || a.effect?.getComputedTiming().iterations === Infinity),
  );

async function open(page, url) {
  await page.goto(url);
  await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached" });
}

async function send(page, w, text) {
  const box = page.getByRole("textbox", { name: w.message });
  await box.fill(text);
  await box.press("Enter");
}

async function shoot(page, name) {
  await settled(page);
  await page.screenshot({ path: resolve(OUT, `${name}.png`) });
  console.log(`target/screenshots/${name}.png`);
}

async function variant(browser, url, device, scheme, locale) {
  const tag = `${device}-${scheme}-${locale}`;
  const w = WORDS[locale];
  const context = await browser.newContext({ ...DEVICES[device], colorScheme: scheme, locale });
  const page = await context.newPage();
  const phone = device === "phone";

  await open(page, url);
  await shoot(page, `${tag}-empty`);

  await send(page, w, "Which is larger, 9.11 or 9.9? [slow]");
  await page.locator(".thinking.streaming summary").first().waitFor();
  await page.waitForTimeout(1200);
  await shoot(page, `${tag}-thinking`);
  await page.getByRole("article", { name: w.message_from_assistant }).last().waitFor();
  await page.locator("article[aria-busy=false]").last().waitFor({ timeout: 30_000 });

  if (phone) await page.getByRole("button", { name: w.open_sidebar }).click();
  await page.getByRole("button", { name: w.new_chat }).click();
  await send(page, w, locale === "ar" ? "[bidi] Show me both directions" : "Show me a table and some code");
  await page.waitForFunction(() => [...document.querySelectorAll("article")].at(-1)?.getAttribute("aria-busy") === "false", null, { timeout: 30_000 });
  await page.locator(".thinking summary").last().click();
  await page.mouse.move(0, 0);
  await shoot(page, `${tag}-answer`);

  await page.locator("summary.menu-button").filter({ hasText: w.settings }).click();
  await shoot(page, `${tag}-settings`);
  await page.keyboard.press("Escape");

  if (phone) await page.getByRole("button", { name: w.open_sidebar }).click();
  const rowMenu = page.locator(".conversation-list .row-menu summary").first();
  if (await rowMenu.count()) await rowMenu.click();
  await shoot(page, `${tag}-${phone ? "drawer" : "list"}`);
  await context.close();
}

async function main() {
  mkdirSync(OUT, { recursive: true });
  const data = mkdtempSync(resolve(tmpdir(), "ponder-screenshots-"));
  const server = await startServer({ PONDER_DATABASE_URL: `sqlite://${data}/ponder.db` });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? BROWSER.path, args: BROWSER.args });
  try {
    for (const device of Object.keys(DEVICES))
      for (const scheme of ["light", "dark"])
        for (const locale of Object.keys(WORDS)) {
          if (process.env.ONLY && !`${device}-${scheme}-${locale}`.includes(process.env.ONLY)) continue;
          await variant(browser, server.url, device, scheme, locale);
        }
  } finally {
    await browser.close();
    server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

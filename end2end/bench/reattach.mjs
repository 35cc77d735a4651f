// Reattaching to a running turn after a reload, in Chromium (part of `make bench-resume`).
//
// Each run starts a long reasoning turn on the demo model in a new chat, lets it think for
// THINK_MS (default 1,500 ms), notes how much reasoning the page shows, and reloads. After the
// reload the page paints its copy, asks the server to join the turn (GET /api/turn/events) and
// gets the turn replayed, then live. Two clocks stop at the first painted frame whose reasoning
// goes past what the page showed before the reload (the first event the reader missed):
//   - from the join request (fetch called) to that frame: the reattach itself;
//   - from the reload's navigation start: the whole way back, the page's own load included.
// Prints p50, p95 and the worst of RUNS runs (default 20).
//
//   node end2end/bench/reattach.mjs          (cd end2end first; make bench-resume runs it)

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 20);
const THINK_MS = Number(process.env.THINK_MS ?? 1500);
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

// Runs at the start of every document: records when the page asks to join a turn, and the first
// painted frame whose reasoning is longer than what was shown before the reload.
function probe() {
  const before = Number(sessionStorage.getItem("reattach.before") ?? "NaN");
  const seen = { join: null, shown: null };
  window.__reattach = seen;
  const fetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    if (seen.join === null && url.includes("/api/turn/events")) seen.join = performance.now();
    return fetch(input, init);
  };
  if (Number.isNaN(before)) return;
  const check = () => {
    const bubbles = document.querySelectorAll("article");
    const text = bubbles[bubbles.length - 1]?.querySelector(".thinking-text")?.textContent ?? "";
    if (text.length > before) {
      seen.shown = performance.now();
    } else if (performance.now() < 30_000) {
      requestAnimationFrame(() => setTimeout(check, 0));
    }
  };
  requestAnimationFrame(() => setTimeout(check, 0));
}

async function main() {
  const { url, stop } = await startServer({ PONDER_DEMO_DELAY_MS: "40" });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? BROWSER.path, args: BROWSER.args });
  const join = [];
  const whole = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.addInitScript(probe);
    for (let i = 0; i < RUNS; i++) {
      await page.goto(`${url}/`);
      await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached" });
      await page.getByRole("button", { name: "New chat" }).click();
      const composer = page.getByRole("textbox", { name: "Message" });
      await composer.fill(`[long-think] reattach run ${i}`);
      await composer.press("Enter");
      await page.locator("article .thinking.streaming .thinking-text").last().waitFor();
      await page.waitForTimeout(THINK_MS);
      await page.evaluate(() => {
        const bubbles = document.querySelectorAll("article");
        const text = bubbles[bubbles.length - 1]?.querySelector(".thinking-text")?.textContent ?? "";
        sessionStorage.setItem("reattach.before", String(text.length));
      });
      await page.reload();
      await page.waitForFunction(() => window.__reattach?.shown !== null, null, { timeout: 30_000 });
      const seen = await page.evaluate(() => window.__reattach);
      if (seen.join !== null) join.push(seen.shown - seen.join);
      whole.push(seen.shown);
      await page.evaluate(() => sessionStorage.removeItem("reattach.before"));
      // Stop it, so the runs do not pile up turns on the demo model.
      await page.getByRole("button", { name: "Stop generating" }).click();
    }
    await context.close();
  } finally {
    await browser.close();
    stop();
  }
  const row = (label, times) => {
    const sorted = [...times].sort((a, b) => a - b);
    return `| ${label} | ${pct(sorted, 50).toFixed(0)} ms | ${pct(sorted, 95).toFixed(0)} ms | ${sorted[sorted.length - 1].toFixed(0)} ms |`;
  };
  console.log(`\n## Reattaching after a reload (${RUNS} reloads ${THINK_MS} ms into a reasoning turn)\n`);
  console.log("| first missed event on screen | p50 | p95 | worst |");
  console.log("|---|---|---|---|");
  console.log(row("from the join request", join));
  console.log(row("from the reload (page load included)", whole));
  if (join.length !== RUNS) console.log(`\n${RUNS - join.length} run(s) never asked to join`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

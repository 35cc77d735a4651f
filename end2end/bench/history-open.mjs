// The browser's half of `make bench-history`: how long the page takes, from the click in the
// conversation list, to show the last messages of a conversation of 1,000 messages holding 36 MB
// of reasoning (the database benches/history.rs wrote and kept, PONDER_BENCH_KEEP).
//
// Each run is a fresh browser context (nothing of the chat in localStorage, so it comes from the
// server): open the page, let it settle (SETTLE_MS, default 1,000 ms: the page's own start-up work
// is done, as when a reader picks a chat), click the conversation, and stop the clock once the
// first frame showing its last answer, rendered and inside the viewport, has been painted. Prints
// p50, p95 and the worst of RUNS runs.
//
//   HISTORY_DB=target/bench/history-keep/ponder.db RUNS=20 node end2end/bench/history-open.mjs

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 20);
const DB = process.env.HISTORY_DB;
const TITLE = "A long proof";
const LAST_ANSWER = "Step 499 follows";
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

async function main() {
  if (!DB) throw new Error("HISTORY_DB: the SQLite file benches/history.rs kept");
  const { url, stop } = await startServer({ PONDER_DATABASE_URL: `sqlite://${resolve(ROOT, DB)}` });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? BROWSER.path, args: BROWSER.args });
  const times = [];
  let messages = 0;
  try {
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${url}/`);
      await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached" });
      await page.locator(".conversation-open", { hasText: TITLE }).waitFor();
      await page.waitForTimeout(Number(process.env.SETTLE_MS ?? 1000));
      const result = await page.evaluate(
        ({ title, last }) =>
          new Promise((ok) => {
            const button = [...document.querySelectorAll(".conversation-open")].find((b) => b.textContent.includes(title));
            const t0 = performance.now();
            button.click();
            // Checked after each frame is painted (a task queued from the frame's animation
            // callback runs once the frame is drawn), so the state checked is the one on screen.
            const check = () => {
              const bubbles = document.querySelectorAll("main.conversation article");
              const end = bubbles[bubbles.length - 1];
              const box = end?.getBoundingClientRect();
              const seen = box && box.top < window.innerHeight && box.bottom > 0;
              if (end && end.textContent.includes(last) && seen) {
                ok({ ms: performance.now() - t0, messages: bubbles.length });
              } else if (performance.now() - t0 > 30_000) {
                ok({ ms: NaN, messages: bubbles.length });
              } else {
                requestAnimationFrame(() => setTimeout(check, 0));
              }
            };
            requestAnimationFrame(() => setTimeout(check, 0));
          }),
        { title: TITLE, last: LAST_ANSWER },
      );
      times.push(result.ms);
      messages = result.messages;
      await context.close();
    }
  } finally {
    await browser.close();
    stop();
  }
  const sorted = times.filter((t) => !Number.isNaN(t)).sort((a, b) => a - b);
  if (process.env.VERBOSE) console.log(sorted.map((t) => t.toFixed(0)).join(" "));
  console.log(`\n## Opening the 36 MB conversation in Chromium (${RUNS} fresh contexts, ${messages} messages shown)\n`);
  console.log("| shown after the click | p50 | p95 | worst | runs that never showed it |");
  console.log("|---|---|---|---|---|");
  console.log(
    `| last answer in view | ${pct(sorted, 50)?.toFixed(1)} ms | ${pct(sorted, 95)?.toFixed(1)} ms | ${sorted[sorted.length - 1]?.toFixed(1)} ms | ${times.length - sorted.length} |`,
  );
  if (sorted.length !== times.length) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

// The first-load benchmark (`make bench-size`): what the chat page costs a new reader.
//
// In headless Chromium (Debian's, the E2E flags), against the release server on loopback with a
// fresh database, it loads the chat page and stops once the composer is ready (the page is
// hydrated: `.chat-page[data-hydrated=true]`), then reports:
// - bytes on the wire (each response's encoded length, headers included) and requests, with a
//   cold cache; then the same page loaded again with the cache warm;
// - the time from navigation to the composer being ready, unthrottled and on Chromium's
//   "Slow 4G" profile (562.5 ms round trip, 1.44 Mbit/s down, 675 kbit/s up), at 1× and 4× CPU.
// Each figure is the median of RUNS fresh browser contexts (default 5).
//
//   node end2end/bench/first-load.mjs
//   RUNS=9 node end2end/bench/first-load.mjs
//   LOCALE=ja node end2end/bench/first-load.mjs    # a page in another language (its words' chunk)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 5);
const LOCALE = process.env.LOCALE ?? "en-US";
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));
// Chromium DevTools' "Slow 4G" preset.
const SLOW_4G = { offline: false, latency: 562.5, downloadThroughput: (1.6e6 / 8) * 0.9, uploadThroughput: (750e3 / 8) * 0.9 };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Loads the page in `page` and returns the wire bytes, requests and ms to a ready composer. */
async function load(page, cdp, url) {
  const sizes = new Map();
  const onFinished = (e) => sizes.set(e.requestId, e.encodedDataLength);
  cdp.on("Network.loadingFinished", onFinished);
  await page.goto(url, { waitUntil: "commit" });
  await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached", timeout: 120_000 });
  const ready = await page.evaluate(() => window.__ready ?? performance.now());
  // Anything still in flight for the page (the favicon) counts too.
  await page.waitForLoadState("load");
  cdp.off("Network.loadingFinished", onFinished);
  const bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  return { bytes, requests: sizes.size, ready };
}

async function run(browser, url, { network, cpu }) {
  const context = await browser.newContext({ locale: LOCALE });
  await context.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.querySelector(".chat-page[data-hydrated=true]")) {
        window.__ready = performance.now();
        obs.disconnect();
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-hydrated"], childList: true });
  });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  if (network) await cdp.send("Network.emulateNetworkConditions", network);
  if (cpu > 1) await cdp.send("Emulation.setCPUThrottlingRate", { rate: cpu });
  const cold = await load(page, cdp, url);
  const warm = await load(page, cdp, url);
  await context.close();
  return { cold, warm };
}

async function main() {
  const data = mkdtempSync(resolve(tmpdir(), "ponder-first-load-"));
  const server = await startServer({ PONDER_DATABASE_URL: `sqlite://${data}/ponder.db` });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? BROWSER.path, args: BROWSER.args });
  const profiles = [
    ["loopback, 1× CPU", { network: null, cpu: 1 }],
    ["Slow 4G, 1× CPU", { network: SLOW_4G, cpu: 1 }],
    ["Slow 4G, 4× CPU", { network: SLOW_4G, cpu: 4 }],
  ];
  const rows = [];
  try {
    for (const [name, profile] of profiles) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await run(browser, `${server.url}/`, profile));
      rows.push({
        name,
        coldKB: median(runs.map((r) => r.cold.bytes)) / 1024,
        coldRequests: median(runs.map((r) => r.cold.requests)),
        warmKB: median(runs.map((r) => r.warm.bytes)) / 1024,
        coldReady: median(runs.map((r) => r.cold.ready)),
        warmReady: median(runs.map((r) => r.warm.ready)),
      });
    }
  } finally {
    await browser.close();
    server.stop();
    rmSync(data, { recursive: true, force: true });
  }
  console.log(`| ${RUNS} runs, medians | cold: on the wire | requests | composer ready | warm: on the wire | composer ready |`);
  console.log("|---|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.coldKB.toFixed(1)} KB | ${r.coldRequests} | ${Math.round(r.coldReady)} ms | ${r.warmKB.toFixed(1)} KB | ${Math.round(r.warmReady)} ms |`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

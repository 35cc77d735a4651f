// The model picker against an OpenRouter-sized list: an upstream on loopback that lists 5,000
// models, Ponder's release server pointed at it, headless Chromium. For each run, in a fresh
// page, it measures opening the picker and typing a query one key at a time (each keystroke
// until the list shows its matches), and the longest main-thread task meanwhile
// (PerformanceObserver `longtask`: tasks of 50 ms or more; "none" means every task stayed
// under 50 ms).
//
//   node end2end/bench/model-picker.mjs      RUNS=5 by default; MODELS=5000
//
// Prints a markdown table (median and worst of the runs) and writes the figures as JSON to
// target/bench-picker.json.

import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, freePort, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 5);
const MODELS = Number(process.env.MODELS ?? 5000);
const QUERY = `model-${MODELS - 1}`;
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));

function listServer(port) {
  const data = Array.from({ length: MODELS }, (_, i) => ({
    id: `vendor${i % 40}/model-${i}`,
    name: `Vendor ${i % 40}: Model ${i}`,
    supported_parameters: i % 3 === 0 ? ["reasoning", "reasoning_effort"] : ["temperature"],
  }));
  const body = JSON.stringify({ data });
  const server = createServer((req, res) => {
    if (req.url.startsWith("/v1/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((ok) => server.listen(port, "127.0.0.1", () => ok(server)));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const worst = (xs) => Math.max(...xs);

const upstreamPort = await freePort();
const upstream = await listServer(upstreamPort);
const dir = mkdtempSync(join(tmpdir(), "ponder-picker-"));
const ponder = await startServer({
  PONDER_UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/v1`,
  PONDER_MODEL: "vendor0/model-0",
  PONDER_DATABASE_URL: `sqlite://${dir}/ponder.db`,
});
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? BROWSER.path, args: BROWSER.args });
const runs = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const page = await browser.newPage();
    await page.addInitScript(() => {
      window.__longest = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
      }).observe({ type: "longtask", buffered: true });
    });
    await page.goto(ponder.url);
    const summary = page.locator(".model-picker summary");
    // The list has arrived once the page is idle; the picker's search and list are a chunk
    // (`menu_panels`) fetched on the first opening, so the opening timed here includes it.
    await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached" });
    await page.waitForLoadState("networkidle");
    await page.evaluate(() => (window.__longest = 0));
    const t0 = Date.now();
    await summary.click();
    await page.locator(".model-option").first().waitFor();
    const openMs = Date.now() - t0;
    await page.waitForFunction(() => document.querySelector(".model-picker .model-count")?.textContent?.includes("of"));
    const keys = [];
    const search = page.getByLabel("Search models");
    for (let i = 1; i <= QUERY.length; i++) {
      const t = Date.now();
      await search.fill(QUERY.slice(0, i));
      const expect = QUERY.slice(0, i);
      await page.waitForFunction(
        (q) => [...document.querySelectorAll(".model-option")].every((b) => b.textContent.toLowerCase().includes(q.toLowerCase()) || b.textContent.includes(q.replace("model-", "Model "))),
        expect,
      );
      keys.push(Date.now() - t);
    }
    const shown = await page.locator(".model-option").count();
    const longest = await page.evaluate(() => window.__longest);
    runs.push({ openMs, keyMedianMs: median(keys), keyWorstMs: worst(keys), longestTaskMs: longest, shown });
    await page.close();
  }
} finally {
  await browser.close();
  ponder.stop();
  upstream.close();
}
const fmt = (ms) => (ms === 0 ? "none ≥ 50 ms" : `${Math.round(ms)} ms`);
console.log(`\n${MODELS} models, ${RUNS} runs (median · worst)\n`);
console.log("| figure | median | worst |\n|---|---|---|");
console.log(`| open the picker (click to first option) | ${median(runs.map((r) => r.openMs))} ms | ${worst(runs.map((r) => r.openMs))} ms |`);
console.log(`| one keystroke to its filtered list | ${median(runs.map((r) => r.keyMedianMs))} ms | ${worst(runs.map((r) => r.keyWorstMs))} ms |`);
console.log(`| longest main-thread task | ${fmt(median(runs.map((r) => r.longestTaskMs)))} | ${fmt(worst(runs.map((r) => r.longestTaskMs)))} |`);
console.log(`| options shown for "${QUERY}" | ${runs[0].shown} | |`);
mkdirSync(resolve(ROOT, "target"), { recursive: true });
writeFileSync(resolve(ROOT, "target/bench-picker.json"), JSON.stringify({ models: MODELS, runs }, null, 2));
if (runs.some((r) => r.shown !== 1)) {
  console.error("the filter did not narrow the list to the one model");
  process.exit(1);
}

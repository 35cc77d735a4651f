// The UI streaming benchmark: how smoothly the page keeps up while the demo model streams
// about 100 KB of reasoning then 50 KB of answer at 200 deltas a second (its `[perf]` scenario).
//
// For each run, in a fresh headless Chromium page, from the moment the prompt is sent until the
// bubble is no longer busy, it records:
// - the longest main-thread task (PerformanceObserver `longtask`: tasks of 50 ms or more, so
//   "none" means every task stayed under 50 ms), and as cross-checks the longest animation
//   frame (`long-animation-frame`, same 50 ms floor) and the longest gap between two
//   requestAnimationFrame callbacks;
// - every frame (requestAnimationFrame timestamps): the count and the share of frame intervals
//   over 16.7 ms;
// - the stream's duration and the deltas per second it came at.
// It then checks that the text arrived whole: the thinking and answer the page saved are the
// bytes the demo model streams (read straight from it), and the rendered DOM has as many list
// items, code blocks, tables and headings as that markdown.
//
//   node end2end/bench/ui-stream.mjs                 starts ../target/release/ponder itself
//   RUNS=3 node end2end/bench/ui-stream.mjs
//   PONDER_URL=http://127.0.0.1:3000 PONDER_DEMO_URL=http://127.0.0.1:4000 node …   an existing server
//   TRACE=trace.json node …                          also writes a Chrome trace of the first run
//     (TRACE_FROM=60 TRACE_FOR=5: only seconds 60 to 65 after sending)
//   PROFILE=run.cpuprofile node …                    also writes a CPU profile of the first run
//
// Prints a markdown table (median and worst of the runs) and writes every figure as JSON to
// target/bench-ui.json.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { chromium } from "@playwright/test";
import { ROOT, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 5);
// VARIANT=rich: the same with formulas and code in several languages ([perf-rich]);
// VARIANT=long: ten times the text (about 1.5 MB), ten words a delta, in the same time ([perf-long]).
const PROMPTS = { rich: "Benchmark the page [perf-rich]", long: "Benchmark the page [perf-long]" };
const PROMPT = PROMPTS[process.env.VARIANT] ?? "Benchmark the page [perf]";
const FRAME_BUDGET_MS = 16.7;
// rAF timestamps are coarsened (0.1 ms, with jitter), so a frame on time reads 16.6 to 16.8 ms;
// a frame that missed its slot reads 33.3 ms or more.
const TIMER_SLACK_MS = 1;
const LONG_TASK_TARGET_MS = 50;
const SLOW_FRAME_TARGET = 0.05;
// The same browser and flags as the Playwright suite (end2end/chromium.json).
const BROWSER = JSON.parse(readFileSync(resolve(ROOT, "end2end/chromium.json"), "utf8"));
const CHROMIUM = process.env.CHROMIUM_PATH ?? BROWSER.path;
const CHROMIUM_ARGS = BROWSER.args;

/** The thinking and answer the demo model streams for the prompt, read straight from it. */
async function expectedTexts(demoUrl) {
  const res = await fetch(`${demoUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "ponder-demo",
      stream: true,
      messages: [{ role: "user", content: PROMPT }],
    }),
  });
  const body = await res.text();
  let thinking = "";
  let answer = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const delta = JSON.parse(line.slice(6)).choices?.[0]?.delta ?? {};
    thinking += delta.reasoning_content ?? "";
    answer += delta.content ?? "";
  }
  return { thinking, answer };
}

/** What the rendered markdown of `text` must hold, counted on the source. */
function structure(text) {
  const lines = text.split("\n");
  return {
    li: lines.filter((l) => /^(\d+\.|-) /.test(l)).length,
    pre: lines.filter((l) => l.startsWith("```") && l.length > 3).length,
    table: lines.filter((l) => l.startsWith("|---")).length,
    h2: lines.filter((l) => l.startsWith("## ")).length,
  };
}

// Installed in the page before any of its scripts: observers that record while `recording`.
function instrument() {
  const b = (window.__bench = { recording: false, t0: 0, longtasks: [], loafs: [], frames: [] });
  const observe = (type, sink) => {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (b.recording && e.startTime >= b.t0) sink.push(e);
      }).observe({ type, buffered: true });
    } catch {
      // this browser does not know the entry type
    }
  };
  const longtasks = [];
  const loafs = [];
  observe("longtask", longtasks);
  observe("long-animation-frame", loafs);
  b.longtasks = longtasks;
  b.loafs = loafs;
  const tick = (t) => {
    if (b.recording) b.frames.push(t);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

/** Traces the page from TRACE_FROM seconds on, for TRACE_FOR seconds (default: to the end). */
async function traceWindow(browser, page, path) {
  const from = Number(process.env.TRACE_FROM ?? 0) * 1000;
  const span = Number(process.env.TRACE_FOR ?? 24 * 3600) * 1000;
  await new Promise((r) => setTimeout(r, from));
  await browser.startTracing(page, {
    path,
    categories: process.env.TRACE_CATEGORIES?.split(",") ?? [
      "devtools.timeline",
      "disabled-by-default-devtools.timeline",
      "disabled-by-default-devtools.timeline.invalidationTracking",
      "v8.execute",
      "blink.user_timing",
    ],
  });
  const busy = () => page.evaluate(() => [...document.querySelectorAll('article[aria-label="Message from the assistant"]')].pop()?.getAttribute("aria-busy"));
  const until = Date.now() + span;
  while (Date.now() < until && (await busy()) !== "false") await new Promise((r) => setTimeout(r, 250));
  await browser.stopTracing();
}

async function oneRun(browser, url, run, trace, profile) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(instrument);
  await page.goto(`${url}/`);
  await page.locator(".chat-page[data-hydrated=true]").waitFor({ state: "attached" });
  if (process.env.EXTRA_CSS) await page.addStyleTag({ content: process.env.EXTRA_CSS });
  if (process.env.EXTRA_JS) await page.evaluate(process.env.EXTRA_JS);
  // A reader takes longer than the page's start-up to type: send once its idle-time work (the
  // renderer warm-up) has run, as requestIdleCallback runs callbacks in order.
  await page.evaluate(() => new Promise((ok) => requestIdleCallback(() => ok(), { timeout: 5_000 })));
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill(PROMPT);
  // Typing also fetches the message bubbles' and the stream's chunks, which warm up at idle while
  // the reader goes on typing: send once both have arrived and had a moment to warm up.
  await page.waitForFunction(
    () =>
      [/\.messages\.wasm$/, /\.turn\.wasm$/].every((chunk) =>
        performance.getEntriesByType("resource").some((e) => chunk.test(e.name)),
      ),
    null,
    { timeout: 10_000 },
  );
  await page.waitForTimeout(500);
  for (let i = 0; i < 2; i++)
    await page.evaluate(() => new Promise((ok) => requestIdleCallback(() => ok(), { timeout: 5_000 })));
  const tracing = trace ? traceWindow(browser, page, trace) : Promise.resolve();
  const cdp = profile ? await context.newCDPSession(page) : null;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
    await cdp.send("Profiler.start");
  }
  const metrics = await context.newCDPSession(page);
  await metrics.send("Performance.enable");
  const cpuBefore = await cpuTimes(metrics);
  await page.evaluate(() => {
    window.__bench.t0 = performance.now();
    window.__bench.recording = true;
  });
  const started = Date.now();
  await composer.press("Enter");
  const bubble = page.getByRole("article", { name: "Message from the assistant" }).last();
  await bubble.locator(".thinking").waitFor({ timeout: 30_000 });
  if (process.env.TRACE_ONLY) {
    await tracing;
    await context.close();
    return null;
  }
  await page.waitForFunction(
    () => [...document.querySelectorAll('article[aria-label="Message from the assistant"]')].pop()?.getAttribute("aria-busy") === "false",
    null,
    { timeout: 15 * 60_000, polling: 500 },
  );
  const durationMs = Date.now() - started;
  const cpu = diff(await cpuTimes(metrics), cpuBefore);
  const domNodes = await page.evaluate(() => document.getElementsByTagName("*").length);
  const renderRequests = await page.evaluate(
    () => performance.getEntriesByType("resource").filter((e) => /\/api\/render\/(code|math)$/.test(e.name)).length,
  );
  await tracing;
  const measured = await page.evaluate(() => {
    const b = window.__bench;
    b.recording = false;
    const slowest = (list) => list.reduce((m, e) => Math.max(m, e.duration), 0);
    return {
      longestTask: slowest(b.longtasks),
      longTasks: b.longtasks.length,
      longTaskAt: b.longtasks.map((e) => [Math.round((e.startTime - b.t0) / 100) / 10, Math.round(e.duration)]),
      longestLoaf: slowest(b.loafs),
      loafAt: b.loafs.map((e) => ({
        at: Math.round((e.startTime - b.t0) / 100) / 10,
        ms: Math.round(e.duration),
        render: Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0),
        styleLayout: Math.round(e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0),
        scripts: (e.scripts ?? []).map((x) => `${x.invoker} ${Math.round(x.duration)} ms (forced layout ${Math.round(x.forcedStyleAndLayoutDuration)})`),
      })),
      longAnimationFrames: b.loafs.length,
      frames: b.frames,
    };
  });
  if (cdp) writeFileSync(profile, JSON.stringify((await cdp.send("Profiler.stop")).profile));
  const saved = await page.evaluate(() => {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key.startsWith("ponder.chat.v1.")) continue;
      const record = JSON.parse(localStorage.getItem(key));
      const m = record.messages.findLast((m) => m.role === "assistant");
      return { answer: m.content, thinking: (m.thinking ?? []).map((t) => t.text).join("") };
    }
    return null;
  });
  // The thinking block folded away at the answer keeps only its text in the document; opening
  // it puts its markup back, and the same text must read the same.
  const [foldedText, parkedSections] = await bubble
    .locator(".thinking-text")
    .evaluate((el) => [el.textContent, el.querySelectorAll(".md-parked").length]);
  await bubble.locator(".thinking summary").first().click();
  await bubble.locator(".thinking-text .md-parked").first().waitFor({ state: "detached" });
  const rendered = await bubble.evaluate((el, foldedText) => {
    const count = (root, sel) => (root ? root.querySelectorAll(sel).length : -1);
    const answer = el.querySelector(".answer");
    const thinking = el.querySelector(".thinking-text");
    const of = (root) => ({
      li: count(root, "li"),
      pre: count(root, "pre"),
      table: count(root, "table"),
      h2: count(root, "h2"),
    });
    return {
      answer: of(answer),
      thinking: of(thinking),
      thinkingSame: thinking?.textContent === foldedText,
      thinkingChars: [foldedText?.length, thinking?.textContent.length],
      answerEnd: answer?.textContent.trim().slice(-40),
    };
  }, foldedText);
  await context.close();

  const f = measured.frames;
  const intervals = f.slice(1).map((t, i) => t - f[i]);
  const slow = intervals.filter((d) => d > FRAME_BUDGET_MS + TIMER_SLACK_MS).length;
  return {
    run,
    durationMs,
    cpu,
    domNodes,
    parkedSections,
    renderRequests,
    frames: f.length,
    slowFrameShare: intervals.length ? slow / intervals.length : 0,
    longestFrameGap: intervals.reduce((m, d) => Math.max(m, d), 0),
    longestTask: measured.longestTask,
    longTasks: measured.longTasks,
    longTaskAt: measured.longTaskAt,
    loafAt: measured.loafAt,
    longestLoaf: measured.longestLoaf,
    longAnimationFrames: measured.longAnimationFrames,
    saved,
    rendered,
    intervalsHistogram: histogram(intervals),
    slowShareBy10s: (() => {
      const w = [];
      for (let i = 1; i < f.length; i++) {
        const k = Math.floor((f[i] - f[0]) / 10_000);
        w[k] ??= [0, 0];
        w[k][1]++;
        if (f[i] - f[i - 1] > FRAME_BUDGET_MS + TIMER_SLACK_MS) w[k][0]++;
      }
      return [...w].map((x) => (x ? Math.round((100 * x[0]) / x[1]) : 0));
    })(),
    intervals: intervals.map((d) => Math.round(d * 10) / 10),
  };
}

/** The page's main-thread time so far (CDP Performance metrics, in ms): all tasks, script, layout. */
async function cpuTimes(cdp) {
  const { metrics } = await cdp.send("Performance.getMetrics");
  const get = (name) => 1000 * (metrics.find((m) => m.name === name)?.value ?? 0);
  return { task: get("TaskDuration"), script: get("ScriptDuration"), layout: get("LayoutDuration") + get("RecalcStyleDuration") };
}

const diff = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] - b[k]]));

/**
 * The floor: the same turn streamed into a trivial page that appends each piece of text as it
 * arrives, each line of it a <div> of its own (no markdown, no thinking block, nothing
 * collapsed), on the same server in the same run.
 */
async function floorRun(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/healthz`);
  await page.setContent("<!doctype html><title>floor</title><div id=t style='white-space:pre-wrap'></div>");
  const metrics = await context.newCDPSession(page);
  await metrics.send("Performance.enable");
  const before = await cpuTimes(metrics);
  const started = Date.now();
  const bytes = await page.evaluate(async (prompt) => {
    const root = document.getElementById("t");
    let line = root.appendChild(document.createElement("div")).appendChild(document.createTextNode(""));
    const append = (text) => {
      const parts = text.split("\n");
      line.appendData(parts[0]);
      for (const part of parts.slice(1)) {
        line = root.appendChild(document.createElement("div")).appendChild(document.createTextNode(part));
      }
    };
    const res = await fetch("/api/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: prompt }] }),
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    let n = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += value;
      const lines = rest.split("\n");
      rest = lines.pop();
      for (const line of lines) {
        if (!line.startsWith("data: ")) continue;
        const text = JSON.parse(line.slice(6)).text;
        if (typeof text === "string") {
          append(text);
          n += text.length;
        }
      }
    }
    return n;
  }, PROMPT);
  const durationMs = Date.now() - started;
  const cpu = diff(await cpuTimes(metrics), before);
  const domNodes = await page.evaluate(() => document.getElementsByTagName("*").length);
  await context.close();
  return { durationMs, cpu, domNodes, bytes };
}

function histogram(intervals) {
  const bins = { "<=16.7": 0, "16.7-20": 0, "20-34": 0, "34-50": 0, ">50": 0 };
  for (const d of intervals) {
    if (d <= 16.7) bins["<=16.7"]++;
    else if (d <= 20) bins["16.7-20"]++;
    else if (d <= 34) bins["20-34"]++;
    else if (d <= 50) bins["34-50"]++;
    else bins[">50"]++;
  }
  return bins;
}

function check(result, expected) {
  const problems = [];
  if (!result.saved) problems.push("nothing saved");
  else {
    if (result.saved.thinking !== expected.thinking)
      problems.push(`thinking differs (${result.saved.thinking.length} of ${expected.thinking.length} bytes)`);
    if (result.saved.answer !== expected.answer)
      problems.push(`answer differs (${result.saved.answer.length} of ${expected.answer.length} bytes)`);
  }
  for (const part of ["thinking", "answer"]) {
    const want = structure(expected[part]);
    const got = result.rendered[part];
    for (const k of Object.keys(want))
      if (want[k] !== got[k]) problems.push(`${part}: ${got[k]} <${k}> rendered, ${want[k]} in the markdown`);
  }
  if (!result.rendered.thinkingSame)
    problems.push(`the folded thinking reads otherwise than open (${result.rendered.thinkingChars.join(" against ")} characters)`);
  const lastLine = expected.answer.trim().split("\n").pop();
  if (!(result.rendered.answerEnd ?? "").endsWith(lastLine)) problems.push(`answer ends with "${result.rendered.answerEnd}"`);
  return problems;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  const server = await startServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const results = [];
  let failed = false;
  try {
    const expected = expectedTexts(server.demoUrl);
    expected.catch(() => {}); // a trace-only run stops the server before the stream ends
    for (let run = 1; run <= RUNS; run++) {
      const first = run === 1;
      const r = await oneRun(browser, server.url, run, first && process.env.TRACE, first && process.env.PROFILE);
      if (!r) return;
      const problems = check(r, await expected);
      failed ||= problems.length > 0;
      const { saved, ...shown } = r;
      results.push({ ...shown, problems });
      console.error(
        `run ${run}: longest task ${r.longestTask.toFixed(0)} ms (${r.longTasks} ≥ 50 ms), ` +
          `frames > ${FRAME_BUDGET_MS} ms ${(100 * r.slowFrameShare).toFixed(2)} % of ${r.frames}, ` +
          `longest frame gap ${r.longestFrameGap.toFixed(1)} ms, longest LoAF ${r.longestLoaf.toFixed(0)} ms, ` +
          `${(r.durationMs / 1000).toFixed(1)} s; ${problems.length ? "PROBLEMS: " + problems.join("; ") : "text whole"}`,
      );
      console.error(`  ${r.domNodes} elements at the end, ${r.parkedSections} thinking sections parked, ${r.renderRequests} render requests`);
      console.error(`  frame intervals: ${JSON.stringify(r.intervalsHistogram)}`);
      console.error(`  slow frames by 10-s window (%): ${r.slowShareBy10s.join(" ")}`);
      for (const l of r.loafAt)
        console.error(`  long frame at ${l.at} s: ${l.ms} ms, rendering ${l.render} ms (style+layout ${l.styleLayout}); ${l.scripts.join("; ")}`);
      if (r.longTaskAt.length) console.error(`  long tasks [s after sending, ms]: ${JSON.stringify(r.longTaskAt)}`);
    }
    const { thinking, answer } = await expected;
    const words = (thinking.match(/\S+/g) ?? []).length + (answer.match(/\S+/g) ?? []).length;
    const kb = (thinking.length + answer.length) / 1000;
    const floors = [];
    for (let run = 1; run <= RUNS; run++) {
      floors.push(await floorRun(browser, server.url));
      const f = floors.at(-1);
      console.error(`floor run ${run}: ${(f.cpu.task / 1000).toFixed(1)} s of main-thread time (${(f.cpu.task / kb).toFixed(0)} ms per KB), ${f.domNodes} nodes, ${(f.durationMs / 1000).toFixed(1)} s`);
    }
    const row = (name, values, fmt, target) => {
      const med = median(values);
      const worst = Math.max(...values);
      const met = target === undefined ? "" : worst < target ? "yes" : med < target ? "median only" : "no";
      return `| ${name} | ${fmt(med)} | ${fmt(worst)} | ${met} |`;
    };
    const ms = (x) => `${x.toFixed(0)} ms`;
    const pct = (x) => `${(100 * x).toFixed(2)} %`;
    const table = [
      `| ${RUNS} runs | median | worst | target met |`,
      "|---|---|---|---|",
      row(`longest main-thread task (longtask; 0 = none ≥ 50 ms)`, results.map((r) => r.longestTask), ms, LONG_TASK_TARGET_MS),
      row("longest rAF gap (fallback)", results.map((r) => r.longestFrameGap), ms, LONG_TASK_TARGET_MS),
      row(`frames over ${FRAME_BUDGET_MS} ms`, results.map((r) => r.slowFrameShare), pct, SLOW_FRAME_TARGET),
      `| frames | ${median(results.map((r) => r.frames))} | ${Math.min(...results.map((r) => r.frames))} (fewest) | |`,
      `| stream duration | ${(median(results.map((r) => r.durationMs)) / 1000).toFixed(1)} s | ${(Math.max(...results.map((r) => r.durationMs)) / 1000).toFixed(1)} s | |`,
      `| deltas per second | ${(words / (median(results.map((r) => r.durationMs)) / 1000)).toFixed(0)} | | |`,
      `| text arrived whole | ${results.filter((r) => !r.problems.length).length}/${RUNS} runs | | |`,
      "",
      `| main thread, ${kb.toFixed(0)} KB streamed (medians of ${RUNS}) | the page (stored turn) | the floor page | page / floor |`,
      "|---|---|---|---|",
      `| all tasks | ${(median(results.map((r) => r.cpu.task)) / 1000).toFixed(1)} s (${(median(results.map((r) => r.cpu.task)) / kb).toFixed(0)} ms per KB) | ${(median(floors.map((f) => f.cpu.task)) / 1000).toFixed(1)} s (${(median(floors.map((f) => f.cpu.task)) / kb).toFixed(0)} ms per KB) | ${(median(results.map((r) => r.cpu.task)) / median(floors.map((f) => f.cpu.task))).toFixed(2)}× |`,
      `| script | ${(median(results.map((r) => r.cpu.script)) / 1000).toFixed(1)} s | ${(median(floors.map((f) => f.cpu.script)) / 1000).toFixed(1)} s | |`,
      `| style and layout | ${(median(results.map((r) => r.cpu.layout)) / 1000).toFixed(1)} s | ${(median(floors.map((f) => f.cpu.layout)) / 1000).toFixed(1)} s | |`,
      `| DOM nodes at the end | ${median(results.map((r) => r.domNodes))} | ${median(floors.map((f) => f.domNodes))} | |`,
      `| render/code and render/math requests | ${median(results.map((r) => r.renderRequests))} | — | |`,
    ].join("\n");
    console.log(table);
    mkdirSync(resolve(ROOT, "target"), { recursive: true });
    writeFileSync(resolve(ROOT, "target/bench-ui.json"), JSON.stringify({ prompt: PROMPT, words, results, floors }, null, 2));
  } finally {
    await browser.close();
    server.stop();
  }
  if (failed) {
    console.error("the text did not arrive whole in every run");
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

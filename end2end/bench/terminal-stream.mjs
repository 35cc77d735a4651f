// `ponder chat` under the long stream, beside `ponder ask` on the same stream in the same run:
// the demo model's `[perf]` scenario (about 100 KB of reasoning then 50 KB of answer at 200
// deltas a second), stored turns (the server keeps history, the default).
//
// For each run:
// - `ponder ask`: the CPU time (user + system) of the process, answer to /dev/null;
// - `ponder chat` in a 120×40 tmux pane: the CPU time of the process from start to quit, and,
//   from its frame trace (PONDER_CHAT_TRACE), the frames drawn and how long after the last
//   piece of the turn arrived the last frame was on screen. The pane must show the answer's
//   last words at the end (read with capture-pane).
//
//   node end2end/bench/terminal-stream.mjs        (RUNS=3; PONDER_BIN=target/release/ponder-bench)
//
// Prints a markdown table (median and worst of the runs) and writes the figures as JSON to
// target/bench-terminal.json.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT, startServer } from "./ponder-server.mjs";

const RUNS = Number(process.env.RUNS ?? 3);
const PROMPT = "Benchmark the page [perf]";
const CLIENT = resolve(ROOT, "target/release/ponder");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The answer's last words as the demo model streams them. */
async function lastWords(demoUrl) {
  const res = await fetch(`${demoUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "ponder-demo", stream: true, messages: [{ role: "user", content: PROMPT }] }),
  });
  let answer = "";
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("data: {")) continue;
    answer += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  }
  const words = answer.trim().split(/\s+/).filter((w) => /^[A-Za-z]+[.,]?$/.test(w));
  return words.slice(-3).join(" ").replace(/[.,]$/, "");
}

/** CPU seconds (user + system) of the children `bash -c '…; times'` reported on its last line. */
function childrenCpu(timesOutput) {
  const last = timesOutput.trim().split("\n").pop();
  const secs = [...last.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return secs.reduce((a, b) => a + b, 0);
}

function askRun(url) {
  const out = spawnSync("bash", ["-c", `"$0" ask "$1" --server "$2" --thinking=stderr >/dev/null 2>&1; times`, CLIENT, PROMPT, url], {
    encoding: "utf8",
  });
  return { cpuS: childrenCpu(out.stdout) };
}

const tmux = (...args) => execFileSync("tmux", args, { encoding: "utf8" });

async function chatRun(url, words, dir, n) {
  const session = `ponder-bench-${process.pid}-${n}`;
  const trace = join(dir, `trace-${n}.txt`);
  const times = join(dir, `times-${n}.txt`);
  const command = `PONDER_CHAT_TRACE='${trace}' '${CLIENT}' chat --server '${url}'; times > '${times}'`;
  tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "bash", "-c", command);
  try {
    let screen = "";
    for (let i = 0; i < 200 && !screen.trim(); i++) {
      await sleep(50);
      screen = tmux("capture-pane", "-p", "-t", session);
    }
    await sleep(300);
    tmux("send-keys", "-t", session, "-l", PROMPT);
    tmux("send-keys", "-t", session, "Enter");
    const until = Date.now() + 180_000;
    let shown = false;
    while (Date.now() < until) {
      await sleep(100);
      screen = tmux("capture-pane", "-p", "-J", "-t", session);
      if (screen.replace(/\s+/g, " ").includes(words)) {
        shown = true;
        break;
      }
    }
    // The turn ends with its usage line after the last words; give it a moment, then quit.
    await sleep(1500);
    tmux("send-keys", "-t", session, "C-c");
    await sleep(100);
    tmux("send-keys", "-t", session, "C-c");
    for (let i = 0; i < 100 && !existsSync(times); i++) await sleep(50);
    const marks = readFileSync(trace, "utf8").trim().split("\n").map((l) => {
      const [mark, at] = l.split(" ");
      return { mark, at: Number(at) };
    });
    const events = marks.filter((m) => m.mark === "e");
    const frames = marks.filter((m) => m.mark === "f");
    const lastEvent = events.at(-1)?.at ?? 0;
    const firstFrameAfter = frames.find((f) => f.at >= lastEvent)?.at ?? Infinity;
    return {
      cpuS: childrenCpu(readFileSync(times, "utf8")),
      events: events.length,
      frames: frames.filter((f) => f.at >= (events[0]?.at ?? 0) && f.at <= lastEvent + 1000).length,
      lagMs: firstFrameAfter - lastEvent,
      shown,
    };
  } finally {
    spawnSync("tmux", ["kill-session", "-t", session]);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const worst = (xs) => Math.max(...xs);

const server = await startServer();
try {
  const words = await lastWords(server.demoUrl);
  const dir = mkdtempSync(join(tmpdir(), "ponder-bench-terminal-"));
  const asks = [];
  const chats = [];
  for (let n = 0; n < RUNS; n++) {
    asks.push(askRun(server.url));
    chats.push(await chatRun(server.url, words, dir, n));
    const c = chats.at(-1);
    console.error(`run ${n + 1}: ask ${asks.at(-1).cpuS.toFixed(2)} s, chat ${c.cpuS.toFixed(2)} s, ${c.frames} frames for ${c.events} pieces, last frame ${c.lagMs.toFixed(1)} ms after the last piece${c.shown ? "" : " — THE END WAS NOT ON SCREEN"}`);
  }
  const ask = median(asks.map((a) => a.cpuS));
  const chat = median(chats.map((c) => c.cpuS));
  console.log(`\n\`ponder chat\` beside \`ponder ask\`, [perf] stream (150 KB), stored turns, ${RUNS} runs (median / worst):\n`);
  console.log("| figure | ponder ask | ponder chat | target |");
  console.log("|---|---|---|---|");
  console.log(`| CPU (user + system) | ${ask.toFixed(2)} / ${worst(asks.map((a) => a.cpuS)).toFixed(2)} s | ${chat.toFixed(2)} / ${worst(chats.map((c) => c.cpuS)).toFixed(2)} s (${(chat / ask).toFixed(1)}×) | within 3× |`);
  console.log(`| last frame after the last piece | — | ${median(chats.map((c) => c.lagMs)).toFixed(1)} / ${worst(chats.map((c) => c.lagMs)).toFixed(1)} ms | within 100 ms |`);
  console.log(`| frames drawn while streaming | — | ${median(chats.map((c) => c.frames))} (for ${median(chats.map((c) => c.events))} pieces) | |`);
  const ok = chats.every((c) => c.shown);
  console.log(`| the end on screen | — | ${ok ? "every run" : "NOT in every run"} | |`);
  mkdirSync(resolve(ROOT, "target"), { recursive: true });
  writeFileSync(resolve(ROOT, "target/bench-terminal.json"), JSON.stringify({ asks, chats }, null, 2));
  if (!ok) process.exitCode = 1;
} finally {
  server.stop();
}

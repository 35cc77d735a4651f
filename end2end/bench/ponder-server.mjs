// Starts the release server on free loopback ports with the demo model, for the scripts under
// end2end/bench (the Playwright suite has its own servers in servers.ts).

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

async function waitForHealth(url, child) {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`ponder exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}/healthz did not answer within 30 s`);
}

/**
 * The release server on free ports with the demo model (extra variables in `env`), unless
 * PONDER_URL and PONDER_DEMO_URL name a running one.
 */
export async function startServer(env = {}) {
  if (process.env.PONDER_URL) {
    if (!process.env.PONDER_DEMO_URL) throw new Error("PONDER_URL needs PONDER_DEMO_URL too");
    return { url: process.env.PONDER_URL, demoUrl: process.env.PONDER_DEMO_URL, stop() {} };
  }
  const [port, demoPort] = [await freePort(), await freePort()];
  const child = spawn(resolve(ROOT, process.env.PONDER_BIN ?? "target/release/ponder"), [], {
    cwd: ROOT,
    env: {
      ...process.env,
      LEPTOS_SITE_ROOT: process.env.LEPTOS_SITE_ROOT ?? resolve(ROOT, "target/site"),
      LEPTOS_SITE_ADDR: `127.0.0.1:${port}`,
      PONDER_DEMO_ADDR: `127.0.0.1:${demoPort}`,
      RUST_LOG: "warn",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child);
  return { url, demoUrl: `http://127.0.0.1:${demoPort}`, stop: () => child.kill("SIGTERM") };
}

import { mkdtempSync, readFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { defineConfig } from "@playwright/test";
import { ALL_IDPS, ALL_SERVERS, PONDER_BIN, SERVERS, WORKERS } from "./servers";

// Debian's Chromium: Playwright never downloads a browser here. The UI benchmark reads the same file.
const BROWSER: { path: string; args: string[] } = JSON.parse(
  readFileSync(join(__dirname, "chromium.json"), "utf8"),
);
const CHROMIUM = process.env.CHROMIUM_PATH ?? BROWSER.path;
// Every server of a run gets a fresh history database of its own.
const DATA = mkdtempSync(join(tmpdir(), "ponder-e2e-"));

export default defineConfig({
  testDir: "./tests",
  // A test that plays several turns and axe passes takes 20-35 s with two workers on a two-core
  // machine, and CI's machine is slower still: 60 s, so that only a hang runs out.
  timeout: 60_000,
  expect: { timeout: 10_000 },
  // Spec files run side by side, each worker on servers of its own (servers.ts); the tests of
  // one file run in order, in one worker.
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: WORKERS,
  reporter: [["list"]],
  use: {
    baseURL: SERVERS.main.url,
    actionTimeout: 10_000,
    trace: "off",
    launchOptions: {
      executablePath: CHROMIUM,
      args: BROWSER.args,
    },
  },
  projects: [
    { name: "chromium" },
    // The thinking block, the bubble and persistence again, wholly in Arabic, right to left: the
    // page's words come from the catalogue of the project's locale (pages/i18n.ts).
    {
      name: "ar",
      use: { locale: "ar" },
      testMatch: /(thinking-block|bubble|persistence)\.spec\.ts$/,
    },
  ],
  // Each worker's test OpenID provider first: the webServer entries start one after another,
  // each awaited, so the IdP answers before the Ponder that signs in with it starts.
  webServer: [
    ...ALL_IDPS.map((idp) => ({
      command: "node oidc/idp.mjs",
      url: `${idp.url}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: "ignore" as const,
      stderr: "pipe" as const,
      env: { IDP_PORT: String(idp.port), IDP_PONDER: idp.ponder },
    })),
    ...ALL_SERVERS.map((s) => ({
      command: PONDER_BIN,
      url: `${s.url}/healthz`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: "ignore" as const,
      stderr: "pipe" as const,
      env: {
        LEPTOS_SITE_ROOT: "../target/site",
        LEPTOS_SITE_ADDR: s.addr,
        PONDER_DEMO_ADDR: s.demoAddr,
        PONDER_DEMO_DELAY_MS: "25",
        PONDER_DATABASE_URL: `sqlite://${DATA}/${s.addr.replace(/[^0-9]/g, "_")}/ponder.db`,
        RUST_LOG: "warn",
        ...s.env,
      },
    })),
  ],
});

// The Ponder instances the suite starts, each on the built-in demo model with its own settings.
import { resolve } from "path";

/** The server under test: PONDER_BIN (from the repository's root), else the release build. */
export const PONDER_BIN = resolve(__dirname, "..", process.env.PONDER_BIN ?? "target/release/ponder");

export interface Server {
  addr: string;
  demoAddr: string;
  url: string;
  demoUrl: string;
  env: Record<string, string>;
}

/** How many Playwright workers run at once; each has every server below to itself. */
export const WORKERS = Number(process.env.PONDER_E2E_WORKERS ?? 2);

/** The worker this process is (Playwright sets TEST_PARALLEL_INDEX in each worker; 0 elsewhere). */
const WORKER = Number(process.env.TEST_PARALLEL_INDEX ?? 0);

/** A test OpenID provider (oidc/idp.mjs) that serves one Ponder, its only client. */
export interface Idp {
  port: number;
  /** The issuer: http://127.0.0.1:port, no trailing slash. */
  url: string;
  /** The Ponder it signs people in to. */
  ponder: string;
}

/** The worker's IdP, beside its `oidc` Ponder (3145). */
function idpAt(worker: number): Idp {
  const port = 3146 + 200 * worker;
  return { port, url: `http://127.0.0.1:${port}`, ponder: `http://127.0.0.1:${3145 + 200 * worker}` };
}

function at(worker: number) {
  const server = (port: number, env: Record<string, string> = {}): Server => {
    const addr = `127.0.0.1:${port + 200 * worker}`;
    const demoAddr = `127.0.0.1:${port + 1000 + 200 * worker}`;
    return { addr, demoAddr, url: `http://${addr}`, demoUrl: `http://${demoAddr}`, env };
  };
  const idp = idpAt(worker);
  return {
    /** Default settings: OpenAI-compatible framing. */
    main: server(3100),
    /** Short guards: the page gives up after 2 s without a frame, the server after 1.5 s of upstream silence. */
    guards: server(3110, { PONDER_PRE_TOKEN_GUARD: "2", PONDER_IDLE_TIMEOUT: "1.5" }),
    /** The kill switch: no thinking reaches the browser. */
    noThinking: server(3120, { PONDER_STREAM_THINKING: "0" }),
    /** Chats in each browser only, as before server-side history (PONDER_HISTORY=browser). */
    browserHistory: server(3130, { PONDER_HISTORY: "browser" }),
    /** Built-in accounts (PONDER_AUTH=password). */
    accounts: server(3140, { PONDER_AUTH: "password" }),
    /** Single sign-on by OpenID Connect (PONDER_AUTH=oidc) at this worker's test IdP (IDP):
     * members of ponder-users may sign in, members of ponder-admins are admins. */
    oidc: server(3145, {
      PONDER_AUTH: "oidc",
      PONDER_OIDC_ISSUER: idp.url,
      PONDER_OIDC_CLIENT_ID: "ponder",
      PONDER_OIDC_CLIENT_SECRET: "ponder-test-secret",
      PONDER_OIDC_SCOPES: "openid profile email groups",
      PONDER_OIDC_ALLOWED_GROUPS: "ponder-users",
      PONDER_OIDC_ADMIN_GROUPS: "ponder-admins",
      PONDER_OIDC_NAME: "Test IdP",
      PONDER_PUBLIC_URL: idp.ponder,
    }),
    /** A trusted proxy names the user (PONDER_AUTH=header from loopback), with a short delete grace. */
    proxyAuth: server(3150, { PONDER_AUTH: "header", PONDER_TRUSTED_PROXIES: "127.0.0.1/32", PONDER_DELETE_GRACE: "2" }),
    /** A trusted proxy names the user, and shared links open for anyone (PONDER_SHARING=public). */
    sharing: server(3180, { PONDER_AUTH: "header", PONDER_TRUSTED_PROXIES: "127.0.0.1/32", PONDER_SHARING: "public" }),
    /** A trusted proxy names the user, the administrator set instructions for every model
     * (PONDER_MODEL_INSTRUCTIONS), and the configuration claims the deep model takes a
     * temperature, which the demo refuses (PONDER_MODEL_CONTROLS). */
    instructions: server(3190, {
      PONDER_AUTH: "header",
      PONDER_TRUSTED_PROXIES: "127.0.0.1/32",
      PONDER_MODEL_INSTRUCTIONS: resolve(__dirname, "fixtures", "model-instructions.json"),
      PONDER_MODEL_CONTROLS: "ponder-demo-deep=temperature+max_tokens",
    }),
    /** A trusted proxy names the user, turns are priced in euros (PONDER_PRICES) and each
     * reader may spend one token a day (PONDER_QUOTA): a reader's second turn of the day is
     * refused; the administrator (the first reader) is exempt. */
    usage: server(3160, {
      PONDER_AUTH: "header",
      PONDER_TRUSTED_PROXIES: "127.0.0.1/32",
      PONDER_PRICES: resolve(__dirname, "fixtures", "prices.json"),
      PONDER_QUOTA: "tokens/day=1",
    }),
    /** The whole app under /ponder/, as behind a reverse proxy's subpath. */
    basePath: server(3170, { PONDER_BASE_PATH: "/ponder" }),
    /** Anthropic Messages framing from the demo model, through the anthropic adapter. */
    anthropic: server(3101, { PONDER_PROVIDER: "anthropic" }),
    /** Anthropic framing for a model named like Claude Opus 4.7: the demo refuses a manual
     * thinking budget with the real API's 400 and omits the display unless asked to summarize. */
    opus: server(3106, { PONDER_PROVIDER: "anthropic", PONDER_MODEL: "claude-opus-4-7" }),
    /** OpenAI Responses framing, through the responses adapter. */
    responses: server(3102, { PONDER_PROVIDER: "responses" }),
    /** Gemini streamGenerateContent (SSE), through the gemini adapter. */
    gemini: server(3103, { PONDER_PROVIDER: "gemini" }),
    /** Google's Interactions API, through the interactions adapter. */
    interactions: server(3107, { PONDER_PROVIDER: "gemini-interactions" }),
    /** Ollama's native NDJSON /api/chat, through the ollama adapter. */
    ollama: server(3104, { PONDER_PROVIDER: "ollama" }),
    /** OpenAI framing for a model whose chat template opens <think> itself. */
    thinkStart: server(3105, { PONDER_THINK_START: "true" }),
  };
}

/** This worker's servers (worker 0's outside a test run: the benchmarks, the screenshots). */
export const SERVERS = at(WORKER);

/** This worker's test OpenID provider, the issuer of SERVERS.oidc. */
export const IDP = idpAt(WORKER);

/** Every worker's Ponder servers, for the configuration to start. */
export const ALL_SERVERS: Server[] = Array.from({ length: WORKERS }, (_, w) => Object.values(at(w))).flat();

/** Every worker's test OpenID provider, for the configuration to start (before the Ponders). */
export const ALL_IDPS: Idp[] = Array.from({ length: WORKERS }, (_, w) => idpAt(w));

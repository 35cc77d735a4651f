// The Ponder instances the suite starts, each on the built-in demo model with its own settings.

export interface Server {
  addr: string;
  demoAddr: string;
  url: string;
  demoUrl: string;
  env: Record<string, string>;
}

function server(port: number, env: Record<string, string> = {}): Server {
  const addr = `127.0.0.1:${port}`;
  const demoAddr = `127.0.0.1:${port + 50}`;
  return { addr, demoAddr, url: `http://${addr}`, demoUrl: `http://${demoAddr}`, env };
}

export const SERVERS = {
  /** Default settings: OpenAI-compatible framing. */
  main: server(3100),
  /** Anthropic Messages framing from the demo model, through the anthropic adapter. */
  anthropic: server(3101, { PONDER_PROVIDER: "anthropic" }),
  /** OpenAI Responses framing, through the responses adapter. */
  responses: server(3102, { PONDER_PROVIDER: "responses" }),
  /** Gemini streamGenerateContent (SSE), through the gemini adapter. */
  gemini: server(3103, { PONDER_PROVIDER: "gemini" }),
  /** Ollama's native NDJSON /api/chat, through the ollama adapter. */
  ollama: server(3104, { PONDER_PROVIDER: "ollama" }),
  /** OpenAI framing for a model whose chat template opens <think> itself. */
  thinkStart: server(3105, { PONDER_THINK_START: "true" }),
};

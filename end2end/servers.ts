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
  /** The whole app under /ponder/, as behind a reverse proxy's subpath. */
  basePath: server(3170, { PONDER_BASE_PATH: "/ponder" }),
};

// A real OpenID provider for the OIDC tests (tests/oidc.spec.ts): oidc-provider with its
// development login form (any login, the password ignored), a fixed set of accounts and their
// groups, and test switches that make it misbehave on purpose.
//
//   IDP_PORT    listens on 127.0.0.1:IDP_PORT; the issuer is http://127.0.0.1:IDP_PORT
//   IDP_PONDER  the Ponder it serves (http://127.0.0.1:3145): its one client, `ponder`
//
// Test switches on the same port (JSON bodies, 204 when done):
//   POST /__test/mode    {"mode": "normal" | "rotate" | "wrong-audience" | "expired" | "rogue-key"}
//   POST /__test/groups  {"login": "bob", "groups": ["…"]}   later userinfo answers carry these
//   POST /__test/reset   normal mode and every account's own groups again
import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";
import { SignJWT, decodeJwt, decodeProtectedHeader } from "jose";

// oidc-provider's warnings that only say this is a development setup (Node 20, the in-memory
// store, the development login form): known, and noise in the suite's output.
const DEVELOPMENT_ONLY = ["Unsupported runtime", "in-memory adapter", "devInteractions is enabled"];
const warn = console.warn;
console.warn = (...args) => {
  if (!DEVELOPMENT_ONLY.some((known) => String(args[0]).includes(known))) warn(...args);
};
const { default: Provider } = await import("oidc-provider");

const PORT = Number(process.env.IDP_PORT);
const PONDER = (process.env.IDP_PONDER ?? "").replace(/\/+$/, "");
if (!Number.isInteger(PORT) || PORT <= 0 || !/^https?:\/\/[^/]+$/.test(PONDER)) {
  console.error("idp: set IDP_PORT (a port) and IDP_PONDER (Ponder's base URL, like http://127.0.0.1:3145)");
  process.exit(2);
}
const ISSUER = `http://127.0.0.1:${PORT}`;

// The accounts the login form knows; the login typed becomes `sub`. Any other login is an
// account too, with no e-mail and no groups.
const ACCOUNTS = {
  alice: { name: "Alice Liddell", email: "alice@example.test", groups: ["ponder-users"] },
  root: { name: "Root Admin", email: "root@example.test", groups: ["ponder-users", "ponder-admins"] },
  eve: { name: "Eve Outsider", email: "eve@example.test", groups: ["outsiders"] },
  bob: { name: "Bob Builder", email: "bob@example.test", groups: ["ponder-users"] },
};
const initialGroups = () => Object.fromEntries(Object.entries(ACCOUNTS).map(([login, a]) => [login, [...a.groups]]));
let groups = initialGroups();

function claimsOf(login) {
  const known = ACCOUNTS[login];
  if (!known) return { sub: login, name: login, preferred_username: login, groups: [] };
  return {
    sub: login,
    name: known.name,
    preferred_username: login,
    email: known.email,
    email_verified: true,
    groups: [...groups[login]],
  };
}

// Signing keys: key-1 from the start; key-2 joins (and signs) in `rotate`; `rogue` is never
// published, only used to sign tokens that must be refused.
function rsaKey(kid) {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...privateKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" } };
}
const KEYS = { "key-1": rsaKey("key-1"), "key-2": rsaKey("key-2"), rogue: rsaKey("rogue") };

// What the current mode does to the ID token in /token's answer (none in normal and rotate).
let mutation = null;

/** The ID token re-signed after `mutation`; everything else in it as it was. */
async function mutate(idToken) {
  const header = decodeProtectedHeader(idToken);
  const payload = decodeJwt(idToken);
  let key = KEYS[header.kid]?.privateKey;
  if (!key) throw new Error(`idp: no key ${header.kid} to re-sign with`);
  const now = Math.floor(Date.now() / 1000);
  if (mutation === "wrong-audience") {
    payload.aud = "another-app";
  } else if (mutation === "expired") {
    payload.exp = now - 600;
    payload.iat = now - 4200;
  } else if (mutation === "rogue-key") {
    key = KEYS.rogue.privateKey;
    header.kid = "rogue";
  }
  return new SignJWT(payload).setProtectedHeader(header).sign(key);
}

/** Tampers with /token's ID token when a mode says so (wraps the provider's own handling). */
async function tamper(ctx, next) {
  await next();
  if (!mutation || ctx.method !== "POST" || ctx.path !== "/token" || ctx.status !== 200) return;
  const body = ctx.body;
  if (body && typeof body === "object" && typeof body.id_token === "string") {
    ctx.body = { ...body, id_token: await mutate(body.id_token) };
  }
}

/** The provider's pages import a web font from the Internet: not from a test machine. */
async function noWebFonts(ctx, next) {
  await next();
  if (typeof ctx.body === "string" && ctx.body.includes("fonts.googleapis.com")) {
    ctx.body = ctx.body.replace(/@import url\(https:\/\/fonts\.googleapis\.com[^)]*\);?/g, "");
  }
}

function provider(jwks) {
  const p = new Provider(ISSUER, {
    clients: [
      {
        client_id: "ponder",
        client_secret: "ponder-test-secret",
        token_endpoint_auth_method: "client_secret_basic",
        redirect_uris: [`${PONDER}/auth/oidc/callback`],
        post_logout_redirect_uris: [`${PONDER}/`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email", "email_verified"],
      groups: ["groups"],
    },
    // conformIdTokenClaims stays at its default (true): the profile, e-mail and groups come
    // from userinfo, the ID token carries sub and the protocol's claims.
    async findAccount(ctx, sub) {
      return { accountId: sub, claims: async () => claimsOf(sub) };
    },
    // A first-party client: the grant covers what it asks, so no consent page ever shows.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
      let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
      if (!grant || grant.accountId !== oidc.session.accountId) {
        grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.session.accountId });
      }
      grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(" "));
      grant.addOIDCClaims([...oidc.requestParamClaims]);
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      userinfo: { enabled: true },
    },
    pkce: { required: () => true },
    jwks: { keys: jwks.map((k) => k.jwk) },
    // The same keys in both instances, so the IdP's session cookie survives `rotate`.
    cookies: { keys: ["ponder-e2e-idp-cookie-key"] },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: 86400,
      Grant: 86400,
    },
  });
  p.use(noWebFonts);
  p.use(tamper);
  return p.callback();
}

// Both instances share oidc-provider's in-memory adapter (its storage is module-level), so
// sessions, grants, codes and access tokens live on across a swap.
const NORMAL = provider([KEYS["key-1"]]);
const ROTATED = provider([KEYS["key-2"], KEYS["key-1"]]);
let current = NORMAL;

const MODES = {
  normal: () => { current = NORMAL; mutation = null; },
  rotate: () => { current = ROTATED; mutation = null; },
  "wrong-audience": () => { mutation = "wrong-audience"; },
  expired: () => { mutation = "expired"; },
  "rogue-key": () => { mutation = "rogue-key"; },
};

function answer(res, status, body) {
  if (body === undefined) {
    res.writeHead(status).end();
  } else {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}

async function control(req, res) {
  if (req.method !== "POST") return answer(res, 405, { error: "POST only" });
  let body = {};
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8").trim();
    body = text ? JSON.parse(text) : {};
  } catch {
    return answer(res, 400, { error: "the body is not JSON" });
  }
  const path = new URL(req.url, ISSUER).pathname;
  if (path === "/__test/mode") {
    const set = Object.hasOwn(MODES, body?.mode) ? MODES[body.mode] : null;
    if (!set) return answer(res, 400, { error: `mode must be one of ${Object.keys(MODES).join(", ")}` });
    set();
    console.log(`idp mode ${body.mode}`);
    return answer(res, 204);
  }
  if (path === "/__test/groups") {
    if (!Object.hasOwn(ACCOUNTS, body?.login)) return answer(res, 404, { error: `no account ${body?.login}` });
    if (!Array.isArray(body.groups) || !body.groups.every((g) => typeof g === "string")) {
      return answer(res, 400, { error: "groups must be a list of names" });
    }
    groups[body.login] = [...body.groups];
    return answer(res, 204);
  }
  if (path === "/__test/reset") {
    MODES.normal();
    groups = initialGroups();
    return answer(res, 204);
  }
  return answer(res, 404, { error: "no such test switch" });
}

const server = createServer((req, res) => {
  if (req.url?.startsWith("/__test/")) {
    control(req, res).catch((e) => answer(res, 500, { error: String(e) }));
  } else {
    current(req, res);
  }
});
server.listen(PORT, "127.0.0.1", () => console.log(`idp listening on ${ISSUER}`));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));

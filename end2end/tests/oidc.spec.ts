import { expect, test, type Browser, type BrowserContext, type Page, type Response } from "@playwright/test";
import { IDP, SERVERS } from "../servers";
import { expectNoViolations } from "../pages/chat";

// Single sign-on by OpenID Connect (PONDER_AUTH=oidc) against a real OpenID provider
// (oidc/idp.mjs: oidc-provider with its development login form, where the login typed is the
// user): the first sign-in creates the user, the groups claim decides who may come in and who
// is an admin, every failure of the callback (a bad state, a replayed code, an ID token that
// does not verify, a user outside the allowed groups) ends on a page that says why and signs
// nobody in, a new signing key at the IdP is picked up, and signing out ends both sessions.

const PONDER = SERVERS.oidc.url;
const CALLBACK = `${PONDER}/auth/oidc/callback`;

/** Tells the test IdP to misbehave, or to change someone's groups; 204 when done. */
async function idp(action: "mode" | "groups" | "reset", body: unknown = {}) {
  const response = await fetch(`${IDP.url}/__test/${action}`, { method: "POST", body: JSON.stringify(body) });
  expect(response.status, `the IdP's /__test/${action}`).toBe(204);
}

async function device(browser: Browser): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ baseURL: PONDER });
  const page = await context.newPage();
  return [context, page];
}

async function sessionCookie(context: BrowserContext) {
  return (await context.cookies()).find((c) => c.name === "ponder_session");
}

async function me(page: Page): Promise<{ account: { id: string; name: string; is_admin: boolean } | null }> {
  const response = await page.request.post(`${PONDER}/api/me`, { data: {} });
  expect(response.status()).toBe(200);
  return response.json();
}

/** Ponder's sign-in page at `path`, then its one way in: the IdP's link. */
async function toIdp(page: Page, path = "/") {
  await page.goto(`${PONDER}${path}`);
  await expect(page.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
  await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
  await expect(page.locator("input[name=login]")).toBeVisible();
  expect(page.url().startsWith(`${IDP.url}/interaction/`), page.url()).toBe(true);
}

/** The IdP's own login form: any login (it becomes `sub`), the password is not checked. */
async function idpLogin(page: Page, login: string) {
  await page.locator("input[name=login]").fill(login);
  await page.locator("input[name=password]").fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
}

/** Signs `login` in from Ponder's page at `path` through the IdP; the chat shows. */
async function signIn(page: Page, login: string, path = "/") {
  await toIdp(page, path);
  await idpLogin(page, login);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
}

/** Runs `act` and answers Ponder's response to the IdP's redirect to its callback. */
async function callbackAnswer(page: Page, act: () => Promise<unknown>): Promise<Response> {
  const answer = page.waitForResponse((r) => r.url().startsWith(`${CALLBACK}?`));
  await act();
  return answer;
}

/** Ponder's page for a refused sign-in: the status, the reason, a way back, and no session. */
async function expectRefused(page: Page, answer: Response, status: number, reason: RegExp) {
  expect(answer.status()).toBe(status);
  const failed = page.locator("main.sign-in-failed");
  await expect(failed.getByRole("heading", { level: 1 })).toHaveText("Sign-in failed");
  await expect(failed.getByRole("alert")).toContainText(reason);
  await expect(failed.getByRole("link", { name: "Sign in again" })).toBeVisible();
  expect(await answer.headerValues("set-cookie")).not.toContainEqual(expect.stringMatching(/^ponder_session=/));
}

/** Nobody is signed in at this browser: no session cookie, and Ponder knows nobody. */
async function expectSignedOut(context: BrowserContext, page: Page) {
  expect(await sessionCookie(context)).toBeUndefined();
  expect((await me(page)).account).toBeNull();
}

/**
 * Submits the IdP's login form, but holds the browser back from Ponder's callback: the form's
 * POST is sent from the test (Playwright routes no redirect, only the request a page makes),
 * the IdP's own redirects followed until the one to Ponder, whose address is returned; the
 * browser shows a stand-in page. The IdP's cookies land in the browser as usual.
 */
async function heldCallback(page: Page, login: string): Promise<URL> {
  const form = `${IDP.url}/interaction/**`;
  let callback: URL | undefined;
  await page.route(form, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    let at = route.request().url();
    let response = await route.fetch({ maxRedirects: 0 });
    for (let hop = 0; hop < 5 && response.status() >= 300 && response.status() < 400; hop++) {
      const next = new URL(response.headers()["location"], at);
      if (next.origin !== IDP.url) {
        callback = next;
        break;
      }
      at = next.href;
      response = await page.request.get(at, { maxRedirects: 0 });
    }
    await route.fulfill({ contentType: "text/html", body: "<!doctype html><title>Held</title><p>Held at the IdP.</p>" });
  });
  await idpLogin(page, login);
  await expect(page.getByText("Held at the IdP.")).toBeVisible();
  await page.unroute(form);
  expect(callback?.href.startsWith(`${CALLBACK}?`), `the IdP's redirect: ${callback?.href}`).toBe(true);
  return callback!;
}

test.describe.serial("single sign-on by OpenID Connect", () => {
  test.beforeEach(() => idp("reset"));
  test.afterAll(() => idp("reset"));

  let aliceId = "";

  test("the first sign-in creates the user through the IdP's login page; the next is the same user", async ({ browser }) => {
    const [first, page] = await device(browser);
    await page.goto(`${PONDER}/`);
    await expect(page.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
    const link = page.getByRole("link", { name: "Sign in with Test IdP" });
    await expect(link).toHaveAttribute("href", /\/auth\/oidc\/login\?return_to=(%2F|\/)$/);
    // Passwords are off in this mode: the IdP is the only way in.
    await expect(page.getByLabel("Password")).toHaveCount(0);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expectNoViolations(page, "the single sign-on page");

    // The sign-in starts an authorization code flow with PKCE, its one-shot login in a cookie.
    const start = await page.request.get(`${PONDER}/auth/oidc/login?return_to=%2F`, { maxRedirects: 0 });
    expect(start.status()).toBe(303);
    const authorize = new URL(start.headers()["location"]);
    expect(authorize.origin).toBe(IDP.url);
    for (const param of ["state", "nonce", "code_challenge"]) expect(authorize.searchParams.get(param), param).toBeTruthy();
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("client_id")).toBe("ponder");
    expect(authorize.searchParams.get("redirect_uri")).toBe(CALLBACK);
    const oneShot = (await first.cookies()).find((c) => c.name === "ponder_oidc");
    expect(oneShot?.httpOnly).toBe(true);

    await link.click();
    await expect(page.locator("input[name=login]")).toBeVisible();
    expect(new URL(page.url()).origin).toBe(IDP.url);
    await idpLogin(page, "alice");
    await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
    // Back on the page she came from, with nothing of the callback left in the address.
    expect(page.url()).toBe(`${PONDER}/`);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    expect((await sessionCookie(first))?.httpOnly).toBe(true);
    await page.getByText("Settings", { exact: true }).click();
    await expect(page.getByRole("group", { name: "Account" })).toContainText("Signed in as alice");
    const account = (await me(page)).account;
    expect(account).toMatchObject({ name: "alice", is_admin: false });
    aliceId = account!.id;

    // Another browser: the IdP asks again (no session there), and it is the same user.
    const [second, other] = await device(browser);
    await signIn(other, "alice");
    expect((await me(other)).account?.id).toBe(aliceId);
    await first.close();
    await second.close();
  });

  test("the admin group makes an admin: root may list the users, alice may not", async ({ browser }) => {
    const [rootContext, root] = await device(browser);
    await signIn(root, "root");
    expect((await me(root)).account).toMatchObject({ name: "root", is_admin: true });
    await root.getByText("Settings", { exact: true }).click();
    const rootAccount = root.getByRole("group", { name: "Account" });
    await expect(rootAccount).toContainText("Signed in as root");
    await expect(rootAccount.getByRole("button", { name: "API tokens and users…", exact: true })).toBeVisible();
    const users = await root.request.post(`${PONDER}/api/users/list`, { data: {} });
    expect(users.status()).toBe(200);
    const list: { id: string; name: string }[] = await users.json();
    // alice was created once, by her first sign-in.
    expect(list.filter((u) => u.name === "alice").map((u) => u.id)).toEqual([aliceId]);

    const [aliceContext, alice] = await device(browser);
    await signIn(alice, "alice");
    await alice.getByText("Settings", { exact: true }).click();
    const aliceAccount = alice.getByRole("group", { name: "Account" });
    await expect(aliceAccount).toContainText("Signed in as alice");
    await expect(aliceAccount.getByRole("button", { name: "API tokens…", exact: true })).toBeVisible();
    await expect(alice.getByRole("button", { name: "tokens and users" })).toHaveCount(0);
    expect((await alice.request.post(`${PONDER}/api/users/list`, { data: {} })).status()).toBe(403);
    await rootContext.close();
    await aliceContext.close();
  });

  test("someone outside the allowed groups is refused and stays signed out", async ({ browser }) => {
    const [context, page] = await device(browser);
    await toIdp(page);
    const answer = await callbackAnswer(page, () => idpLogin(page, "eve"));
    await expectRefused(page, answer, 403, /not in a group allowed/i);
    await expectNoViolations(page, "a refused sign-in's page");
    await expectSignedOut(context, page);
    await context.close();
  });

  test("a callback whose state was changed is refused", async ({ browser }) => {
    const [context, page] = await device(browser);
    await toIdp(page);
    const callback = await heldCallback(page, "alice");
    const state = callback.searchParams.get("state") ?? "";
    expect(state).not.toBe("");
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`);
    const answer = await page.goto(tampered.href);
    await expectRefused(page, answer!, 400, /sign in again/i);
    await expectSignedOut(context, page);
    await context.close();
  });

  test("a replayed callback is refused, and so is its code under a fresh sign-in's state", async ({ browser }) => {
    const [first, page] = await device(browser);
    await toIdp(page);
    const oneShot = (await first.cookies()).find((c) => c.name === "ponder_oidc");
    expect(oneShot).toBeDefined();
    const reached = page.waitForRequest((r) => r.url().startsWith(`${CALLBACK}?`));
    await idpLogin(page, "alice");
    const callback = new URL((await reached).url());
    await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();

    // The same callback again, with the same one-shot cookie, in another browser: that login
    // was used up.
    const [second, replay] = await device(browser);
    await second.addCookies([oneShot!]);
    const again = await replay.goto(callback.href);
    await expectRefused(replay, again!, 400, /sign in again/i);
    await expectSignedOut(second, replay);

    // The used code under the state of a login just begun (its own cookie): the state passes,
    // and the IdP refuses the code.
    const [third, forger] = await device(browser);
    const start = await forger.request.get(`${PONDER}/auth/oidc/login?return_to=%2F`, { maxRedirects: 0 });
    expect(start.status()).toBe(303);
    const fresh = new URL(start.headers()["location"]).searchParams.get("state");
    expect(fresh).toBeTruthy();
    expect((await third.cookies()).some((c) => c.name === "ponder_oidc")).toBe(true);
    const forged = new URL(callback);
    forged.searchParams.set("state", fresh!);
    const refused = await forger.goto(forged.href);
    await expectRefused(forger, refused!, 403, /did not sign you in/i);
    await expectSignedOut(third, forger);

    // The first browser is still signed in, as alice.
    expect((await me(page)).account?.id).toBe(aliceId);
    await first.close();
    await second.close();
    await third.close();
  });

  // Before the tokens that must fail: the rogue key's unknown kid makes Ponder refetch the
  // JWKS too, and a limit on refetches must not be what this one runs into.
  test("a new signing key at the IdP is fetched once it signs", async ({ browser }) => {
    const [first, page] = await device(browser);
    await signIn(page, "alice");
    await idp("mode", { mode: "rotate" });
    const [second, other] = await device(browser);
    await toIdp(other);
    const answer = await callbackAnswer(other, () => idpLogin(other, "alice"));
    expect(answer.status()).toBe(303);
    await expect(other.getByRole("textbox", { name: "Message" })).toBeVisible();
    expect((await me(other)).account?.id).toBe(aliceId);
    // The session from before the new key goes on.
    expect((await me(page)).account?.id).toBe(aliceId);
    await first.close();
    await second.close();
  });

  for (const [mode, what] of [
    ["wrong-audience", "an ID token for another app"],
    ["expired", "an expired ID token"],
    ["rogue-key", "an ID token signed by a key the IdP never published"],
  ] as const) {
    test(`${what} is refused`, async ({ browser }) => {
      await idp("mode", { mode });
      const [context, page] = await device(browser);
      await toIdp(page);
      const answer = await callbackAnswer(page, () => idpLogin(page, "alice"));
      await expectRefused(page, answer, 502, /could not be verified/i);
      await expectSignedOut(context, page);
      await context.close();
    });
  }

  test("removed from the allowed group at the IdP: the next sign-in is refused and the session ends", async ({ browser }) => {
    const [first, page] = await device(browser);
    await signIn(page, "bob");
    expect((await me(page)).account?.name).toBe("bob");

    await idp("groups", { login: "bob", groups: [] });
    const [second, other] = await device(browser);
    await toIdp(other);
    const answer = await callbackAnswer(other, () => idpLogin(other, "bob"));
    await expectRefused(other, answer, 403, /not in a group allowed/i);
    await expectSignedOut(second, other);

    // The first browser's session ended with it.
    await page.reload();
    await expect(page.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
    await expect(page.getByRole("textbox", { name: "Message" })).toHaveCount(0);
    expect((await me(page)).account).toBeNull();
    await first.close();
    await second.close();
  });

  test("signing out ends the session at Ponder and at the IdP", async ({ browser }) => {
    const [context, page] = await device(browser);
    await signIn(page, "alice");
    const session = await sessionCookie(context);
    expect(session).toBeDefined();

    await page.getByText("Settings", { exact: true }).click();
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    // The IdP asks whether to end its session too, then sends the browser back to Ponder.
    const yes = page.getByRole("button", { name: "Yes, sign me out" });
    await expect(yes).toBeVisible();
    expect(new URL(page.url()).origin).toBe(IDP.url);
    await yes.click();
    await expect(page.getByRole("heading", { name: "Sign in to Ponder" })).toBeVisible();
    const back = new URL(page.url());
    expect(`${back.origin}${back.pathname}`).toBe(`${PONDER}/`);
    expect((await me(page)).account).toBeNull();
    // The old session cookie opens nothing any more.
    await context.addCookies([session!]);
    expect((await me(page)).account).toBeNull();

    // The IdP forgot her too: its login form shows again.
    await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
    await expect(page.locator("input[name=login]")).toBeVisible();
    await idpLogin(page, "alice");
    await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
    expect((await me(page)).account?.id).toBe(aliceId);
    await context.close();
  });
});

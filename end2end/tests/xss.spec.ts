import { expect, test, type Page } from "@playwright/test";
import { ChatPage } from "../pages/chat";
import { SERVERS } from "../servers";

// The demo model streams all 204 payloads of tests/fixtures/xss-payloads.txt, each split
// across deltas, first as thinking and then as the answer.
/** Records every dialog, call of alert/confirm/prompt/print, request to another origin and page
 * error from now on. */
async function watchForXss(page: Page) {
  const origin = new URL(SERVERS.main.url).origin;
  const seen = { dialogs: [] as string[], foreign: [] as string[], errors: [] as string[] };
  page.on("dialog", async (d) => {
    seen.dialogs.push(d.message());
    await d.dismiss();
  });
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) seen.foreign.push(url);
  });
  page.on("pageerror", (e) => seen.errors.push(e.message));
  await page.exposeFunction("__xssMarker", (m: string) => seen.dialogs.push(`marker: ${m}`));
  await page.addInitScript(() => {
    for (const name of ["alert", "confirm", "prompt", "print"] as const) {
      (window as any)[name] = (...args: unknown[]) => (window as any).__xssMarker(`${name}(${args.join(",")})`);
    }
  });
  return seen;
}

test("hostile model output: no dialog, no script, no dangerous markup, no request to another origin", async ({ page }) => {
  const { dialogs, foreign, errors } = await watchForXss(page);

  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[xss] show me everything");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("alert(1)");
  await expect(chat.thinkingBlocks().first()).toBeAttached();
  await chat.summary(chat.thinkingBlocks().first()).click();
  await expect.poll(() => chat.isOpen(chat.thinkingBlocks().first())).toBe(true);
  await chat.settled();

  const found = await page.evaluate(() => {
    const bad: string[] = [];
    const scripts = [...document.querySelectorAll("script")].filter((s) => !s.hasAttribute("nonce"));
    if (scripts.length) bad.push(`${scripts.length} script(s) without the page's nonce`);
    const rendered = [...document.querySelectorAll(".markdown")];
    if (rendered.length < 2) bad.push("nothing rendered");
    for (const el of rendered.flatMap((r) => [...r.querySelectorAll("*")])) {
      const tag = el.tagName.toLowerCase();
      if (["script", "iframe", "object", "embed", "svg", "math", "style", "form", "img", "base", "meta", "link", "frame", "frameset"].includes(tag)) {
        bad.push(`<${tag}>`);
      }
      for (const attr of el.getAttributeNames()) {
        if (attr.startsWith("on")) bad.push(`${tag}[${attr}]`);
        if (attr === "style") bad.push(`${tag}[style]`);
        if (["href", "src", "action", "formaction", "xlink:href"].includes(attr)) {
          const value = (el.getAttribute(attr) ?? "").replace(/[\u0000-\u0020]/g, "").toLowerCase();
          if (!/^(https?:|mailto:)/.test(value)) bad.push(`${tag}[${attr}=${value}]`);
        }
      }
    }
    return bad;
  });
  expect(found).toEqual([]);
  expect(dialogs).toEqual([]);
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});

// The second layer alone, in the browser: markup the writer never emits goes through the same
// function the page uses before rendered markdown reaches the DOM (exported by the wasm module
// the page already loaded), and comes out reduced to the allow-list. Both paths are checked:
// with the browser's Sanitizer API first (Chromium has it), and the allow-list walk alone (what
// a browser without it gets). They differ only in what happens to a foreign element's content:
// the Sanitizer API drops it, the walk keeps its text.
test("the browser-side allow-list strips what the writer never emits", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  const cases: [string, string, string?][] = [
    ['<p id=x name=y style="color:red" onclick="alert(1)" lang=en>p</p>', "<p>p</p>"],
    ['<img src="https://evil.example/x.png" onerror="alert(1)">', ""],
    ['<svg><a href="javascript:alert(1)"><text>s</text></a><script>alert(1)</script></svg>', ""],
    ["<math><mi>x</mi></math>", ""],
    ['<a href="javascript:alert(1)">j</a>', '<a target="_blank" rel="noopener noreferrer nofollow">j</a>'],
    ['<a href=" JaVaScRiPt:alert(1)">k</a>', '<a target="_blank" rel="noopener noreferrer nofollow">k</a>'],
    ['<a href="/api/chat">r</a>', '<a target="_blank" rel="noopener noreferrer nofollow">r</a>'],
    [
      '<a href="http:api/chat" class="bubble md-image" target="_top" rel="opener">h</a>',
      '<a href="http://api/chat" class="md-image" target="_blank" rel="noopener noreferrer nofollow">h</a>',
    ],
    ['<code class="language-x bubble">c</code>', "<code>c</code>"],
    ['<div class="error code-block">d</div>', '<div class="code-block">d</div>'],
    [
      '<button type="submit" formaction="https://evil.example" aria-label="Copy code">b</button>',
      '<button aria-label="Copy code">b</button>',
    ],
    ['<button aria-label="Pay now" class="copy-code">c2</button>', '<button class="copy-code">c2</button>'],
    ['<ol start="1 onclick"><li>i</li></ol>', "<ol><li>i</li></ol>"],
    ['<style>p{}</style><iframe src="https://evil.example"></iframe><!-- c --><template><p>t</p></template>', ""],
    ['<form action="https://evil.example"><input name=q value=v><b>f</b></form>', "", "f"],
    ['<table><tr><td class="align-right x">1</td></tr></table>', '<table><tbody><tr><td class="align-right">1</td></tr></tbody></table>'],
  ];
  for (const withApi of [true, false]) {
    const got = await page.evaluate(
      async ({ inputs, withApi }) => {
        const src = document.querySelector<HTMLLinkElement>('link[rel="modulepreload"]:not([href$=".split.js"])')?.href;
        if (!src) return ["no module"];
        const mod = await import(src);
        return Promise.all(inputs.map((html) => mod.sanitize_markup(html, withApi)));
      },
      { inputs: cases.map(([dirty]) => dirty), withApi },
    );
    expect(got).toEqual(cases.map(([, api, walk]) => (withApi ? api : (walk ?? api))));
  }
});

// The corpus as a search's query and output, as source titles and as source addresses (half of
// them bare payloads, half inside an https query string), and as the citations that mark them.
test("hostile tool steps and sources: no dialog, no script, no link that is not http(s), no request", async ({ page }) => {
  const { dialogs, foreign, errors } = await watchForXss(page);
  const chat = new ChatPage(page);
  await chat.goto();
  await chat.send("[xss-sources] cite everything");
  await chat.waitForTurnEnd();
  const bubble = chat.lastAssistant();
  const items = bubble.getByRole("region", { name: "Sources" }).locator("li");
  expect(await items.count()).toBeGreaterThan(100);
  await bubble.locator(".tool-step summary").click();
  await expect(bubble.locator(".tool-output")).toContainText("alert(1)");
  await chat.settled();
  const found = await bubble.evaluate((root) => {
    const bad: string[] = [];
    for (const el of root.querySelectorAll(".tool-step *, .sources *, .answer *")) {
      const tag = el.tagName.toLowerCase();
      if (["script", "iframe", "object", "embed", "svg", "math", "style", "form", "img", "base", "meta", "link"].includes(tag)) {
        bad.push(`<${tag}>`);
      }
      for (const attr of el.getAttributeNames()) {
        if (attr.startsWith("on") || attr === "style") bad.push(`${tag}[${attr}]`);
        if (["href", "src", "action", "formaction", "xlink:href"].includes(attr)) {
          const value = (el.getAttribute(attr) ?? "").toLowerCase();
          if (!/^https?:\/\//.test(value)) bad.push(`${tag}[${attr}=${value}]`);
        }
      }
    }
    return bad;
  });
  expect(found).toEqual([]);
  expect(dialogs).toEqual([]);
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});

import { readFileSync } from "fs";
import { expect, test, type Page } from "@playwright/test";
import { SERVERS } from "../servers";
import { ChatPage, expectNoViolations } from "../pages/chat";

// Attachments as a reader uses them: picked with the paper clip, dropped on the composer, pasted
// from the clipboard; uploaded with a progress bar, sent with the message, reported back by the
// demo model as the bytes it received (in every wire format), shown under the message after a
// reload and on another device, kept by a branch, an edit and an export re-imported, and given to
// nobody else.

// A 1×1 PNG and a 3×2 one (the demo reads their sizes from the bytes it receives).
const PNG_1x1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const PNG_3x2 = (() => {
  const b = Buffer.from(PNG_1x1);
  b.writeUInt32BE(3, 16);
  b.writeUInt32BE(2, 20);
  return b;
})();

function tray(page: Page) {
  return page.getByRole("list", { name: "Files to send" });
}

async function uploaded(page: Page, count: number) {
  await expect(tray(page).getByRole("listitem")).toHaveCount(count);
  await expect(tray(page).locator("[aria-busy=true]")).toHaveCount(0);
  await expect(tray(page).locator(".file-about", { hasText: /·/ })).toHaveCount(count);
}

async function pick(page: Page, files: { name: string; mimeType: string; buffer: Buffer }[]) {
  const [chooser] = await Promise.all([
    page.waitForEvent("filechooser"),
    page.getByRole("button", { name: "Attach files" }).click(),
  ]);
  await chooser.setFiles(files);
}

async function drop(page: Page, name: string, text: string) {
  const data = await page.evaluateHandle(
    ([name, text]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: "text/markdown" }));
      return dt;
    },
    [name, text],
  );
  const form = page.locator("form.composer");
  await form.dispatchEvent("dragover", { dataTransfer: data });
  await expect(page.getByText("Drop files to attach them")).toBeVisible();
  await form.dispatchEvent("drop", { dataTransfer: data });
}

async function paste(page: Page, name: string, bytes: Buffer) {
  await page.getByRole("textbox", { name: "Message" }).evaluate(
    (el, [name, b64]) => {
      const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([raw], name, { type: "image/png" }));
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    [name, bytes.toString("base64")],
  );
}

function sentFiles(chat: ChatPage, which: "first" | "last" = "last") {
  return chat.userBubbles()[which]().locator(".sent-files");
}

test.describe.serial("attachments on the main server", () => {
  let address = "";

  test("attach by click, drop and paste; the model reports the bytes it received", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await pick(page, [{ name: "photo.png", mimeType: "image/png", buffer: PNG_3x2 }]);
    await drop(page, "notes.md", "hello from a dropped file");
    await paste(page, "screenshot.png", PNG_1x1);
    await uploaded(page, 3);
    await expect(tray(page).getByRole("listitem").first()).toContainText("photo.png");
    await expect(tray(page).getByRole("listitem").first()).toContainText("Image");
    await expect(tray(page).getByRole("listitem").nth(1)).toContainText("Text");
    await expectNoViolations(page, "with files in the tray");

    await chat.send("What are these?");
    await chat.waitForTurnEnd();
    const answer = chat.answer();
    await expect(answer).toContainText("I received 3 file(s):");
    await expect(answer).toContainText(`image/png, 3×2 pixels, ${PNG_3x2.length} bytes`);
    await expect(answer).toContainText(`image/png, 1×1 pixels, ${PNG_1x1.length} bytes`);
    await expect(answer).toContainText('text "notes.md": "hello from a dropped file"');
    await expect(tray(page)).toHaveCount(0);

    const sent = sentFiles(chat);
    await expect(sent.getByRole("button", { name: "Open photo.png" })).toBeVisible();
    await expect(sent.getByRole("button", { name: "Open screenshot.png" })).toBeVisible();
    await expect(sent.getByRole("link", { name: "Download notes.md" })).toBeVisible();
    await expect(sent.getByText("sent as image")).toHaveCount(2);
    await expect(sent.getByText("sent as text")).toHaveCount(1);

    // An image opens large, and Escape closes it.
    await sent.getByRole("button", { name: "Open photo.png" }).click();
    const large = page.locator("dialog.lightbox[open]");
    await expect(large.getByRole("img", { name: "photo.png" })).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(large).toHaveCount(0);
    address = page.url();
  });

  test("a reload and another device show the files; a follow-up sends them again as history", async ({ page, browser }) => {
    await page.goto(address);
    const chat = new ChatPage(page);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    const sent = sentFiles(chat);
    await expect(sent.getByRole("button", { name: "Open photo.png" })).toBeVisible();
    await expect(sent.getByText("sent as image")).toHaveCount(2);
    // The picture is the file the reader sent, served to its owner.
    const src = await sent.getByRole("img", { name: "photo.png" }).getAttribute("src");
    const file = await page.request.get(src!);
    expect(file.status()).toBe(200);
    expect(Buffer.from(await file.body()).equals(PNG_3x2)).toBe(true);
    expect(file.headers()["x-content-type-options"]).toBe("nosniff");
    expect(file.headers()["content-security-policy"]).toContain("default-src 'none'");

    const other = await browser.newContext();
    const second = await other.newPage();
    await second.goto(address);
    await expect(second.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await expect(sentFiles(new ChatPage(second)).getByRole("link", { name: "Download notes.md" })).toBeVisible();
    await other.close();

    await chat.send("And again?");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("The earlier messages carry 3 file(s).");
  });

  test("a branch and an edit keep the files", async ({ page }) => {
    await page.goto(address);
    const chat = new ChatPage(page);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    const first = chat.userBubbles().first();
    await first.getByRole("button", { name: "Branch from here" }).click();
    await expect(page).not.toHaveURL(address);
    await expect(chat.userBubbles()).toHaveCount(1);
    await expect(sentFiles(chat).getByRole("button", { name: "Open photo.png" })).toBeVisible();
    await expect(sentFiles(chat).getByText("sent as text")).toHaveCount(1);

    // Editing the message brings its files back into the tray; one removed, the rest go again.
    await chat.userBubbles().first().getByRole("button", { name: "Edit message" }).click();
    await uploaded(page, 3);
    await tray(page).getByRole("button", { name: "Remove screenshot.png" }).click();
    await expect(tray(page).getByRole("listitem")).toHaveCount(2);
    await chat.composer().fill("Only two now?");
    await chat.composer().press("Enter");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("I received 2 file(s):");
    await expect(sentFiles(chat).getByRole("button", { name: "Open screenshot.png" })).toHaveCount(0);
    await page.reload();
    await expect(sentFiles(chat).getByRole("link", { name: "Download notes.md" })).toBeVisible();
    await expect(sentFiles(chat).getByRole("button", { name: "Open screenshot.png" })).toHaveCount(0);
  });

  test("an export imported again keeps the files", async ({ page }) => {
    await page.goto(address);
    const chat = new ChatPage(page);
    await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
    await page.getByText("Export", { exact: true }).click();
    const [js] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download JSON" }).click()]);
    const path = await js.path();
    const record = JSON.parse(readFileSync(path, "utf8"));
    expect(record.messages[0].files.map((f: { name: string }) => f.name)).toEqual(["photo.png", "notes.md", "screenshot.png"]);
    record.id = "reimported";
    record.title = "Reimported with files";
    await page.locator(".import-file input").setInputFiles({
      name: "chat.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(record)),
    });
    await expect(page.getByText("Imported “Reimported with files”.")).toBeVisible();
    await page.getByRole("navigation", { name: "Conversations" }).getByText("Reimported with files").click();
    await expect(chat.userBubbles()).toHaveCount(2);
    await expect(sentFiles(chat, "first").getByRole("button", { name: "Open photo.png" })).toBeVisible();
    await expect(sentFiles(chat, "first").getByText("sent as image")).toHaveCount(2);
  });

  test("a file the model cannot take, or that is not what it says, is refused in the tray with the reason", async ({ page }) => {
    const chat = new ChatPage(page);
    await chat.goto();
    await pick(page, [
      { name: "holiday.heic", mimeType: "image/heic", buffer: Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypheic"), Buffer.alloc(16)]) },
      { name: "page.png", mimeType: "image/png", buffer: Buffer.from("<html><script>alert(1)</script></html>") },
    ]);
    const items = tray(page).getByRole("listitem");
    await expect(items).toHaveCount(2);
    await expect(items.first().getByRole("alert")).toContainText("HEIC");
    await expect(items.nth(1).getByRole("alert")).toContainText("page.png");
    // Nothing kept: the message cannot go with only refused files.
    await expect(chat.sendButton()).toBeDisabled();
    await items.first().getByRole("button", { name: "Remove holiday.heic" }).click();
    await items.first().getByRole("button", { name: "Remove page.png" }).click();
    await expect(tray(page)).toHaveCount(0);
  });
});

for (const [name, server] of Object.entries({
  anthropic: SERVERS.anthropic,
  responses: SERVERS.responses,
  gemini: SERVERS.gemini,
  interactions: SERVERS.interactions,
  ollama: SERVERS.ollama,
})) {
  test(`${name}: the files reach the model in its own wire format`, async ({ page }) => {
    const chat = new ChatPage(page, server.url);
    await chat.goto();
    await page.locator("#attach-input").setInputFiles([
      { name: "photo.png", mimeType: "image/png", buffer: PNG_3x2 },
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("plain words in a file") },
    ]);
    await uploaded(page, 2);
    await chat.send("Look");
    await chat.waitForTurnEnd();
    await expect(chat.answer()).toContainText("I received 2 file(s):");
    await expect(chat.answer()).toContainText(`3×2 pixels, ${PNG_3x2.length} bytes`);
    await expect(chat.answer()).toContainText('text "notes.txt": "plain words in a file"');
  });
}

test("another user gets 404 for a file's address; its owner gets it as a download", async ({ browser }) => {
  const url = SERVERS.proxyAuth.url;
  const alice = await browser.newContext({ extraHTTPHeaders: { "Remote-User": "alice-files" } });
  const bo = await browser.newContext({ extraHTTPHeaders: { "Remote-User": "bo-files" } });
  const up = await alice.request.post(`${url}/api/attachments?name=secret.txt`, {
    headers: { "content-type": "application/octet-stream", origin: url },
    data: Buffer.from("alice's secret"),
  });
  expect(up.status()).toBe(201);
  const { id } = await up.json();
  const mine = await alice.request.get(`${url}/api/attachments/${id}`);
  expect(mine.status()).toBe(200);
  expect(mine.headers()["content-disposition"]).toMatch(/^attachment/);
  expect(await mine.text()).toBe("alice's secret");
  const theirs = await bo.request.get(`${url}/api/attachments/${id}`);
  expect(theirs.status()).toBe(404);
  expect(await theirs.text()).not.toContain("secret");
  await alice.close();
  await bo.close();
});

test("an export carries its files' bytes: another user imports the chat with its files", async ({ browser }) => {
  const url = SERVERS.proxyAuth.url;
  const alice = await browser.newContext({ extraHTTPHeaders: { "Remote-User": "alice-export" } });
  const page = await alice.newPage();
  const chat = new ChatPage(page, url);
  await chat.goto();
  await page.locator("#attach-input").setInputFiles([{ name: "photo.png", mimeType: "image/png", buffer: PNG_3x2 }]);
  await uploaded(page, 1);
  await chat.send("Keep this picture");
  await chat.waitForTurnEnd();
  await page.getByText("Export", { exact: true }).click();
  const [js] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download JSON" }).click()]);
  const text = readFileSync(await js.path(), "utf8");
  const record = JSON.parse(text);
  const id = record.messages[0].files[0].id;
  expect(Buffer.from(record.files[id], "base64").equals(PNG_3x2)).toBe(true);

  const bo = await browser.newContext({ extraHTTPHeaders: { "Remote-User": "bo-export" } });
  expect((await bo.request.get(`${url}/api/attachments/${id}`)).status()).toBe(404);
  const theirs = await bo.newPage();
  const other = new ChatPage(theirs, url);
  await other.goto();
  await theirs.locator(".import-file input").setInputFiles({ name: "chat.json", mimeType: "application/json", buffer: Buffer.from(text) });
  await expect(theirs.getByText("Imported “Keep this picture”.")).toBeVisible();
  await theirs.getByRole("navigation", { name: "Conversations" }).getByText("Keep this picture").click();
  await expect(sentFiles(other, "first").getByRole("button", { name: "Open photo.png" })).toBeVisible();
  await expect(sentFiles(other, "first").getByText("sent as image")).toBeVisible();
  // Bo's copy is bo's own file, under a new address, with the same bytes.
  const src = await sentFiles(other, "first").locator("img").getAttribute("src");
  expect(src).not.toContain(id);
  const copy = await bo.request.get(new URL(src!, url).toString());
  expect(copy.status()).toBe(200);
  expect((await copy.body()).equals(PNG_3x2)).toBe(true);
  await alice.close();
  await bo.close();
});

test("with the chats in this browser the files go inside each request; a reload keeps the small ones", async ({ page }) => {
  const chat = new ChatPage(page, SERVERS.browserHistory.url);
  await chat.goto();
  const big = Buffer.from("big words ".repeat(60_000));
  await page.locator("#attach-input").setInputFiles([
    { name: "photo.png", mimeType: "image/png", buffer: PNG_3x2 },
    { name: "big.txt", mimeType: "text/plain", buffer: big },
  ]);
  await uploaded(page, 2);
  await chat.send("Look");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("I received 2 file(s):");
  await expect(chat.answer()).toContainText(`3×2 pixels, ${PNG_3x2.length} bytes`);
  await expect(chat.answer()).toContainText('text "big.txt": "big words big words');
  // The page shows them from the bytes it holds (the server kept nothing).
  await expect(sentFiles(chat).getByRole("button", { name: "Open photo.png" })).toBeVisible();
  await expect(sentFiles(chat).getByRole("link", { name: "Download big.txt" })).toHaveAttribute("href", /^data:/);
  // The saved chat keeps the small file's bytes, not the large one's.
  const saved = await page.evaluate(() => Object.values(localStorage).find((v) => v.includes('"photo.png"')) ?? "");
  expect(saved).toContain(PNG_3x2.toString("base64"));
  expect(saved.length).toBeLessThan(big.length);

  await page.reload();
  await expect(page.locator(".chat-page[data-hydrated=true]")).toBeAttached();
  await expect(sentFiles(chat, "first").getByRole("button", { name: "Open photo.png" })).toBeVisible();
  // Too large to keep in this browser: its name and kind stay, its bytes are gone.
  await expect(sentFiles(chat, "first")).toContainText("big.txt");
  await expect(sentFiles(chat, "first").getByRole("link", { name: "Download big.txt" })).toHaveCount(0);
  await chat.send("And now?");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("The earlier messages carry 1 file(s)");
});

test("the tray's code comes when a file is first attached; a failed fetch says so and the next try attaches", async ({ page }) => {
  const TRAY = /\/pkg\/ponder\.[0-9a-f]{16}\.attachments\.wasm$/;
  const fetched: string[] = [];
  page.on("request", (r) => {
    if (TRAY.test(new URL(r.url()).pathname)) fetched.push(r.url());
  });
  await page.route(TRAY, (route) => route.abort("connectionfailed"));
  const chat = new ChatPage(page);
  await chat.goto();
  expect(fetched).toHaveLength(0);
  await page.locator("#attach-input").setInputFiles([{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("kept") }]);
  await expect(page.locator(".notice[data-kind=server]")).toContainText(chat.w.t("part_not_loaded"));
  await expect(tray(page)).toHaveCount(0);

  await page.unroute(TRAY);
  await page.locator("#attach-input").setInputFiles([{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("kept") }]);
  await uploaded(page, 1);
  expect(fetched.length).toBeGreaterThan(1);
});

test("a PDF goes as a document by default, or as its text or its pages when the reader says so; the chip says which, with its pages", async ({ page }) => {
  const chat = new ChatPage(page);
  await chat.goto();
  await page.locator("#attach-input").setInputFiles([{ name: "paper.pdf", mimeType: "application/pdf", buffer: pdf(["Results are good", "Methods follow"]) }]);
  await uploaded(page, 1);
  await expect(tray(page)).toContainText("PDF, 2 pages");
  const how = tray(page).getByRole("combobox", { name: "How to send paper.pdf" });
  await expect(how).toHaveValue("");
  await chat.send("Read it");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText('application/pdf "paper.pdf"');
  await expect(sentFiles(chat)).toContainText("PDF, 2 pages · sent as document");

  await page.locator("#attach-input").setInputFiles([{ name: "paper.pdf", mimeType: "application/pdf", buffer: pdf(["Results are good", "Methods follow"]) }]);
  await uploaded(page, 1);
  await how.selectOption({ label: "As its text" });
  await chat.send("Now as text");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText('text "paper.pdf": "Results are good Methods follow"');
  await expect(sentFiles(chat)).toContainText("PDF, 2 pages · sent as text");
  await page.reload();
  await expect(sentFiles(chat)).toContainText("PDF, 2 pages · sent as text");

  // As page images: each page drawn as a PNG, 1536 pixels on its longer side.
  await page.locator("#attach-input").setInputFiles([{ name: "paper.pdf", mimeType: "application/pdf", buffer: pdf(["Results are good", "Methods follow"]) }]);
  await uploaded(page, 1);
  await how.selectOption({ label: "As page images" });
  await chat.send("Now as pages");
  await chat.waitForTurnEnd();
  await expect(chat.answer()).toContainText("I received 2 file(s)");
  await expect(chat.answer().getByText("image/png, 1187×1536 pixels")).toHaveCount(2);
  await expect(sentFiles(chat)).toContainText("PDF, 2 pages · sent as page images");
});

/** A real PDF of one Helvetica line per page. */
function pdf(pages: string[]): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(" ")}] /Count ${pages.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
  ];
  pages.forEach((text, i) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    const stream = `BT /F1 24 Tf 72 700 Td (${text}) Tj ET`;
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

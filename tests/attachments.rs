//! Attachments over real HTTP: a file is judged by its bytes, kept within every limit, and
//! given back to its owner only, as a download no browser runs in Ponder's origin.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

#[path = "integration/common/mod.rs"]
mod common;

use common::TestApp;
use serde_json::Value;

async fn app(vars: &[(&str, &str)]) -> TestApp {
    let mut all = vec![
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ];
    all.extend_from_slice(vars);
    TestApp::spawn(&all).await
}

fn png(width: u32, height: u32, filler: u8) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend(width.to_be_bytes());
    b.extend(height.to_be_bytes());
    b.extend([8, 6, 0, 0, 0]);
    b.extend(std::iter::repeat_n(filler, 100));
    b
}

async fn upload(app: &TestApp, user: &str, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    app.http
        .post(format!(
            "{}?name={}",
            app.url("/api/attachments"),
            url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
        ))
        .header("Remote-User", user)
        .header("content-type", "application/octet-stream")
        .body(bytes)
        .send()
        .await
        .expect("upload")
}

async fn refusal(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON refusal"))
}

#[tokio::test]
async fn a_file_is_judged_by_its_bytes_and_given_back_to_its_owner_only() {
    let app = app(&[]).await;
    let bytes = png(640, 480, 3);
    let response = upload(&app, "alice", "notes.txt", bytes.clone()).await;
    assert_eq!(response.status(), 201);
    let info: Value = response.json().await.expect("json");
    assert_eq!(
        info["kind"], "image",
        "a PNG named .txt is an image: {info}"
    );
    assert_eq!(info["mime"], "image/png");
    assert_eq!(info["pixels"], serde_json::json!([640, 480]));
    assert_eq!(info["name"], "notes.txt");
    let id = info["id"].as_str().expect("id").to_string();
    let url = app.url(&format!("/api/attachments/{id}"));

    let mine = app
        .http
        .get(&url)
        .header("Remote-User", "alice")
        .send()
        .await
        .expect("download");
    assert_eq!(mine.status(), 200);
    let h = mine.headers().clone();
    let header = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert_eq!(header("content-type"), "image/png");
    assert!(
        header("content-disposition").starts_with("attachment;"),
        "{h:?}"
    );
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert_eq!(
        header("content-security-policy"),
        "default-src 'none'; sandbox"
    );
    assert_eq!(header("cross-origin-resource-policy"), "same-origin");
    assert_eq!(mine.bytes().await.expect("bytes").to_vec(), bytes);

    // Another user, and nobody: as if it did not exist.
    let theirs = app
        .http
        .get(&url)
        .header("Remote-User", "bob")
        .send()
        .await
        .expect("download");
    let missing = app
        .http
        .get(app.url("/api/attachments/0000000000000000000000000000"))
        .header("Remote-User", "bob")
        .send()
        .await
        .expect("download");
    let (a, body_a) = refusal(theirs).await;
    let (b, body_b) = refusal(missing).await;
    assert_eq!((a, b), (404, 404));
    assert_eq!(
        body_a, body_b,
        "another user's file reads exactly as a missing one"
    );
    let anonymous = app.http.get(&url).send().await.expect("download");
    assert_eq!(anonymous.status(), 401);
}

#[tokio::test]
async fn what_cannot_be_sent_is_refused_with_its_reason_and_status() {
    let app = app(&[
        ("PONDER_MAX_ATTACHMENT_BYTES", "2048"),
        ("PONDER_MAX_USER_ATTACHMENT_BYTES", "4096"),
    ])
    .await;
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "cat.png",
            b"<!doctype html><script>alert(document.cookie)</script>".to_vec(),
            415,
            "attachment_misnamed",
        ),
        (
            "IMG_1.HEIC",
            b"\0\0\0\x18ftypheic\0\0\0\0mif1heic".to_vec(),
            415,
            "attachment_heic",
        ),
        (
            "tool.exe",
            b"MZ\x90\0\x03\0\0\0\x04\0".to_vec(),
            415,
            "attachment_unsupported",
        ),
        ("wide.png", png(60_000, 60_000, 0), 400, "image_too_large"),
        ("empty.txt", Vec::new(), 400, "attachment_empty"),
        ("big.txt", vec![b'a'; 2049], 413, "attachment_too_large"),
    ];
    for (name, bytes, status, code) in cases {
        let (got, body) = refusal(upload(&app, "alice", name, bytes).await).await;
        assert_eq!(
            (got, body["code"].as_str()),
            (status, Some(code)),
            "{name}: {body}"
        );
        assert_eq!(body["params"]["name"], name, "{body}");
        assert!(
            body["message"].as_str().is_some_and(|m| m.contains(name)),
            "the English sentence names the file: {body}"
        );
    }
    // A body sent without its length is cut at the same limit.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        vec![Ok(vec![b'a'; 1500]), Ok(vec![b'b'; 1500])];
    let streamed = app
        .http
        .post(app.url("/api/attachments?name=stream.txt"))
        .header("Remote-User", "alice")
        .header("content-type", "application/octet-stream")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .expect("upload");
    let (status, body) = refusal(streamed).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("attachment_too_large")),
        "{body}"
    );
    // The user's quota counts each content once.
    for filler in [1u8, 2] {
        let kept = upload(
            &app,
            "alice",
            "a.png",
            [png(8, 8, filler), vec![filler; 1500]].concat(),
        )
        .await;
        assert_eq!(kept.status(), 201);
    }
    let again = upload(
        &app,
        "alice",
        "copy.png",
        [png(8, 8, 1), vec![1; 1500]].concat(),
    )
    .await;
    assert_eq!(again.status(), 201, "the same bytes again cost nothing");
    let (status, body) = refusal(
        upload(
            &app,
            "alice",
            "third.png",
            [png(8, 8, 3), vec![3; 1500]].concat(),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("attachment_quota")),
        "{body}"
    );
    let bob = upload(
        &app,
        "bob",
        "third.png",
        [png(8, 8, 3), vec![3; 1500]].concat(),
    )
    .await;
    assert_eq!(bob.status(), 201, "a quota is each user's own");
}

#[tokio::test]
async fn an_upload_must_come_from_ponders_page_as_raw_bytes() {
    let app = app(&[]).await;
    let bytes = png(4, 4, 0);
    for (content_type, origin, status) in [
        ("application/json", None, 415),
        ("multipart/form-data; boundary=x", None, 415),
        ("text/plain", None, 415),
        (
            "application/octet-stream",
            Some("https://evil.example"),
            403,
        ),
    ] {
        let mut req = app
            .http
            .post(app.url("/api/attachments?name=a.png"))
            .header("Remote-User", "alice")
            .header("content-type", content_type)
            .body(bytes.clone());
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        let response = req.send().await.expect("upload");
        assert_eq!(
            response.status().as_u16(),
            status,
            "{content_type} {origin:?}"
        );
    }
    let browser_history = TestApp::spawn(&[("PONDER_HISTORY", "browser")]).await;
    let response = browser_history
        .http
        .post(browser_history.url("/api/attachments?name=a.png"))
        .header("content-type", "application/octet-stream")
        .body(bytes)
        .send()
        .await
        .expect("upload");
    // Where the browser keeps the history the file is judged, not kept (200, not 201).
    assert_eq!(response.status(), 200);
    let judged: Value = response.json().await.expect("json");
    assert_eq!(judged["kind"], "image");
}

/// A JSON request to one of the API's endpoints, as `user`.
async fn api(app: &TestApp, user: &str, path: &str, body: Value) -> reqwest::Response {
    app.http
        .post(app.url(path))
        .header("Remote-User", user)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect(path)
}

async fn chat(app: &TestApp, user: &str, body: Value) -> (u16, Vec<ponder::domain::TurnEvent>) {
    let response = api(app, user, "/api/chat", body).await;
    let status = response.status().as_u16();
    (status, common::read_events(response).await)
}

#[tokio::test]
async fn the_files_reach_the_model_in_every_wire_format() {
    let pdf = common::pdf(&["Hello from page one", "And a second page"]);
    let notes = "# Plan\n\nShip the attachments first.\n"
        .as_bytes()
        .to_vec();
    for provider in [
        "openai",
        "anthropic",
        "responses",
        "gemini",
        "gemini-interactions",
        "ollama",
    ] {
        let app = app(&[("PONDER_PROVIDER", provider)]).await;
        let mut ids = Vec::new();
        let files = vec![
            ("shot.png", png(640, 480, 9)),
            ("plan.md", notes.clone()),
            ("paper.pdf", pdf.clone()),
        ];
        for (name, bytes) in files {
            let kept: Value = upload(&app, "alice", name, bytes)
                .await
                .json()
                .await
                .expect("json");
            ids.push(kept["id"].as_str().expect("id").to_string());
        }
        let (status, events) = chat(
            &app,
            "alice",
            serde_json::json!({"content": "What did I send?", "attachments": ids}),
        )
        .await;
        assert_eq!(status, 200, "{provider}");
        let answer = common::answer_text(&events);
        assert!(
            answer.contains("image/png, 640×480 pixels, 129 bytes"),
            "{provider}: {answer}"
        );
        assert!(
            answer.contains("text \"plan.md\": \"# Plan Ship the attachments first.\""),
            "{provider}: {answer}"
        );
        if provider == "ollama" {
            // No document input: the PDF goes as the text read from it on upload.
            assert!(
                answer.contains("text \"paper.pdf\": \"Hello from page one And a\""),
                "{provider}: {answer}"
            );
        } else {
            assert!(
                answer.contains("application/pdf")
                    && answer.contains(&format!("{} bytes", pdf.len())),
                "{provider}: {answer}"
            );
        }
        // The next turn of the conversation sends them again, from the store.
        let conversation = events
            .iter()
            .find_map(|e| match e {
                ponder::domain::TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
                _ => None,
            })
            .expect("stored");
        let (_, again) = chat(
            &app,
            "alice",
            serde_json::json!({"conversation": conversation, "content": "And now?"}),
        )
        .await;
        let answer = common::answer_text(&again);
        assert!(
            answer.contains("I received"),
            "{provider}: the history keeps its files: {answer}"
        );
    }
}

#[tokio::test]
async fn a_message_takes_only_its_senders_files_within_its_limit() {
    let app = app(&[
        ("PONDER_MAX_ATTACHMENT_BYTES", "2048"),
        ("PONDER_MAX_MESSAGE_ATTACHMENT_BYTES", "3000"),
    ])
    .await;
    let kept = |v: Value| v["id"].as_str().expect("id").to_string();
    let bobs = kept(
        upload(&app, "bob", "b.png", png(8, 8, 1))
            .await
            .json()
            .await
            .expect("json"),
    );
    let (status, _) = chat(
        &app,
        "alice",
        serde_json::json!({"content": "mine?", "attachments": [bobs]}),
    )
    .await;
    assert_eq!(status, 404, "another user's file is not found");
    let a = kept(
        upload(&app, "alice", "a.txt", vec![b'a'; 2000])
            .await
            .json()
            .await
            .expect("json"),
    );
    let b = kept(
        upload(&app, "alice", "b.txt", vec![b'b'; 2000])
            .await
            .json()
            .await
            .expect("json"),
    );
    let both = serde_json::json!({"content": "both", "attachments": [a, b]});
    let (status, body) = refusal(api(&app, "alice", "/api/chat", both).await).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("attachments_too_large")),
        "{body}"
    );
    let list: Value = api(
        &app,
        "alice",
        "/api/conversations/list",
        serde_json::json!({}),
    )
    .await
    .json()
    .await
    .expect("json");
    assert_eq!(
        list,
        serde_json::json!([]),
        "a refused turn leaves no chat behind"
    );
}

/// A real PNG `side`×`side` of transparent pixels: half a megabyte that decodes to
/// `side² × 4` bytes.
fn bomb_png(side: u32) -> Vec<u8> {
    use std::io::Write;
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend(kind);
        out.extend(data);
        out.extend(crc.sum().to_be_bytes());
    }
    let mut ihdr = side.to_be_bytes().to_vec();
    ihdr.extend(side.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let row = vec![0u8; 1 + side as usize * 4];
    for _ in 0..side {
        z.write_all(&row).unwrap();
    }
    let idat = z.finish().unwrap();
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A PDF whose page tree is its own child and claims a billion pages.
fn looped_pdf() -> Vec<u8> {
    common::pdf_of(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [2 0 R 2 0 R] /Count 1000000000 >>".into(),
    ])
}

/// This process's resident memory, in KiB (the in-process server's; a child's is its own).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test]
async fn hostile_files_are_refused_in_bounded_memory_while_a_turn_beside_them_completes() {
    let app = app(&[("PONDER_DEMO_DELAY_MS", "20")]).await;
    let bomb = bomb_png(12_000);
    assert!(bomb.len() < 4 << 20, "{} bytes", bomb.len());
    let (looped, wide) = (looped_pdf(), png(60_000, 10, 0));
    let before = rss_kib();
    let started = std::time::Instant::now();
    let (turn, bombed, looping, too_wide) = tokio::join!(
        chat(
            &app,
            "alice",
            serde_json::json!({"content": "[two-blocks] a healthy question"})
        ),
        upload(&app, "bob", "bomb.png", bomb),
        upload(&app, "bob", "looped.pdf", looped),
        upload(&app, "bob", "wide.png", wide),
    );
    let (status, events) = turn;
    assert_eq!(status, 200);
    assert!(
        matches!(events.last(), Some(ponder::domain::TurnEvent::Done { .. })),
        "{events:?}"
    );
    for (response, code) in [
        (bombed, "attachment_unreadable"),
        (looping, "attachment_unreadable"),
        (too_wide, "image_too_large"),
    ] {
        let (status, body) = refusal(response).await;
        assert_eq!((status, body["code"].as_str()), (400, Some(code)), "{body}");
    }
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
    assert!(started.elapsed() < std::time::Duration::from_secs(40));
    // Nothing was kept.
    let response = api(
        &app,
        "bob",
        "/api/conversations/list",
        serde_json::json!({}),
    )
    .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_large_image_is_kept_smaller_and_served_inline_a_gif_as_its_first_frame() {
    let app = app(&[("PONDER_RESIZE_IMAGES_ABOVE", "64")]).await;
    let big = {
        let img = image::RgbImage::from_fn(300, 150, |x, y| image::Rgb([x as u8, y as u8, 7]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    let kept: Value = upload(&app, "alice", "wide.png", big.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(kept["pixels"], serde_json::json!([64, 32]), "{kept}");
    assert_eq!(kept["mime"], "image/png");
    let served = app
        .http
        .get(app.url(&format!(
            "/api/attachments/{}",
            kept["id"].as_str().unwrap()
        )))
        .header("Remote-User", "alice")
        .send()
        .await
        .unwrap();
    assert!(served.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("inline"));
    assert_eq!(
        served.headers()["content-security-policy"],
        "default-src 'none'; sandbox"
    );
    let bytes = served.bytes().await.unwrap();
    assert!(bytes.len() < big.len());
    let decoded = image::load_from_memory(&bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (64, 32));

    let gif = {
        let frame = image::RgbaImage::from_pixel(20, 10, image::Rgba([200, 10, 10, 255]));
        let mut out = Vec::new();
        let mut encoder = image::codecs::gif::GifEncoder::new(&mut out);
        encoder
            .encode_frame(image::Frame::new(frame.clone()))
            .unwrap();
        encoder.encode_frame(image::Frame::new(frame)).unwrap();
        drop(encoder);
        out
    };
    let kept: Value = upload(&app, "alice", "moving.gif", gif)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (kept["mime"].as_str(), &kept["pixels"]),
        (Some("image/png"), &serde_json::json!([20, 10])),
        "{kept}"
    );
    // A small PNG stays as it came, and is a download.
    let small: Value = upload(&app, "alice", "small.png", png(40, 30, 1))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(small["pixels"], serde_json::json!([40, 30]));
    assert!(small.get("reencoded").is_none(), "{small}");
}

#[tokio::test]
async fn a_pdf_s_pages_are_counted_and_a_damaged_one_is_refused() {
    let app = app(&[]).await;
    let kept: Value = upload(
        &app,
        "alice",
        "paper.pdf",
        common::pdf(&["one", "two", "three"]),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        (kept["kind"].as_str(), &kept["pages"]),
        (Some("pdf"), &serde_json::json!(3)),
        "{kept}"
    );
    let damaged = b"%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n".to_vec();
    let (status, body) = refusal(upload(&app, "alice", "broken.pdf", damaged).await).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("attachment_unreadable")),
        "{body}"
    );
    assert_eq!(body["params"]["name"], "broken.pdf");
}

#[tokio::test]
async fn the_reader_chooses_how_a_pdf_goes_and_later_turns_keep_that_way() {
    let app = app(&[("PONDER_PROVIDER", "anthropic")]).await;
    let kept: Value = upload(&app, "alice", "paper.pdf", common::pdf(&["Findings first"]))
        .await
        .json()
        .await
        .unwrap();
    let id = kept["id"].as_str().unwrap().to_string();
    let (status, refused) = chat(
        &app,
        "alice",
        serde_json::json!({"content": "Read", "attachments": [id], "send_as": {"other": "text"}}),
    )
    .await;
    assert_eq!(status, 400, "{refused:?}");
    let (status, events) = chat(
        &app,
        "alice",
        serde_json::json!({"content": "Read", "attachments": [id], "send_as": {id.clone(): "text"}}),
    )
    .await;
    assert_eq!(status, 200);
    let answer = common::answer_text(&events);
    assert!(
        answer.contains("text \"paper.pdf\": \"Findings first\""),
        "{answer}"
    );
    let (conversation, sent) = events
        .iter()
        .find_map(|e| match e {
            ponder::domain::TurnEvent::Turn {
                conversation,
                sent_as,
                ..
            } => Some((conversation.clone(), sent_as.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(sent, vec![ponder::domain::attachment::SendAs::Text]);
    let stored = stored(&app, "alice", &conversation).await;
    let file = &stored["messages"][0]["versions"][0]["files"][0];
    assert_eq!(
        (file["sent_as"].as_str(), &file["pages"]),
        (Some("text"), &serde_json::json!(1)),
        "{stored}"
    );
    // The next turn sends the history's PDF the same way.
    let (_, again) = chat(
        &app,
        "alice",
        serde_json::json!({"conversation": conversation, "content": "More"}),
    )
    .await;
    let answer = common::answer_text(&again);
    assert!(
        answer.contains("The earlier messages carry 1 file(s)"),
        "{answer}"
    );
}

/// A scanned page: a PDF whose one page is a drawing with no text.
fn scanned_pdf() -> Vec<u8> {
    let drawing = "0 0 1 rg 100 100 300 400 re f";
    common::pdf_of(&[
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".into(),
        format!(
            "<< /Length {} >>\nstream\n{drawing}\nendstream",
            drawing.len()
        ),
    ])
}

#[tokio::test]
async fn a_pdf_goes_as_its_pages_drawn_as_images_when_asked_or_when_it_is_a_scan() {
    // Ollama has no document input: a scan (no text) goes to a model that sees as its pages.
    let app = app(&[("PONDER_PROVIDER", "ollama")]).await;
    let scan = kept_id(&app, "alice", "scan.pdf", scanned_pdf()).await;
    let id = scan;
    let (status, events) = chat(
        &app,
        "alice",
        serde_json::json!({"content": "What is drawn?", "attachments": [id]}),
    )
    .await;
    assert_eq!(status, 200, "{events:?}");
    let answer = common::answer_text(&events);
    assert!(
        answer.contains("image/png, 1187×1536 pixels"),
        "the page drawn at 1536 pixels high: {answer}"
    );
    let sent = events.iter().find_map(|e| match e {
        ponder::domain::TurnEvent::Turn { sent_as, .. } => Some(sent_as.clone()),
        _ => None,
    });
    assert_eq!(sent, Some(vec![ponder::domain::attachment::SendAs::Pages]));

    // Asked for, a PDF with text goes as its pages too (here to Anthropic, as image blocks).
    let app = self::app(&[("PONDER_PROVIDER", "anthropic")]).await;
    let kept = kept_id(&app, "bo", "two.pdf", common::pdf(&["One", "Two"])).await;
    let id = kept;
    let (_, events) = chat(
        &app,
        "bo",
        serde_json::json!({"content": "Read", "attachments": [id], "send_as": {id.clone(): "pages"}}),
    )
    .await;
    let answer = common::answer_text(&events);
    assert_eq!(
        answer.matches("image/png, 1187×1536 pixels").count(),
        2,
        "{answer}"
    );

    // Without a renderer a scan cannot go to a model that reads no documents.
    let app = self::app(&[
        ("PONDER_PROVIDER", "ollama"),
        ("PONDER_PDF_RENDERER", "off"),
    ])
    .await;
    let scan = kept_id(&app, "cy", "scan.pdf", scanned_pdf()).await;
    let (status, refused) = chat(
        &app,
        "cy",
        serde_json::json!({"content": "What?", "attachments": [scan]}),
    )
    .await;
    assert_eq!(status, 400, "{refused:?}");
}

#[tokio::test]
async fn the_tokens_the_files_took_are_counted_where_the_provider_counts_them_and_kept() {
    for provider in ["gemini", "gemini-interactions"] {
        let app = app(&[("PONDER_PROVIDER", provider)]).await;
        let mut ids = Vec::new();
        for (name, bytes) in [
            ("shot.png", png(4, 3, 1)),
            ("paper.pdf", common::pdf(&["Findings"])),
        ] {
            ids.push(kept_id(&app, "alice", name, bytes).await);
        }
        let (status, events) = chat(
            &app,
            "alice",
            serde_json::json!({"content": "Look", "attachments": ids}),
        )
        .await;
        assert_eq!(status, 200, "{provider}: {events:?}");
        let usage = done_usage(&events).expect("usage");
        // The demo counts 258 tokens a file, and 12 for the text.
        assert_eq!(
            (usage.input_tokens, usage.file_tokens),
            (Some(12 + 2 * 258), Some(2 * 258)),
            "{provider}"
        );
        let conversation = events
            .iter()
            .find_map(|e| match e {
                ponder::domain::TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
                _ => None,
            })
            .unwrap();
        let stored = stored(&app, "alice", &conversation).await;
        assert_eq!(
            stored["messages"][1]["versions"][0]["usage"]["file_tokens"],
            2 * 258,
            "{provider}: kept with the answer: {stored}"
        );
    }
    // A provider that does not count them apart says nothing of them.
    let app = app(&[("PONDER_PROVIDER", "anthropic")]).await;
    let kept = kept_id(&app, "bo", "shot.png", png(4, 3, 1)).await;
    let (_, events) = chat(
        &app,
        "bo",
        serde_json::json!({"content": "Look", "attachments": [kept]}),
    )
    .await;
    let usage = done_usage(&events);
    assert_eq!(usage.and_then(|u| u.file_tokens), None);
}

/// The id of the file `name` uploaded by `user`, kept.
async fn kept_id(app: &TestApp, user: &str, name: &str, bytes: Vec<u8>) -> String {
    let kept: Value = upload(app, user, name, bytes).await.json().await.unwrap();
    kept["id"].as_str().expect("kept").to_string()
}

/// The counts the turn's `done` event carried.
fn done_usage(events: &[ponder::domain::TurnEvent]) -> Option<ponder::domain::Usage> {
    events.iter().find_map(|e| match e {
        ponder::domain::TurnEvent::Done { usage, .. } => usage.clone(),
        _ => None,
    })
}

#[tokio::test]
async fn a_client_that_keeps_its_own_history_sends_files_inside_the_request() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let app = app(&[
        ("PONDER_HISTORY", "browser"),
        ("PONDER_MAX_MESSAGE_ATTACHMENT_BYTES", "30000"),
        ("PONDER_MAX_ATTACHMENT_BYTES", "20000"),
    ])
    .await;
    // Judged, not kept: the page learns what the file is, and keeps it itself.
    let response = upload(&app, "alice", "shot.txt", png(4, 3, 1)).await;
    assert_eq!(response.status(), 200);
    let judged: Value = response.json().await.unwrap();
    assert_eq!(
        (judged["kind"].as_str(), &judged["pixels"]),
        (Some("image"), &serde_json::json!([4, 3]))
    );
    let id = judged["id"].as_str().unwrap();
    assert_eq!(id.len(), 64, "its SHA-256: {judged}");
    let kept = app
        .http
        .get(app.url(&format!("/api/attachments/{id}")))
        .header("Remote-User", "alice")
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), 400, "nothing is kept");

    let message = |text: &str, files: Value| serde_json::json!({"role": "user", "content": text, "inline": files});
    let (status, events) = chat(
        &app,
        "alice",
        serde_json::json!({"messages": [
            message("Read this", serde_json::json!([{"name": "notes.md", "data": b64(b"# Plan\nship it")}])),
            {"role": "assistant", "content": "Read."},
            message("", serde_json::json!([{"name": "shot.png", "data": b64(&png(4, 3, 1))}])),
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{events:?}");
    let answer = common::answer_text(&events);
    assert!(answer.contains("I received 1 file(s)"), "{answer}");
    assert!(answer.contains("4×3 pixels"), "{answer}");
    assert!(
        answer.contains("The earlier messages carry 1 file(s)"),
        "the history's file went again: {answer}"
    );

    for (body, code, status) in [
        (
            serde_json::json!({"messages": [message("x", serde_json::json!([{"name": "a.png", "data": "not base64!"}]))]}),
            "attachment_unreadable",
            400,
        ),
        (
            serde_json::json!({"messages": [message("x", serde_json::json!([{"name": "page.png", "data": b64(b"<html><script>alert(1)</script></html>")}]))]}),
            "attachment_misnamed",
            415,
        ),
        (
            serde_json::json!({"messages": [message("x", serde_json::json!([
                {"name": "a.txt", "data": b64(&vec![b'a'; 16_000])},
                {"name": "b.txt", "data": b64(&vec![b'b'; 16_000])},
            ]))]}),
            "attachments_too_large",
            413,
        ),
        (
            serde_json::json!({"messages": [
                message("x", serde_json::json!([])),
                {"role": "assistant", "content": "y", "inline": [{"name": "a.txt", "data": b64(b"a")}]},
                message("z", serde_json::json!([])),
            ]}),
            "bad_request",
            400,
        ),
    ] {
        let (got, refused) = refusal(api(&app, "alice", "/api/chat", body).await).await;
        assert_eq!(
            (got, refused["code"].as_str()),
            (status, Some(code)),
            "{refused}"
        );
    }
}

/// The conversation `id` as `user` reads it back (`conversations/get`).
async fn stored(app: &TestApp, user: &str, id: &str) -> Value {
    api(
        app,
        user,
        "/api/conversations/get",
        serde_json::json!({ "id": id }),
    )
    .await
    .json()
    .await
    .expect("the conversation")
}

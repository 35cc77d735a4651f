//! Attachments over real HTTP: a file is judged by its bytes, kept within every limit, and
//! given back to its owner only, as a download no browser runs in Ponder's origin.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

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
    let (status, body) = refusal(response).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("no_server_history"))
    );
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
    let pdf = b"%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n".to_vec();
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
        let mut files = vec![("shot.png", png(640, 480, 9)), ("plan.md", notes.clone())];
        if provider != "ollama" {
            files.push(("paper.pdf", pdf.clone()));
        }
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
        if provider != "ollama" {
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

//! The published description is true: it is served at `/api/openapi.json`; every operation in
//! it answers on a live server with a status it documents and a body its schema accepts; every
//! route the router adds comes from the table the description is built from; and the stream of
//! every demo scenario (stateless, stored, and joined) is made of events the schemas accept.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::TestApp;
use serde_json::{json, Value};

async fn description(app: &TestApp) -> Value {
    let response = app
        .http
        .get(app.url("/api/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let doc: Value = response.json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    doc
}

/// A validator for `#/components/schemas/<name>` of the description.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    if let Some(map) = root.as_object_mut() {
        map.insert("components".into(), doc["components"].clone());
    } else {
        root = json!({ "allOf": [schema], "components": doc["components"] });
    }
    jsonschema::validator_for(&root).expect("the schema compiles")
}

fn check(doc: &Value, schema: &Value, instance: &Value, what: &str) {
    let validator = validator(doc, schema);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}\n{instance}");
}

/// A request for `method path` with what it must carry (path and required query parameters,
/// a body of the media type it reads), the smallest that reads.
fn request(browser: &Browser, doc: &Value, path: &str, method: &str) -> reqwest::RequestBuilder {
    let op = &doc["paths"][path][method];
    let mut url = path
        .replace("{id}", "x")
        .replace("{token}", "x")
        .replace("{n}", "0");
    let required: Vec<String> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "query" && p["required"] == true)
        .map(|p| format!("{}=a.txt", p["name"].as_str().unwrap()))
        .collect();
    if !required.is_empty() {
        url = format!("{url}?{}", required.join("&"));
    }
    let full = format!("{}{url}", browser.base);
    let mut req = match method {
        "get" => browser.http.get(full),
        _ => browser.http.post(full),
    };
    let media = op["requestBody"]["content"]
        .as_object()
        .and_then(|c| c.keys().next().cloned());
    req = match media.as_deref() {
        Some("application/json") => req.header("content-type", "application/json").body("{}"),
        Some(other) => req.header("content-type", other).body("some text"),
        None => req,
    };
    if let Some(token) = &browser.bearer {
        req = req.bearer_auth(token);
    }
    req
}

#[tokio::test]
async fn every_documented_operation_answers_with_a_status_and_body_it_documents() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_TITLES", "off")]).await;
    let doc = description(&app).await;
    let mut admin = Browser::new(&app);
    admin
        .ok(
            "auth/setup",
            json!({"name": "alice", "password": "alice-password"}),
        )
        .await;
    let token = admin.ok("tokens/create", json!({"name": "fuzz"})).await;
    admin.bearer = Some(token["secret"].as_str().unwrap().to_string());
    *admin.session.lock().unwrap() = None;
    let mut operations: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            operations.push((path.clone(), method.clone()));
        }
    }
    // Signing out last, so that every other operation runs signed in.
    operations.sort_by_key(|(path, _)| path.contains("sign-out"));
    assert!(operations.len() >= 60, "{}", operations.len());
    let mut successes = 0;
    for (path, method) in &operations {
        let response = request(&admin, &doc, path, method).send().await.unwrap();
        let status = response.status().as_u16().to_string();
        let media = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_string())
            .unwrap_or_default();
        let documented = &doc["paths"][path][method]["responses"][&status];
        assert!(
            documented.is_object(),
            "{method} {path} answered {status}, which it does not document"
        );
        let Some(schema) = documented["content"].get(&media).map(|c| &c["schema"]) else {
            assert!(
                documented.get("content").is_none() || media.is_empty(),
                "{method} {path} answered {status} as {media}, which it does not document"
            );
            continue;
        };
        if media == "application/json" {
            let body: Value = response.json().await.unwrap();
            check(&doc, schema, &body, &format!("{method} {path} {status}"));
        }
        if status.starts_with('2') {
            successes += 1;
        }
    }
    assert!(successes >= 20, "{successes} operations succeeded");
}

#[tokio::test]
async fn a_server_function_the_router_does_not_serve_is_not_in_the_description() {
    let app = TestApp::spawn(&[]).await;
    let doc = description(&app).await;
    let served: std::collections::BTreeSet<String> = ponder::server::http::routes::Route::ALL
        .iter()
        .map(|r| format!("{} {}", r.method().as_str().to_ascii_lowercase(), r.path()))
        .chain(
            leptos::server_fn::axum::server_fn_paths()
                .map(|(p, m)| format!("{} {p}", m.as_str().to_ascii_lowercase())),
        )
        .collect();
    let described: std::collections::BTreeSet<String> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |m| format!("{m} {path}"))
        })
        .collect();
    assert_eq!(served, described);
    // The router adds no route but from the table (the base path's own redirect aside).
    for file in ["mod.rs", "ops.rs"] {
        let source = std::fs::read_to_string(format!("src/server/http/{file}")).unwrap();
        let lines: Vec<&str> = source.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains(".route(") {
                continue;
            }
            let call = lines[i..(i + 3).min(lines.len())].join(" ");
            let plumbing = call.contains("redirect_to") || call.contains("&format!(\"{base}/\")");
            assert!(
                call.contains("Route::") || call.contains("&path") || plumbing,
                "src/server/http/{file}:{}: a route not from routes::Route",
                i + 1
            );
        }
    }
}

/// The `data:` lines of a response, each as JSON.
async fn data_lines(response: reqwest::Response) -> Vec<Value> {
    let text = response.text().await.unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn every_demo_scenario_streams_events_the_schemas_accept() {
    let app = TestApp::spawn(&[
        ("PONDER_FIRST_BYTE_TIMEOUT", "1"),
        ("PONDER_IDLE_TIMEOUT", "1"),
        ("PONDER_TITLES", "off"),
    ])
    .await;
    let doc = description(&app).await;
    let event = json!({"$ref": "#/components/schemas/TurnEvent"});
    let validator = validator(&doc, &event);
    let tags = ponder::server::demo_upstream::scenarios::Scenario::TAGS;
    let mut prompts: Vec<String> = tags.iter().map(|(tag, _)| format!("{tag} hello")).collect();
    prompts.push("hello".into());
    let turns = prompts.iter().map(|prompt| {
        let body = json!({"messages": [{"role": "user", "content": prompt}]}).to_string();
        let app = &app;
        async move { (prompt.clone(), data_lines(app.post_chat(body).await).await) }
    });
    let mut kinds = std::collections::BTreeSet::new();
    for (prompt, events) in futures::future::join_all(turns).await {
        assert!(events.len() >= 2, "{prompt}: {events:?}");
        for e in &events {
            let errors: Vec<String> = validator.iter_errors(e).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{prompt}: {e}: {errors:?}");
            kinds.insert(e["type"].as_str().unwrap().to_string());
        }
    }
    // A stored turn says where it is kept (`turn`), and a viewer joining it gets the `clock`.
    let response = app
        .post_chat(json!({"content": "[slow] hello"}).to_string())
        .await;
    let turn = response.headers()["x-ponder-turn"]
        .to_str()
        .unwrap()
        .to_string();
    let joined = app
        .http
        .get(app.url(&format!("/api/turn/events?turn={turn}")))
        .send()
        .await
        .unwrap();
    let (first, second) = tokio::join!(data_lines(response), data_lines(joined));
    for e in first.iter().chain(&second) {
        let errors: Vec<String> = validator.iter_errors(e).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "stored: {e}: {errors:?}");
        kinds.insert(e["type"].as_str().unwrap().to_string());
    }
    for kind in doc["components"]["schemas"]["TurnEvent"]["discriminator"]["mapping"]
        .as_object()
        .unwrap()
        .keys()
    {
        assert!(
            kinds.contains(kind),
            "no scenario streamed a `{kind}` event: {kinds:?}"
        );
    }
    // The schemas can refuse: an event with a field of the wrong type fails.
    assert!(!validator.is_valid(&json!({"type": "delta", "text": 3})));
    assert!(!validator.is_valid(&json!({"type": "nonsense"})));
}

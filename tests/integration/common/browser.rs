//! A client that speaks to Ponder's API the way one browser does: it keeps the session
//! cookie the server sets and sends it back.

use ponder::domain::TurnEvent;
use serde_json::Value;

use super::{read_events, TestApp};

/// A client that keeps its session cookie, as one browser does.
pub struct Browser {
    pub http: reqwest::Client,
    pub base: String,
    pub bearer: Option<String>,
    pub session: std::sync::Mutex<Option<String>>,
}

impl Browser {
    /// Two signed-in browsers of `app` (`PONDER_AUTH=password`): alice, its first admin, and
    /// bob, a user she added.
    pub async fn alice_and_bob(app: &TestApp) -> (Browser, Browser) {
        let alice = Browser::new(app);
        alice
            .ok(
                "auth/setup",
                serde_json::json!({"name": "alice", "password": "alice-password"}),
            )
            .await;
        alice
            .ok(
                "users/add",
                serde_json::json!({"name": "bob", "password": "bob-password-1", "is_admin": false}),
            )
            .await;
        let bob = Browser::new(app);
        bob.ok(
            "auth/sign-in",
            serde_json::json!({"name": "bob", "password": "bob-password-1"}),
        )
        .await;
        (alice, bob)
    }

    pub fn new(app: &TestApp) -> Browser {
        Browser::at(app.url(""))
    }

    /// A browser of the Ponder at `base` (its root URL, without a trailing slash).
    pub fn at(base: String) -> Browser {
        Browser {
            http: reqwest::Client::new(),
            base,
            bearer: None,
            session: std::sync::Mutex::new(None),
        }
    }

    /// The same session in a browser of another replica: what a load balancer does when it
    /// sends the next request elsewhere.
    pub fn moved_to(&self, base: String) -> Browser {
        Browser {
            http: reqwest::Client::new(),
            base,
            bearer: self.bearer.clone(),
            session: std::sync::Mutex::new(self.session.lock().expect("lock").clone()),
        }
    }

    pub fn request(&self, path: &str, body: String) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = &self.bearer {
            req = req.bearer_auth(token);
        }
        if let Some(cookie) = self.session.lock().expect("lock").clone() {
            req = req.header("cookie", cookie);
        }
        req
    }

    /// Keeps (or, when it is cleared, drops) the session cookie the response sets.
    pub fn keep_cookie(&self, response: &reqwest::Response) {
        for value in response.headers().get_all("set-cookie") {
            let Ok(value) = value.to_str() else { continue };
            let pair = value.split(';').next().unwrap_or("").trim().to_string();
            if let Some(secret) = pair.strip_prefix("ponder_session=") {
                *self.session.lock().expect("lock") = (!secret.is_empty()).then(|| pair.clone());
            }
        }
    }

    /// A page of the app as this browser loads it: its status and HTML.
    pub async fn page(&self, path: &str) -> (u16, String) {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(cookie) = self.session.lock().expect("lock").clone() {
            req = req.header("cookie", cookie);
        }
        let response = req.send().await.expect("page");
        let status = response.status().as_u16();
        (status, response.text().await.expect("html"))
    }

    pub async fn call(&self, endpoint: &str, args: Value) -> (u16, Value) {
        let response = self
            .request(&format!("/api/{endpoint}"), args.to_string())
            .send()
            .await
            .expect("request");
        self.keep_cookie(&response);
        status_and_json(response).await
    }

    pub async fn ok(&self, endpoint: &str, args: Value) -> Value {
        let (status, body) = self.call(endpoint, args).await;
        assert_eq!(status, 200, "{endpoint}: {body}");
        body
    }

    pub async fn turn(&self, body: Value) -> (u16, Vec<TurnEvent>) {
        let response = self
            .request("/api/chat", body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        if status != 200 {
            return (status, Vec::new());
        }
        (status, read_events(response).await)
    }
}

/// A response's status and its body as JSON (or, when it is not JSON, as a string).
pub async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

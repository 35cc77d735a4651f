//! Where `ponder chat` finds a Ponder: the one named, else one already running on this machine's
//! default address, else Ponder itself started inside the client on a free loopback port (with
//! the demo model when no upstream is configured), so `ponder chat` works on a fresh machine.

use super::error::ClientError;
use std::time::Duration;

use super::client::Server;

/// The address `make run` and the container serve on.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:3000";

/// Where the in-process Ponder keeps its chats, unless `PONDER_DATABASE_URL` says otherwise.
fn default_database() -> String {
    let dir = std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("ponder");
    format!("sqlite://{}/chat.db", dir.display())
}

/// The server to talk to, and whether it runs inside this process.
pub async fn find(
    named: Option<&str>,
    token: Option<String>,
) -> Result<(Server, bool), ClientError> {
    if let Some(url) = named {
        return Ok((Server::new(url, token)?, false));
    }
    let running = Server::new(DEFAULT_SERVER, token.clone())?;
    if running.answers(Duration::from_millis(400)).await {
        return Ok((running, false));
    }
    let base = start_in_process().await.map_err(ClientError::Unreachable)?;
    Ok((Server::new(&base, token)?, true))
}

/// Starts Ponder inside this process on a free loopback port, with no sign-in (only this
/// machine can reach it), and returns its address once it answers.
async fn start_in_process() -> Result<String, String> {
    let listener =
        crate::server::http::socket::listen("127.0.0.1:0".parse().map_err(|_| "address")?)
            .map_err(|e| format!("no loopback port for the built-in Ponder: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("no loopback port for the built-in Ponder: {e}"))?;
    let database = default_database();
    let listen = addr.to_string();
    let config = crate::server::config::Config::from_lookup(|name| match name {
        "LEPTOS_SITE_ADDR" => Some(listen.clone()),
        "PONDER_AUTH" => Some("none".into()),
        "PONDER_DATABASE_URL" => Some(std::env::var(name).unwrap_or_else(|_| database.clone())),
        _ => std::env::var(name).ok(),
    })
    .map_err(|e| format!("the built-in Ponder's configuration: {e}"))?;
    let state = crate::server::http::prepare(config)
        .await
        .map_err(|e| format!("the built-in Ponder could not start: {e}"))?;
    let mut options = leptos::config::LeptosOptions::builder()
        .output_name("ponder")
        .build();
    options.site_addr = addr;
    tokio::spawn(async move {
        let _ = crate::server::http::run(
            state,
            options,
            crate::site::site(),
            listener,
            std::future::pending::<()>,
        )
        .await;
    });
    let base = format!("http://{addr}");
    let probe = Server::new(&base, None).map_err(|e| e.to_string())?;
    for _ in 0..100 {
        if probe.answers(Duration::from_millis(200)).await {
            return Ok(base);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the built-in Ponder did not answer".into())
}

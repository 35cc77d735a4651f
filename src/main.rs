//! Ponder's server: reads the configuration, serves the app (and the demo model when no
//! upstream is configured).

#[tokio::main]
async fn main() {
    if let Err(e) = ponder::server::http::serve().await {
        eprintln!("ponder: {e}");
        std::process::exit(2);
    }
}

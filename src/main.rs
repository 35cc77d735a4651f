//! Ponder's server: reads the configuration, serves the app (and the demo model when no
//! upstream is configured). `ponder healthcheck` probes a running server, for container images
//! that ship no HTTP client; `ponder user` makes and resets accounts from a shell; `ponder chat`
//! and `ponder ask` are the terminal client; `ponder extract-pdf` and `ponder shrink-image` are
//! the server's own child processes that read a reader's files.

/// The main thread accepts connections, runs the demo model and handles signals; the serving
/// threads (`PONDER_THREADS`, one per core) each run a runtime of their own.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let code = match std::env::args().nth(1).as_deref() {
        None | Some("serve") => match ponder::site::serve().await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("ponder: {e}");
                2
            }
        },
        Some(
            command @ (ponder::server::extract::PDF_COMMAND
            | ponder::server::extract::IMAGE_COMMAND
            | ponder::server::extract::PAGES_COMMAND),
        ) => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            ponder::server::extract::child_main(command, &args)
        }
        Some("healthcheck") => match ponder::server::http::healthcheck().await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("ponder healthcheck: {e}");
                1
            }
        },
        Some("user") => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            match ponder::server::cli::user(&args).await {
                Ok(out) => {
                    println!("{out}");
                    0
                }
                Err(e @ ponder::server::cli::UserError::Usage) => {
                    eprintln!("ponder: {e}");
                    e.exit_code()
                }
                Err(e) => {
                    eprintln!("ponder user: {e}");
                    e.exit_code()
                }
            }
        }
        Some("chat") => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            match ponder::terminal::app::parse(&args) {
                Err(usage) => {
                    eprintln!("ponder: {usage}");
                    usage.exit_code()
                }
                Ok(options) => match ponder::terminal::app::run(options).await {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("ponder chat: {e}");
                        e.exit_code()
                    }
                },
            }
        }
        Some("ask") => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            match ponder::terminal::ask::parse(&args) {
                Err(usage) => {
                    eprintln!("ponder: {usage}");
                    usage.exit_code()
                }
                Ok(options) => match ponder::terminal::ask::run(options).await {
                    Ok(code) => code,
                    Err(e) => {
                        eprintln!("ponder ask: {e}");
                        e.exit_code()
                    }
                },
            }
        }
        Some("catalogue") => {
            println!("{}", ponder::i18n::catalogues_json());
            0
        }
        Some("--version" | "-V") => {
            println!("ponder {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some(other) => {
            eprintln!("ponder: unknown argument {other:?}; usage: ponder [serve | healthcheck | user … | chat … | ask … | catalogue | --version]");
            2
        }
    };
    std::process::exit(code);
}

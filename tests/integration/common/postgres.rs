//! A real PostgreSQL for the tests: Debian's server binaries, a cluster made with `initdb` in a
//! temporary directory, started on a free loopback port, and stopped when the test process
//! exits. Each test gets a database of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

struct Cluster {
    bin: PathBuf,
    /// The temporary directory: the data directory, the socket and the log are inside.
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// The newest server binaries Debian's `postgresql` package installed.
pub fn server_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's server is not installed (/usr/lib/postgresql): `make test` installs Debian's postgresql")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions
        .pop()
        .expect("no initdb under /usr/lib/postgresql/*/bin")
}

fn run(cluster_bin: &Path, as_postgres: bool, tool: &str, args: &[&str]) {
    let program = cluster_bin.join(tool);
    let output = if as_postgres {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&program)
            .args(args)
            .output()
    } else {
        Command::new(&program).args(args).output()
    }
    .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(
        output.status.success(),
        "{tool} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

extern "C" fn stop_cluster() {
    if let Some(c) = CLUSTER.get() {
        let data = c.dir.join("data").to_string_lossy().to_string();
        let _ = std::panic::catch_unwind(|| {
            run(
                &c.bin,
                c.as_postgres,
                "pg_ctl",
                &["-D", &data, "-m", "immediate", "stop"],
            );
        });
        let _ = std::fs::remove_dir_all(&c.dir);
    }
}

fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| {
        let bin = server_bin();
        // PostgreSQL refuses to run as root: the cluster then belongs to `postgres`.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = std::env::temp_dir().join(format!("ponder-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cluster dir");
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(status.success());
        }
        let data = dir.join("data");
        let data_s = data.to_string_lossy().to_string();
        run(
            &bin,
            as_postgres,
            "initdb",
            &["-D", &data_s, "-U", "ponder", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            dir.display()
        );
        let log = dir.join("log").to_string_lossy().to_string();
        run(&bin, as_postgres, "pg_ctl", &["-D", &data_s, "-o", &options, "-l", &log, "-w", "start"]);
        // SAFETY: registers a plain function to run at exit; it touches no Rust state that
        // exit has torn down (the OnceLock is static).
        unsafe {
            libc::atexit(stop_cluster);
        }
        Cluster {
            bin,
            dir,
            port,
            as_postgres,
        }
    })
}

/// A fresh, empty database on the test cluster, as a `postgres://` URL.
pub async fn database() -> String {
    let c = cluster();
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    let admin = format!("postgres://ponder@127.0.0.1:{}/postgres", c.port);
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .expect("connect to the test cluster");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create database");
    format!("postgres://ponder@127.0.0.1:{}/{name}", c.port)
}

/// Drops a database made by [`database`] at once, ending every connection to it: what a
/// server sees when its database is gone.
pub async fn drop_database(url: &str) {
    let c = cluster();
    let name = url.rsplit('/').next().expect("a database name").to_string();
    let admin = format!("postgres://ponder@127.0.0.1:{}/postgres", c.port);
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .expect("connect to the test cluster");
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await
        .expect("drop database");
}

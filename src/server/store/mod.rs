//! Where chats live on the server: an embedded SQLite file by default, PostgreSQL to scale out,
//! one schema for both through versioned migrations (`migrations/sqlite`, `migrations/postgres`,
//! the same versions in each) run at start.
//!
//! Nothing outside this module touches the pool. Identity lookups ([`identity`]) find who is
//! asking; everything a user owns is reached through a [`scope::Scoped`], which can only be
//! made from a signed-in identity, so a query that is not scoped to its user does not compile.

pub mod attachments;
mod branch;
mod compare;
mod conversations;
pub mod finals;
pub mod identity;
pub mod ids;
pub mod import;
mod index;
pub mod instructions;
pub mod limits;
mod messages;
pub mod oidc;
pub mod opening;
mod organise;
mod presets;
pub mod records;
pub mod replay;
mod rows;
pub mod scope;
mod search;
pub mod shares;
pub mod streaming;
pub mod tokens;
pub mod turns;
pub mod usage;
mod workspaces;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};

use crate::domain::Failure;
use sqlx::{AnyPool, ConnectOptions, Executor};

/// Which engine the pool speaks; the few statements that differ branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A failure of the store, as the rest of the server sees it. The detail is for the log; the
/// reader is told only that the history could not be read or written.
#[derive(Clone, Debug)]
pub enum StoreError {
    /// The database is unreachable, locked, full or broken.
    Unavailable(String),
    /// What was asked for is not there (or not the caller's: the same answer).
    NotFound,
    /// The request conflicts with what is stored (a name taken, a stale revision).
    Conflict(String),
    /// The store will not keep this, for a reason the reader is told (a quota full).
    Refused(Failure),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Unavailable(detail) => write!(f, "the history database failed: {detail}"),
            StoreError::NotFound => f.write_str("not found"),
            StoreError::Conflict(why) => f.write_str(why),
            StoreError::Refused(failure) => f.write_str(&failure.message),
        }
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// True when asking again cannot succeed: the row is gone or the write conflicts with
    /// what is stored. Only an unavailable database is worth a retry.
    pub fn is_final(&self) -> bool {
        !matches!(self, StoreError::Unavailable(_))
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict("that name is taken".into())
            }
            other => StoreError::Unavailable(other.to_string()),
        }
    }
}

/// The connection pool and the engine behind it.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// SQLite takes one writer at a time, and a connection that finds the write lock taken
    /// sleeps in SQLite's busy handler (1, 2, 5 … 100 ms) rather than being woken when it lifts.
    /// The hot writers (a turn's opening, its streaming states, its final state) queue here
    /// instead, first come first served: in a burst of a thousand turns opening at once, half
    /// of them had their first event in 1.0 s where all waited 1.7 s. PostgreSQL locks rows,
    /// not the database: no queue there.
    writers: Option<Arc<tokio::sync::Mutex<Hot>>>,
    /// An SQLite drain of the pending search entries is planned ([`Store::index_pending`]).
    search_due: Arc<std::sync::atomic::AtomicBool>,
}

/// The one connection the hot writers write through (an SQLite file), held by whoever's turn
/// it is. SQLite keeps a page cache per connection and drops it when another connection has
/// written: with the hot writers spread over the pool, each transaction began by reading its
/// pages again from the file. Kept out of a pool, it is not pinged (a round trip to its
/// thread, and a task) each time a writer is done with it.
#[derive(Default)]
struct Hot {
    /// How to connect (`None`: an in-memory database, whose writers use the pool).
    options: Option<AnyConnectOptions>,
    /// Connected at the first write, and again after a transaction failed to begin.
    connection: Option<sqlx::AnyConnection>,
    /// The last transaction failed to begin: the next writer connects afresh.
    failed: bool,
}

impl std::fmt::Debug for Hot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hot")
            .field("connected", &self.connection.is_some())
            .finish()
    }
}

/// A hot writer's place at the front of the queue (see [`Store::writers`]), through which it
/// begins its transaction ([`WriteTurn::begin`]).
pub(crate) struct WriteTurn {
    held: Option<tokio::sync::OwnedMutexGuard<Hot>>,
    pool: AnyPool,
    backend: Backend,
}

impl WriteTurn {
    /// [`Store::begin_write`], on the hot writers' connection when there is one.
    pub(crate) async fn begin(&mut self) -> Result<sqlx::Transaction<'_, sqlx::Any>, sqlx::Error> {
        let Some(hot) = self.held.as_deref_mut() else {
            return begin_writing(&self.pool, self.backend).await;
        };
        let Some(options) = &hot.options else {
            return begin_writing(&self.pool, self.backend).await;
        };
        if std::mem::take(&mut hot.failed) {
            hot.connection = None;
        }
        let connection = connected(&mut hot.connection, options).await?;
        let began = sqlx::Connection::begin_with(connection, "BEGIN IMMEDIATE").await;
        if began.is_err() {
            hot.failed = true;
        }
        began
    }
}

/// The hot writers' connection, connected first if it is not.
async fn connected<'c>(
    slot: &'c mut Option<sqlx::AnyConnection>,
    options: &AnyConnectOptions,
) -> Result<&'c mut sqlx::AnyConnection, sqlx::Error> {
    let connection = match slot.take() {
        Some(connection) => connection,
        None => {
            let mut connection =
                <sqlx::AnyConnection as sqlx::Connection>::connect_with(options).await?;
            prepare_sqlite(&mut connection).await?;
            connection
        }
    };
    Ok(slot.insert(connection))
}

/// How long a statement waits for SQLite's write lock before it fails (a busy database).
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens the database at `url` (`sqlite://path`, `postgres://…`), creating an SQLite file
    /// and its directory on first use, and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(StoreError::Unavailable(format!(
                "PONDER_DATABASE_URL must start with sqlite:// or postgres:// (got {})",
                url.split(':').next().unwrap_or("")
            )));
        };
        let (connect_url, file) = match backend {
            Backend::Sqlite => sqlite_url(url)?,
            Backend::Postgres => (url.to_string(), None),
        };
        let on_file = file.is_some();
        let _opening = match file {
            Some(file) => Some(OpeningLock::take(file).await?),
            None => None,
        };
        let options = AnyConnectOptions::from_str(&connect_url)
            .map_err(|e| StoreError::Unavailable(e.to_string()))?
            .disable_statement_logging();
        let hot = Hot {
            options: on_file.then(|| options.clone()),
            ..Hot::default()
        };
        let pool = pool_options(backend)
            .max_connections(match backend {
                Backend::Sqlite => 8,
                Backend::Postgres => 16,
            })
            .connect_with(options)
            .await?;
        if backend == Backend::Sqlite {
            pool.execute("PRAGMA journal_mode = WAL").await?;
        }
        let writers = (backend == Backend::Sqlite).then(|| Arc::new(tokio::sync::Mutex::new(hot)));
        let store = Store {
            pool,
            backend,
            writers,
            search_due: Arc::default(),
        };
        store.migrate().await?;
        store.connect_hot().await?;
        if store.search_pending().await? {
            store.index_pending().await?;
        }
        Ok(store)
    }

    /// Connects the hot writers' connection as the store opens, so that the first turn after
    /// a start does not wait for it (a thread, the file opened, its settings).
    async fn connect_hot(&self) -> Result<(), StoreError> {
        if let Some(queue) = &self.writers {
            let mut hot = queue.lock().await;
            let hot = &mut *hot;
            if let Some(options) = &hot.options {
                connected(&mut hot.connection, options).await?;
            }
        }
        Ok(())
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let migrator = match self.backend {
            Backend::Sqlite => sqlx::migrate!("migrations/sqlite"),
            Backend::Postgres => sqlx::migrate!("migrations/postgres"),
        };
        migrator
            .run(&self.pool)
            .await
            .map_err(|e| StoreError::Unavailable(format!("migrating the schema: {e}")))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// A transaction that writes. On SQLite it takes the write lock as it begins (`BEGIN
    /// IMMEDIATE`): one begun as a reader and then writing fails at once with "database is
    /// locked" when another connection wrote in between (its snapshot is stale, and no busy
    /// timeout retries that), where this one waits its turn.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        begin_writing(&self.pool, self.backend).await
    }

    /// Waits for this writer's turn (SQLite; at once on PostgreSQL), then begins its
    /// transaction through it ([`WriteTurn::begin`]).
    pub(crate) async fn write_turn(&self) -> WriteTurn {
        WriteTurn {
            held: match &self.writers {
                Some(queue) => Some(queue.clone().lock_owned().await),
                None => None,
            },
            pool: self.pool.clone(),
            backend: self.backend,
        }
    }

    /// True when the database answers a trivial query now.
    pub async fn is_up(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }
}

/// Held while a process sets up an SQLite file (its journal mode and migrations): sqlx takes
/// PostgreSQL's advisory lock around migrations but nothing on SQLite, so two replicas, or a
/// replica and `ponder admin`, started at once on a new file would both create the schema and
/// one would fail. The lock is `flock` on a file beside the database (`ponder.db.lock`), never
/// on the database itself, whose POSIX locks belong to SQLite.
/// The lock lifts when the file is closed, as the value is dropped.
struct OpeningLock(#[allow(dead_code)] std::fs::File);

impl OpeningLock {
    async fn take(db: std::path::PathBuf) -> Result<OpeningLock, StoreError> {
        let mut path = db.into_os_string();
        path.push(".lock");
        let path = std::path::PathBuf::from(path);
        tokio::task::spawn_blocking(move || {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| {
                    StoreError::Unavailable(format!("cannot open {}: {e}", path.display()))
                })?;
            file.lock().map_err(|e| {
                StoreError::Unavailable(format!("cannot lock {}: {e}", path.display()))
            })?;
            Ok(OpeningLock(file))
        })
        .await
        .map_err(|e| StoreError::Unavailable(e.to_string()))?
    }
}

async fn begin_writing(
    pool: &AnyPool,
    backend: Backend,
) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => pool.begin().await,
    }
}

/// The options of the store's pools: a connection's settings, and how long a turn waits for one.
fn pool_options(backend: Backend) -> AnyPoolOptions {
    AnyPoolOptions::new()
        // A burst of turns starting at once queues for a connection rather than failing.
        .acquire_timeout(Duration::from_secs(15))
        // A connection to a file does not break while it waits in the pool: no ping (a
        // round trip to its thread) before every statement. A server's connection can.
        .test_before_acquire(backend == Backend::Postgres)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if backend == Backend::Sqlite {
                    prepare_sqlite(conn).await?;
                }
                Ok(())
            })
        })
}

/// An SQLite connection's settings: foreign keys enforced, a busy timeout, and commits that
/// do not wait for the disk (WAL keeps them whole).
async fn prepare_sqlite(conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
    conn.execute("PRAGMA foreign_keys = ON").await?;
    conn.execute(format!("PRAGMA busy_timeout = {}", SQLITE_BUSY_TIMEOUT.as_millis()).as_str())
        .await?;
    conn.execute("PRAGMA synchronous = NORMAL").await?;
    Ok(())
}

/// The URL sqlx connects with (the file created with its directory unless a `mode=` says
/// otherwise) and the file's path, `None` for an in-memory database.
fn sqlite_url(url: &str) -> Result<(String, Option<std::path::PathBuf>), StoreError> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path == ":memory:" || path.is_empty() {
        return Ok(("sqlite::memory:".into(), None));
    }
    if let Some(dir) = std::path::Path::new(path).parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
    }
    let mut query: Vec<&str> = query.split('&').filter(|q| !q.is_empty()).collect();
    if !query.iter().any(|q| q.starts_with("mode=")) {
        query.push("mode=rwc");
    }
    let file = (!query
        .iter()
        .any(|q| q.starts_with("mode=ro") || q.starts_with("mode=memory")))
    .then(|| std::path::PathBuf::from(path));
    Ok((format!("sqlite://{path}?{}", query.join("&")), file))
}

/// Milliseconds since the Unix epoch, the store's clock.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_create_their_file_and_keep_their_options() {
        let dir = std::env::temp_dir().join(format!("ponder-url-{}", std::process::id()));
        let url = format!("sqlite://{}/sub/p.db", dir.display());
        let (out, file) = sqlite_url(&url).unwrap();
        assert!(out.ends_with("/sub/p.db?mode=rwc"), "{out}");
        assert_eq!(file, Some(dir.join("sub/p.db")));
        assert!(dir.join("sub").is_dir());
        assert_eq!(
            sqlite_url("sqlite://x.db?mode=ro").unwrap(),
            ("sqlite://x.db?mode=ro".into(), None)
        );
        assert_eq!(
            sqlite_url("sqlite::memory:").unwrap(),
            ("sqlite::memory:".into(), None)
        );
    }
}

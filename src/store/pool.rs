//! The connection pools under a [`Store`](super::handle::Store): opening one over SQLite or
//! PostgreSQL in a mode (read-only, read-write, creating), reading the catalog of what it holds,
//! running memscope's migrations, and `on_pool!`, which compiles one method body for both.

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

use super::catalog::{Backend, CatalogConnection};
use super::error::{self, StoreError};
use super::mysql;
use super::profile::{Catalog, CatalogProbe, Dialect};
use super::sqlite_read_only;

static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/sqlite");

static POSTGRES_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/postgres");

/// Runs `$body` against whichever pool `$pools` (a `DbPool`) holds, with `$pool` bound to it and, in the
/// second form, `$sql` bound to the text of the PostgreSQL query `$text` in the database's
/// [`Dialect`]. The body is written once and type-checked for each backend.
macro_rules! on_pool {
    ($pools:expr, |$pool:ident| $body:expr) => {
        match &$pools {
            $crate::store::pool::DbPool::Sqlite($pool, _) => $body,
            $crate::store::pool::DbPool::Postgres($pool, _) => $body,
            $crate::store::pool::DbPool::Mysql($pool, _) => $body,
        }
    };
    ($pools:expr, $text:expr, |$pool:ident, $sql:ident| $body:expr) => {{
        let postgres_text: &'static str = $text;
        match &$pools {
            $crate::store::pool::DbPool::Sqlite($pool, dialect) => {
                let $sql = $crate::store::sql::dialect_text(*dialect, postgres_text);
                $body
            }
            $crate::store::pool::DbPool::Postgres($pool, dialect) => {
                let $sql = $crate::store::sql::dialect_text(*dialect, postgres_text);
                $body
            }
            $crate::store::pool::DbPool::Mysql($pool, dialect) => {
                let $sql = $crate::store::sql::dialect_text(*dialect, postgres_text);
                $body
            }
        }
    }};
}
pub(crate) use on_pool;

/// A connection pool, with the dialect its database's tables need.
#[derive(Clone)]
pub(crate) enum DbPool {
    Sqlite(SqlitePool, Dialect),
    Postgres(PgPool, Dialect),
    /// Always read-only (see `mysql.rs`).
    Mysql(sqlx::MySqlPool, Dialect),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    ReadOnly,
    /// Read-write on a database memscope did not create.
    ReadWriteForeign,
    ReadWrite,
    /// Read-write, creating a missing SQLite file.
    Create,
}

/// Caps a SQLite database at this many pages (`PRAGMA max_page_count`; below the current size it
/// means "no growth"): writes past it fail as on a full disk. The fault tests set it.
pub const SQLITE_MAX_PAGES_ENV: &str = "MEMSCOPE_SQLITE_MAX_PAGES";

/// SQLite allows one writer at a time; more connections only help concurrent readers.
const SQLITE_POOL_SIZE: u32 = 4;

const POSTGRES_POOL_SIZE: u32 = 5;

const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The page cache of each SQLite connection. Creating a database (the demo's bulk inserts)
/// updates four B-trees per message: 64 MiB keeps their hot pages in memory. Otherwise 8 MiB:
/// a TUI paging through a 1,000,000-message database touches most of it, and four connections
/// filling 64 MiB each grew it by 90 MiB.
fn sqlite_cache_kib(mode: Mode) -> &'static str {
    match mode {
        Mode::Create => "-65536",
        Mode::ReadOnly | Mode::ReadWriteForeign | Mode::ReadWrite => "-8192",
    }
}

/// Reads what the database holds over one direct read-only connection, closed afterwards: the
/// pool is opened once its mode is known. On PostgreSQL the direct connection also reports an
/// unreachable server at once, where a pool retries until its acquire timeout.
pub(super) async fn probe(
    url: &str,
    redacted: &str,
    probes: &[CatalogProbe],
) -> Result<Catalog, StoreError> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    match Backend::of_url(url).ok_or_else(|| bad_url(redacted))? {
        Backend::Sqlite => {
            let mut conn = sqlite_connect(url, redacted, Mode::ReadOnly, |options| async move {
                options.connect().await
            })
            .await?;
            let catalog = CatalogConnection::Sqlite(&mut conn)
                .read(redacted, probes)
                .await;
            conn.close().await.map_err(unreachable)?;
            catalog
        }
        Backend::Postgres => {
            let mut conn = connect_postgres_directly(url, redacted, Mode::ReadOnly).await?;
            let catalog = CatalogConnection::Postgres(&mut conn)
                .read(redacted, probes)
                .await;
            conn.close().await.map_err(unreachable)?;
            catalog
        }
        Backend::Mysql => {
            let mut conn = mysql::connect_directly(url, redacted, ACQUIRE_TIMEOUT).await?;
            let catalog = CatalogConnection::Mysql(&mut conn)
                .read(redacted, probes)
                .await;
            mysql::close(conn, redacted).await?;
            catalog
        }
    }
}

fn bad_url(redacted: &str) -> StoreError {
    StoreError::BadUrl {
        url: redacted.to_owned(),
    }
}

/// `connect` with the SQLite options of `mode`. A read-only open is planned around the side
/// files it finds (`sqlite_read_only.rs`); when they change under it, as they do while the
/// file's last writer closes (it removes the index, then the log), it is planned again. So is
/// an open SQLite could not make (`SQLITE_CANTOPEN`) while the files were planned as they are
/// again: a writer closed and reopened between the plan and the check, or was still setting up
/// the index the plan reads through.
async fn sqlite_connect<T, Fut>(
    url: &str,
    redacted: &str,
    mode: Mode,
    connect: impl Fn(SqliteConnectOptions) -> Fut,
) -> Result<T, StoreError>
where
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    const PLANS: usize = 4;
    let side_files = || {
        sqlite_path(url)
            .filter(|_| mode == Mode::ReadOnly)
            .map(|path| sqlite_read_only::side_files(std::path::Path::new(path)))
    };
    let mut attempt = 1;
    loop {
        let planned = side_files();
        let settling = attempt < PLANS && planned.is_some();
        let outcome = match sqlite_options(url, redacted, mode) {
            Err(StoreError::LogWithoutIndex { .. }) if settling => None,
            Err(refused) => return Err(refused),
            Ok(options) => match connect(options).await {
                Err(error) if settling && (side_files() != planned || cannot_open(&error)) => None,
                connected => Some(connected),
            },
        };
        match outcome {
            Some(connected) => {
                return connected.map_err(|source| StoreError::Unreachable {
                    url: redacted.to_owned(),
                    source,
                });
            }
            None => tokio::time::sleep(Duration::from_millis(25)).await,
        }
        attempt += 1;
    }
}

/// Whether SQLite could not open the file (`SQLITE_CANTOPEN`, in any of its extended codes).
fn cannot_open(error: &sqlx::Error) -> bool {
    const SQLITE_CANTOPEN: i64 = 14;
    error
        .as_database_error()
        .and_then(|database| database.code())
        .and_then(|code| code.parse::<i64>().ok())
        .is_some_and(|code| code & 0xff == SQLITE_CANTOPEN)
}

fn sqlite_options(
    url: &str,
    redacted: &str,
    mode: Mode,
) -> Result<SqliteConnectOptions, StoreError> {
    let mut options = SqliteConnectOptions::from_str(url).map_err(|_| bad_url(redacted))?;
    error::check_sqlite_file(redacted, options.get_filename(), mode == Mode::Create)?;
    options = options
        .foreign_keys(true)
        .busy_timeout(SQLITE_BUSY_TIMEOUT)
        // Negative: KiB, per connection, grown on demand and never given back.
        .pragma("cache_size", sqlite_cache_kib(mode));
    options = match mode {
        // The journal mode is a property of the file: leave it as its owner set it
        // (changing it is a write, too).
        Mode::ReadOnly => read_only_sqlite(options, url, redacted)?,
        Mode::ReadWriteForeign => options,
        Mode::ReadWrite | Mode::Create => options
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .create_if_missing(mode == Mode::Create),
    };
    if let Some(pages) = std::env::var(SQLITE_MAX_PAGES_ENV)
        .ok()
        .filter(|_| mode != Mode::ReadOnly)
    {
        options = options.pragma("max_page_count", pages);
    }
    Ok(options)
}

fn postgres_options(url: &str, redacted: &str, mode: Mode) -> Result<PgConnectOptions, StoreError> {
    let options = PgConnectOptions::from_str(url).map_err(|_| bad_url(redacted))?;
    Ok(if mode == Mode::ReadOnly {
        options.options([("default_transaction_read_only", "on")])
    } else {
        options
    })
}

/// One connection, outside any pool, that fails at once on an unreachable server.
pub(super) async fn connect_postgres_directly(
    url: &str,
    redacted: &str,
    mode: Mode,
) -> Result<PgConnection, StoreError> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    tokio::time::timeout(
        ACQUIRE_TIMEOUT,
        postgres_options(url, redacted, mode)?.connect(),
    )
    .await
    .map_err(|_| {
        unreachable(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {} s", ACQUIRE_TIMEOUT.as_secs()),
        )))
    })?
    .map_err(unreachable)
}

/// The pool, in its final mode.
pub(super) async fn connect(url: &str, redacted: &str, mode: Mode) -> Result<DbPool, StoreError> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    match Backend::of_url(url).ok_or_else(|| bad_url(redacted))? {
        Backend::Sqlite => sqlite_connect(url, redacted, mode, |options| {
            sqlite_pool_options(mode).connect_with(options)
        })
        .await
        .map(|pool| DbPool::Sqlite(pool, Dialect::verbatim(Backend::Sqlite))),
        Backend::Postgres => {
            if mode == Mode::Create {
                // Nothing has probed the server yet (opening probes it to read the catalog).
                connect_postgres_directly(url, redacted, mode)
                    .await?
                    .close()
                    .await
                    .map_err(unreachable)?;
            }
            PgPoolOptions::new()
                .max_connections(POSTGRES_POOL_SIZE)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(postgres_options(url, redacted, mode)?)
                .await
                .map(|pool| DbPool::Postgres(pool, Dialect::verbatim(Backend::Postgres)))
                .map_err(unreachable)
        }
        Backend::Mysql if mode != Mode::ReadOnly => Err(StoreError::ReadOnly {
            url: redacted.to_owned(),
        }),
        Backend::Mysql => mysql::connect_pool(url, redacted, ACQUIRE_TIMEOUT)
            .await
            .map(|pool| DbPool::Mysql(pool, Dialect::verbatim(Backend::Mysql))),
    }
}

/// A read-only pool keeps its connections for its whole life: while one is open, the file's
/// log and index stay as they are (a writer that closes leaves them to the reader), so a
/// connection opened later finds them as the first one did.
fn sqlite_pool_options(mode: Mode) -> SqlitePoolOptions {
    let options = SqlitePoolOptions::new()
        .max_connections(SQLITE_POOL_SIZE)
        .acquire_timeout(ACQUIRE_TIMEOUT);
    if mode == Mode::ReadOnly {
        options.idle_timeout(None).max_lifetime(None)
    } else {
        options
    }
}

/// Read-only SQLite options that leave the file and its side files as they were
/// (`sqlite_read_only.rs`). A URL that names no file is opened plainly read-only.
fn read_only_sqlite(
    options: SqliteConnectOptions,
    url: &str,
    redacted: &str,
) -> Result<SqliteConnectOptions, StoreError> {
    let Some(path) = sqlite_path(url) else {
        return Ok(options.read_only(true));
    };
    sqlite_read_only::read_only_options(options, std::path::Path::new(path)).map_err(|refused| {
        StoreError::LogWithoutIndex {
            url: redacted.to_owned(),
            log: refused.log.display().to_string(),
        }
    })
}

/// The file a `sqlite:` URL names, when it names one.
pub(crate) fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then_some(path)
}

impl DbPool {
    pub(super) async fn close(&self) {
        match self {
            DbPool::Sqlite(pool, _) => {
                pool.close().await;
                // Connections closing together each still see the other open, so none of them
                // removes the side files a read of a WAL-mode file made (SQLite leaves that to
                // the last connection). One more connection, closing alone, is the last.
                if let Ok(last) = pool.connect_options().connect().await {
                    let _ = last.close().await;
                }
            }
            DbPool::Postgres(pool, _) => pool.close().await,
            DbPool::Mysql(pool, _) => pool.close().await,
        }
    }

    pub(super) fn backend(&self) -> Backend {
        match self {
            DbPool::Sqlite(..) => Backend::Sqlite,
            DbPool::Postgres(..) => Backend::Postgres,
            DbPool::Mysql(..) => Backend::Mysql,
        }
    }

    pub(super) fn with_dialect(self, dialect: Dialect) -> DbPool {
        match self {
            DbPool::Sqlite(pool, _) => DbPool::Sqlite(pool, dialect),
            DbPool::Postgres(pool, _) => DbPool::Postgres(pool, dialect),
            DbPool::Mysql(pool, _) => DbPool::Mysql(pool, dialect),
        }
    }

    /// What the database holds, read over one of the pool's connections.
    pub(super) async fn catalog(
        &self,
        url: &str,
        probes: &[CatalogProbe],
    ) -> Result<Catalog, StoreError> {
        let failed = |source| StoreError::Query {
            url: url.to_owned(),
            source,
        };
        match self {
            DbPool::Sqlite(pool, _) => {
                let mut conn = pool.acquire().await.map_err(failed)?;
                CatalogConnection::Sqlite(&mut conn).read(url, probes).await
            }
            DbPool::Postgres(pool, _) => {
                let mut conn = pool.acquire().await.map_err(failed)?;
                CatalogConnection::Postgres(&mut conn)
                    .read(url, probes)
                    .await
            }
            DbPool::Mysql(pool, _) => {
                let mut conn = pool.acquire().await.map_err(failed)?;
                CatalogConnection::Mysql(&mut conn).read(url, probes).await
            }
        }
    }
}

pub(super) async fn migrate(pool: &DbPool, url: &str) -> Result<(), StoreError> {
    let result = match pool {
        DbPool::Sqlite(pool, _) => SQLITE_MIGRATOR.run(pool).await,
        DbPool::Postgres(pool, _) => POSTGRES_MIGRATOR.run(pool).await,
        // memscope's schema is never created on MySQL: its pool is read-only.
        DbPool::Mysql(..) => {
            return Err(StoreError::ReadOnly {
                url: url.to_owned(),
            });
        }
    };
    result.map_err(|source| StoreError::Migration {
        url: url.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::ConnectOptions;
    use sqlx::sqlite::SqliteConnectOptions;

    use super::cannot_open;

    #[tokio::test]
    async fn a_file_sqlite_cannot_open_is_told_from_other_failures() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no such directory").join("m.db");
        let options = SqliteConnectOptions::new()
            .filename(&missing)
            .read_only(true);
        let error = options.connect().await.unwrap_err();
        assert!(cannot_open(&error), "{error}");
        let mut conn = SqliteConnectOptions::from_str("sqlite::memory:")
            .unwrap()
            .connect()
            .await
            .unwrap();
        let error = sqlx::query("SELECT * FROM nowhere")
            .execute(&mut conn)
            .await
            .unwrap_err();
        assert!(!cannot_open(&error), "{error}");
        assert!(!cannot_open(&sqlx::Error::PoolTimedOut));
    }
}

//! The memory database: connection, schema and migrations, and the queries memscope makes.
//!
//! One [`Store`] serves SQLite and PostgreSQL. Each query is written once, in PostgreSQL syntax
//! (see [`sql`]), and each method body is written once and compiled for both pools by
//! [`on_pool!`].

pub mod rows;

mod error;
mod sql;

pub use error::{StoreError, redact_url};
pub use sql::strip_casts;

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

/// The schema version this binary creates and understands (`memscope_meta.schema_version`).
pub const SCHEMA_VERSION: i64 = 3;

static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/sqlite");
static POSTGRES_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/postgres");

/// Runs `$body` against whichever pool `$pools` (a `DbPool`) holds, with `$pool` bound to it and, in the
/// second form, `$sql` bound to the backend's text of the PostgreSQL query `$text`. The body is
/// written once and type-checked for each backend.
macro_rules! on_pool {
    ($pools:expr, |$pool:ident| $body:expr) => {
        match &$pools {
            $crate::store::DbPool::Sqlite($pool) => $body,
            $crate::store::DbPool::Postgres($pool) => $body,
        }
    };
    ($pools:expr, $text:expr, |$pool:ident, $sql:ident| $body:expr) => {{
        let postgres_text: &'static str = $text;
        match &$pools {
            $crate::store::DbPool::Sqlite($pool) => {
                let $sql = $crate::store::sql::sqlite_text(postgres_text);
                $body
            }
            $crate::store::DbPool::Postgres($pool) => {
                let $sql = postgres_text;
                $body
            }
        }
    }};
}

mod chat_memory;
mod insert;
pub mod job_processes;
pub mod memory_bases;
mod nodes;
mod queries;

pub use chat_memory::{ChangeRecord, ChatMemorySummary, DeleteScope, MemoryChange};
pub use nodes::{NodeExecutionBrief, NodeExecutionRecord, Offload};

pub use queries::{
    BadNodeJson, ConversationCursor, ConversationFilter, ConversationInfo, ConversationSummary,
    DanglingRunRef, TableCount,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Which backend a URL names, if any.
    pub fn of_url(url: &str) -> Option<Backend> {
        if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Backend::Postgres)
        } else {
            None
        }
    }
}

/// How [`Store::open`] may use the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Read-write if memscope created the database, read-only otherwise (a live Dify or Langflow
    /// database is never changed by accident).
    #[default]
    Auto,
    /// Read-write, whoever created the database.
    Write,
    ReadOnly,
}

#[derive(Clone)]
enum DbPool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// An open memory database. Cloning is cheap and shares the connection pool.
#[derive(Clone)]
pub struct Store {
    pool: DbPool,
    /// The URL with its password redacted: what every error names.
    url: String,
    read_only: bool,
    schema: Inspection,
}

/// What a database holds, as far as opening it is concerned.
#[derive(Debug, Clone, Default)]
struct Inspection {
    tables: BTreeSet<String>,
    meta: BTreeMap<String, String>,
    /// Columns of `apps`: Dify's own lacks memscope's `memory_window`.
    app_columns: BTreeSet<String>,
}

impl Inspection {
    fn created_by_memscope(&self) -> bool {
        self.meta.get("created_by").map(String::as_str) == Some("memscope")
    }

    fn is_memory_database(&self) -> bool {
        let has = |table: &str| self.tables.contains(table);
        self.created_by_memscope() || (has("messages") && has("conversations")) || has("message")
    }

    fn has_app_memory_window(&self) -> bool {
        self.app_columns.contains("memory_window")
    }

    /// Tables other than sqlx's own bookkeeping.
    fn has_foreign_tables(&self) -> bool {
        self.tables.iter().any(|t| !t.starts_with("_sqlx"))
    }

    fn schema_version(&self, url: &str) -> Result<Option<i64>, StoreError> {
        self.meta
            .get("schema_version")
            .map(|value| {
                value.parse().map_err(|_| StoreError::BadSchemaVersion {
                    url: url.to_owned(),
                    value: value.clone(),
                })
            })
            .transpose()
    }
}

impl Store {
    /// Opens an existing memory database. Fails when the URL is bad or the server unreachable,
    /// when the database holds no memory tables, or when memscope's schema in it is newer than
    /// this binary. A database memscope did not create opens read-only under [`Access::Auto`].
    pub async fn open(url: &str, access: Access) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let probe = connect(url, &redacted, Mode::ReadOnly).await?;
        let schema = probe.inspect(&redacted).await?;
        if !schema.is_memory_database() {
            return Err(StoreError::NotAMemoryDatabase { url: redacted });
        }
        let version = schema.schema_version(&redacted)?;
        if let Some(found) = version.filter(|&v| v > SCHEMA_VERSION) {
            return Err(StoreError::SchemaTooNew {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let read_only = match access {
            Access::Auto => !schema.created_by_memscope(),
            Access::Write => false,
            Access::ReadOnly => true,
        };
        let outdated = version.filter(|&v| v < SCHEMA_VERSION);
        if read_only {
            if let Some(found) = outdated {
                return Err(StoreError::SchemaOutdated {
                    url: redacted,
                    found,
                    supported: SCHEMA_VERSION,
                });
            }
            return Ok(Store {
                pool: probe,
                url: redacted,
                read_only,
                schema,
            });
        }
        probe.close().await;
        let write_mode = if schema.created_by_memscope() {
            Mode::ReadWrite
        } else {
            Mode::ReadWriteForeign
        };
        let mut store = Store {
            pool: connect(url, &redacted, write_mode).await?,
            url: redacted,
            read_only,
            schema,
        };
        if outdated.is_some() {
            store.migrate().await?;
        }
        Ok(store)
    }

    /// Creates memscope's schema (a SQLite file is created if missing; a PostgreSQL database
    /// must exist) or brings it up to date, and opens the database read-write. Idempotent.
    /// Refuses a database that holds tables memscope did not create.
    pub async fn init(url: &str) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let pool = connect(url, &redacted, Mode::Create).await?;
        let schema = pool.inspect(&redacted).await?;
        if !schema.created_by_memscope() && schema.has_foreign_tables() {
            pool.close().await;
            return Err(StoreError::ForeignDatabase { url: redacted });
        }
        if let Some(found) = schema
            .schema_version(&redacted)?
            .filter(|&v| v > SCHEMA_VERSION)
        {
            pool.close().await;
            return Err(StoreError::SchemaTooNew {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let mut store = Store {
            pool,
            url: redacted,
            read_only: false,
            schema,
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&mut self) -> Result<(), StoreError> {
        let result = match &self.pool {
            DbPool::Sqlite(pool) => SQLITE_MIGRATOR.run(pool).await,
            DbPool::Postgres(pool) => POSTGRES_MIGRATOR.run(pool).await,
        };
        result.map_err(|source| StoreError::Migration {
            url: self.url.clone(),
            source,
        })?;
        self.schema = self.pool.inspect(&self.url).await?;
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        match self.pool {
            DbPool::Sqlite(_) => Backend::Sqlite,
            DbPool::Postgres(_) => Backend::Postgres,
        }
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub fn created_by_memscope(&self) -> bool {
        self.schema.created_by_memscope()
    }

    /// memscope's schema version in the database; `None` for a database memscope did not create.
    pub fn schema_version(&self) -> Option<i64> {
        self.schema.schema_version(&self.url).ok().flatten()
    }

    /// The database URL with its password redacted.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the database has this table (Dify-only and Langflow-only databases lack some).
    pub fn has_table(&self, table: &str) -> bool {
        self.schema.tables.contains(table)
    }

    /// The PostgreSQL pool, where memory-base KB vectors live on PostgreSQL (pgvector).
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match &self.pool {
            DbPool::Postgres(pool) => Some(pool),
            DbPool::Sqlite(_) => None,
        }
    }

    pub async fn close(self) {
        match self.pool {
            DbPool::Sqlite(pool) => pool.close().await,
            DbPool::Postgres(pool) => pool.close().await,
        }
    }

    fn ensure_writable(&self) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                url: self.url.clone(),
            });
        }
        Ok(())
    }

    /// Wraps a driver error with the database it happened on.
    fn query_failed(&self, source: sqlx::Error) -> StoreError {
        StoreError::Query {
            url: self.url.clone(),
            source,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    ReadOnly,
    /// Read-write on a database memscope did not create.
    ReadWriteForeign,
    ReadWrite,
    /// Read-write, creating a missing SQLite file.
    Create,
}

/// SQLite allows one writer at a time; more connections only help concurrent readers.
const SQLITE_POOL_SIZE: u32 = 4;
const POSTGRES_POOL_SIZE: u32 = 5;
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

async fn connect(url: &str, redacted: &str, mode: Mode) -> Result<DbPool, StoreError> {
    let bad_url = || StoreError::BadUrl {
        url: redacted.to_owned(),
    };
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    match Backend::of_url(url).ok_or_else(bad_url)? {
        Backend::Sqlite => {
            let mut options = SqliteConnectOptions::from_str(url)
                .map_err(|_| bad_url())?
                .foreign_keys(true)
                .busy_timeout(SQLITE_BUSY_TIMEOUT)
                // Bulk inserts update four B-trees per message; a 64 MiB page cache keeps their
                // hot pages in memory (negative: KiB, per connection, grown on demand).
                .pragma("cache_size", "-65536");
            options = match mode {
                // The journal mode is a property of the file: leave it as its owner set it
                // (changing it is a write, too).
                Mode::ReadOnly => options.read_only(true),
                Mode::ReadWriteForeign => options,
                Mode::ReadWrite | Mode::Create => options
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .create_if_missing(mode == Mode::Create),
            };
            SqlitePoolOptions::new()
                .max_connections(SQLITE_POOL_SIZE)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options)
                .await
                .map(DbPool::Sqlite)
                .map_err(unreachable)
        }
        Backend::Postgres => {
            let mut options = PgConnectOptions::from_str(url).map_err(|_| bad_url())?;
            if mode == Mode::ReadOnly {
                options = options.options([("default_transaction_read_only", "on")]);
            }
            // The pool retries a refused connection until its acquire timeout; one direct
            // connection reports an unreachable server at once.
            let probe = tokio::time::timeout(ACQUIRE_TIMEOUT, options.connect())
                .await
                .map_err(|_| {
                    unreachable(sqlx::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer within {} s", ACQUIRE_TIMEOUT.as_secs()),
                    )))
                })?
                .map_err(unreachable)?;
            probe.close().await.map_err(unreachable)?;
            PgPoolOptions::new()
                .max_connections(POSTGRES_POOL_SIZE)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options)
                .await
                .map(DbPool::Postgres)
                .map_err(unreachable)
        }
    }
}

impl DbPool {
    async fn close(&self) {
        match self {
            DbPool::Sqlite(pool) => pool.close().await,
            DbPool::Postgres(pool) => pool.close().await,
        }
    }

    /// The tables of the database (PostgreSQL: of the current schema) and memscope's meta rows.
    async fn inspect(&self, url: &str) -> Result<Inspection, StoreError> {
        let failed = |source| StoreError::Query {
            url: url.to_owned(),
            source,
        };
        // The catalogs differ by backend; everything else is one query text.
        let tables: Vec<String> = match self {
            DbPool::Sqlite(pool) => {
                sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
                    .fetch_all(pool)
                    .await
            }
            DbPool::Postgres(pool) => {
                sqlx::query_scalar(
                    "SELECT table_name::text FROM information_schema.tables \
                     WHERE table_schema = current_schema()",
                )
                .fetch_all(pool)
                .await
            }
        }
        .map_err(failed)?;
        let tables: BTreeSet<String> = tables.into_iter().collect();
        let meta: Vec<(String, String)> = if tables.contains("memscope_meta") {
            on_pool!(*self, |pool| sqlx::query_as(
                "SELECT key, value FROM memscope_meta"
            )
            .fetch_all(pool)
            .await)
            .map_err(failed)?
        } else {
            Vec::new()
        };
        let app_columns: Vec<String> = if tables.contains("apps") {
            match self {
                DbPool::Sqlite(pool) => {
                    sqlx::query_scalar("SELECT name FROM pragma_table_info('apps')")
                        .fetch_all(pool)
                        .await
                }
                DbPool::Postgres(pool) => {
                    sqlx::query_scalar(
                        "SELECT column_name::text FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name = 'apps'",
                    )
                    .fetch_all(pool)
                    .await
                }
            }
            .map_err(failed)?
        } else {
            Vec::new()
        };
        Ok(Inspection {
            tables,
            meta: meta.into_iter().collect(),
            app_columns: app_columns.into_iter().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_is_read_from_the_scheme() {
        assert_eq!(Backend::of_url("sqlite:///tmp/x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of_url("sqlite:x.db"), Some(Backend::Sqlite));
        assert_eq!(
            Backend::of_url("postgres://u@h/db"),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Backend::of_url("postgresql://u@h/db"),
            Some(Backend::Postgres)
        );
        assert_eq!(Backend::of_url("mysql://u@h/db"), None);
        assert_eq!(Backend::of_url("/tmp/x.db"), None);
    }

    fn inspection(tables: &[&str], meta: &[(&str, &str)]) -> Inspection {
        Inspection {
            tables: tables.iter().map(|t| t.to_string()).collect(),
            meta: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            app_columns: BTreeSet::new(),
        }
    }

    #[test]
    fn memory_databases_are_recognised() {
        assert!(inspection(&["messages", "conversations", "apps"], &[]).is_memory_database());
        assert!(inspection(&["message", "flow"], &[]).is_memory_database());
        assert!(inspection(&["memscope_meta"], &[("created_by", "memscope")]).is_memory_database());
        assert!(!inspection(&["messages"], &[]).is_memory_database());
        assert!(!inspection(&["users", "orders"], &[]).is_memory_database());
        assert!(!inspection(&["memscope_meta"], &[]).is_memory_database());
    }

    #[test]
    fn schema_version_is_parsed_or_reported() {
        let url = "sqlite:x.db";
        assert_eq!(inspection(&[], &[]).schema_version(url).unwrap(), None);
        assert_eq!(
            inspection(&[], &[("schema_version", "3")])
                .schema_version(url)
                .unwrap(),
            Some(3)
        );
        assert!(matches!(
            inspection(&[], &[("schema_version", "three")]).schema_version(url),
            Err(StoreError::BadSchemaVersion { .. })
        ));
    }

    #[test]
    fn sqlx_bookkeeping_is_not_foreign() {
        assert!(!inspection(&["_sqlx_migrations"], &[]).has_foreign_tables());
        assert!(inspection(&["_sqlx_migrations", "users"], &[]).has_foreign_tables());
    }
}

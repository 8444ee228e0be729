//! The memory database: connection, schema and migrations, and the queries memscope makes.
//!
//! One [`Store`] serves SQLite and PostgreSQL. Each query is written once, in PostgreSQL syntax
//! (see [`sql`]), and each method body is written once and compiled for both pools by
//! [`on_pool!`].

mod casts;
mod catalog;
pub mod rows;

mod dify_schema;
mod error;
pub mod profile;
mod sql;

pub use catalog::Backend;
pub use error::{StoreError, redact_url};
pub use profile::{DifySchema, Part, Profile, Source, dashed_id};
pub use sql::strip_casts;

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

use catalog::CatalogConnection;
use profile::{Catalog, Dialect};

/// The schema version this binary creates and understands (`memscope_meta.schema_version`).
pub const SCHEMA_VERSION: i64 = 5;

static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/sqlite");
static POSTGRES_MIGRATOR: Migrator = sqlx::migrate!("assets/migrations/postgres");

/// Runs `$body` against whichever pool `$pools` (a `DbPool`) holds, with `$pool` bound to it and, in the
/// second form, `$sql` bound to the text of the PostgreSQL query `$text` in the database's
/// [`Dialect`]. The body is written once and type-checked for each backend.
macro_rules! on_pool {
    ($pools:expr, |$pool:ident| $body:expr) => {
        match &$pools {
            $crate::store::DbPool::Sqlite($pool, _) => $body,
            $crate::store::DbPool::Postgres($pool, _) => $body,
        }
    };
    ($pools:expr, $text:expr, |$pool:ident, $sql:ident| $body:expr) => {{
        let postgres_text: &'static str = $text;
        match &$pools {
            $crate::store::DbPool::Sqlite($pool, dialect) => {
                let $sql = $crate::store::sql::dialect_text(*dialect, postgres_text);
                $body
            }
            $crate::store::DbPool::Postgres($pool, dialect) => {
                let $sql = $crate::store::sql::dialect_text(*dialect, postgres_text);
                $body
            }
        }
    }};
}

mod bad_row;
mod chat_memory;
mod insert;
pub mod job_processes;
pub mod langflow;
pub mod memory_bases;
mod nodes;
mod owners;
mod queries;
pub mod search;
mod sqlite_scan;
mod uploads;

pub use chat_memory::{ChangeRecord, ChatMemorySummary, DeleteScope, MemoryChange};
pub use nodes::{NodeExecutionBrief, NodeExecutionRecord, Offload};
pub use uploads::MessageUpload;

pub use bad_row::BadRow;
pub use queries::{
    BadNodeJson, ConversationCursor, ConversationFilter, ConversationInfo, ConversationSummary,
    DanglingRunRef, ID_CANDIDATES, IdMatch, TableCount,
};

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

/// A connection pool, with the dialect its database's tables need.
#[derive(Clone)]
enum DbPool {
    Sqlite(SqlitePool, Dialect),
    Postgres(PgPool, Dialect),
}

/// An open memory database. Cloning is cheap and shares the connection pool.
#[derive(Clone)]
pub struct Store {
    pool: DbPool,
    /// The URL with its password redacted: what every error names.
    url: String,
    read_only: bool,
    catalog: Catalog,
    profile: Profile,
}

impl Catalog {
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

    /// Tables other than sqlx's own bookkeeping.
    fn has_foreign_tables(&self) -> bool {
        self.tables.iter().any(|t| !t.starts_with("_sqlx"))
    }
}

impl Store {
    /// Opens an existing memory database. Fails when the URL is bad or the server unreachable,
    /// when the database holds no memory tables, or when memscope's schema in it is newer than
    /// this binary. A database memscope did not create opens read-only under [`Access::Auto`].
    pub async fn open(url: &str, access: Access) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let catalog = probe(url, &redacted).await?;
        let version = catalog.schema_version(&redacted)?;
        if let Some(found) = version.filter(|&v| v > SCHEMA_VERSION) {
            return Err(StoreError::SchemaTooNew {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let read_only = match access {
            Access::Auto => !catalog.created_by_memscope(),
            Access::Write => false,
            Access::ReadOnly => true,
        };
        let outdated = version.filter(|&v| v < SCHEMA_VERSION);
        if read_only && let Some(found) = outdated {
            return Err(StoreError::SchemaOutdated {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let mode = if read_only {
            Mode::ReadOnly
        } else if catalog.created_by_memscope() {
            Mode::ReadWrite
        } else {
            Mode::ReadWriteForeign
        };
        let pool = connect(url, &redacted, mode).await?;
        let mut store = Store::assemble(pool, redacted, read_only, catalog)?;
        if !read_only && outdated.is_some() {
            store.migrate().await?;
        }
        Ok(store)
    }

    /// A store over `pool`, speaking the dialect of the database the catalog describes.
    fn assemble(
        pool: DbPool,
        url: String,
        read_only: bool,
        catalog: Catalog,
    ) -> Result<Store, StoreError> {
        let Some(profile) = Profile::detect(&catalog, pool.backend()) else {
            return Err(StoreError::NotAMemoryDatabase { url });
        };
        Ok(Store {
            pool: pool.with_dialect(profile.dialect),
            url,
            read_only,
            catalog,
            profile,
        })
    }

    /// Creates memscope's schema (a SQLite file is created if missing; a PostgreSQL database
    /// must exist) or brings it up to date, and opens the database read-write. Idempotent.
    /// Refuses a database that holds tables memscope did not create.
    pub async fn init(url: &str) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let pool = connect(url, &redacted, Mode::Create).await?;
        let catalog = pool.catalog(&redacted).await?;
        if !catalog.created_by_memscope() && catalog.has_foreign_tables() {
            pool.close().await;
            return Err(StoreError::ForeignDatabase { url: redacted });
        }
        if let Some(found) = catalog
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
        migrate(&pool, &redacted).await?;
        let catalog = pool.catalog(&redacted).await?;
        Store::assemble(pool, redacted, false, catalog)
    }

    async fn migrate(&mut self) -> Result<(), StoreError> {
        migrate(&self.pool, &self.url).await?;
        self.catalog = self.pool.catalog(&self.url).await?;
        Ok(())
    }

    /// What kind of database this is and which parts it holds.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Fails with one line saying what this database is and what it lacks, unless it holds
    /// `part`.
    pub fn require(&self, part: Part) -> Result<(), StoreError> {
        if self.profile.has(part) {
            Ok(())
        } else {
            Err(StoreError::Lacks {
                url: self.url.clone(),
                explanation: self.profile.lacks(part),
            })
        }
    }

    /// The text of a PostgreSQL-syntax query in this database's dialect.
    fn sql(&self, postgres_sql: &'static str) -> &'static str {
        sql::dialect_text(self.profile.dialect, postgres_sql)
    }

    pub fn backend(&self) -> Backend {
        self.pool.backend()
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub fn created_by_memscope(&self) -> bool {
        self.catalog.created_by_memscope()
    }

    /// memscope's schema version in the database; `None` for a database memscope did not create.
    pub fn schema_version(&self) -> Option<i64> {
        self.catalog.schema_version(&self.url).ok().flatten()
    }

    /// The database's own identity (`memscope_meta.database_id`, written once by the schema
    /// version 3 migration); `None` for a database memscope did not create.
    pub fn database_id(&self) -> Option<&str> {
        self.catalog.meta.get("database_id").map(String::as_str)
    }

    /// The database URL with its password redacted.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the database has this table (Dify-only and Langflow-only databases lack some).
    pub fn has_table(&self, table: &str) -> bool {
        self.catalog.has_table(table)
    }

    /// The PostgreSQL pool, where memory-base KB vectors live on PostgreSQL (pgvector).
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match &self.pool {
            DbPool::Postgres(pool, _) => Some(pool),
            DbPool::Sqlite(..) => None,
        }
    }

    pub async fn close(self) {
        match self.pool {
            DbPool::Sqlite(pool, _) => pool.close().await,
            DbPool::Postgres(pool, _) => pool.close().await,
        }
    }

    /// Refuses a write on a read-only database, and on a database Langflow made: these writers
    /// keep memscope's own schema's formats (its lease table, its own knowledge-base layout),
    /// which Langflow would not accept. Langflow's databases get the writers of
    /// [`langflow`] and the in-place ones of [`Store::ensure_writable_in_place`].
    fn ensure_writable(&self) -> Result<(), StoreError> {
        self.ensure_writable_in_place()?;
        if self.profile.source == Source::Langflow {
            return Err(StoreError::ForeignWrite {
                url: self.url.clone(),
                what: "memory-base creation and deletion",
            });
        }
        Ok(())
    }

    /// Refuses a write on a read-only database: for the writes made in the database's own
    /// formats (ids through the dialect, instants as [`langflow::StoredTime`]), which
    /// Langflow's databases take too.
    fn ensure_writable_in_place(&self) -> Result<(), StoreError> {
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

    /// Runs `statements` (PostgreSQL syntax, in this database's dialect), each with `value` bound
    /// as `$1`, in one transaction; returns the rows the last one affected.
    async fn run_in_one_transaction(
        &self,
        statements: &[&'static str],
        value: &str,
    ) -> Result<u64, StoreError> {
        on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            let mut last = 0;
            for &statement in statements {
                last = sqlx::query(self.sql(statement))
                    .bind(value)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(last)
        }
        .await)
        .map_err(|e| self.query_failed(e))
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
async fn probe(url: &str, redacted: &str) -> Result<Catalog, StoreError> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    match Backend::of_url(url).ok_or_else(|| bad_url(redacted))? {
        Backend::Sqlite => {
            let mut conn = sqlite_options(url, redacted, Mode::ReadOnly)?
                .connect()
                .await
                .map_err(unreachable)?;
            let catalog = CatalogConnection::Sqlite(&mut conn).read(redacted).await;
            conn.close().await.map_err(unreachable)?;
            catalog
        }
        Backend::Postgres => {
            let mut conn = connect_postgres_directly(url, redacted, Mode::ReadOnly).await?;
            let catalog = CatalogConnection::Postgres(&mut conn).read(redacted).await;
            conn.close().await.map_err(unreachable)?;
            catalog
        }
    }
}

fn bad_url(redacted: &str) -> StoreError {
    StoreError::BadUrl {
        url: redacted.to_owned(),
    }
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
        Mode::ReadOnly => read_only_sqlite(options, url),
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
async fn connect_postgres_directly(
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
async fn connect(url: &str, redacted: &str, mode: Mode) -> Result<DbPool, StoreError> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    match Backend::of_url(url).ok_or_else(|| bad_url(redacted))? {
        Backend::Sqlite => SqlitePoolOptions::new()
            .max_connections(SQLITE_POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(sqlite_options(url, redacted, mode)?)
            .await
            .map(|pool| DbPool::Sqlite(pool, Dialect::Sqlite(DifySchema::FULL)))
            .map_err(unreachable),
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
                .map(|pool| DbPool::Postgres(pool, Dialect::Postgres(DifySchema::FULL)))
                .map_err(unreachable)
        }
    }
}

/// Read-only SQLite options. A writable file is opened read-write with `query_only` on: SQLite
/// then cleans up as any of the owner's own clients does, removing the `-wal` and `-shm` files a
/// WAL-mode database (Langflow's) needs while open, where a read-only connection would leave
/// them behind. A file that cannot be written is opened read-only.
fn read_only_sqlite(options: SqliteConnectOptions, url: &str) -> SqliteConnectOptions {
    let writable = sqlite_path(url)
        .and_then(|path| std::fs::metadata(path).ok())
        .is_some_and(|meta| meta.is_file() && !meta.permissions().readonly());
    if writable {
        options.pragma("query_only", "ON")
    } else {
        options.read_only(true)
    }
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
    async fn close(&self) {
        match self {
            DbPool::Sqlite(pool, _) => pool.close().await,
            DbPool::Postgres(pool, _) => pool.close().await,
        }
    }

    fn backend(&self) -> Backend {
        match self {
            DbPool::Sqlite(..) => Backend::Sqlite,
            DbPool::Postgres(..) => Backend::Postgres,
        }
    }

    fn with_dialect(self, dialect: Dialect) -> DbPool {
        match self {
            DbPool::Sqlite(pool, _) => DbPool::Sqlite(pool, dialect),
            DbPool::Postgres(pool, _) => DbPool::Postgres(pool, dialect),
        }
    }

    /// What the database holds, read over one of the pool's connections.
    async fn catalog(&self, url: &str) -> Result<Catalog, StoreError> {
        let failed = |source| StoreError::Query {
            url: url.to_owned(),
            source,
        };
        match self {
            DbPool::Sqlite(pool, _) => {
                let mut conn = pool.acquire().await.map_err(failed)?;
                CatalogConnection::Sqlite(&mut conn).read(url).await
            }
            DbPool::Postgres(pool, _) => {
                let mut conn = pool.acquire().await.map_err(failed)?;
                CatalogConnection::Postgres(&mut conn).read(url).await
            }
        }
    }
}

async fn migrate(pool: &DbPool, url: &str) -> Result<(), StoreError> {
    let result = match pool {
        DbPool::Sqlite(pool, _) => SQLITE_MIGRATOR.run(pool).await,
        DbPool::Postgres(pool, _) => POSTGRES_MIGRATOR.run(pool).await,
    };
    result.map_err(|source| StoreError::Migration {
        url: url.to_owned(),
        source,
    })
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

    fn catalog(meta: &[(&str, &str)]) -> Catalog {
        Catalog {
            meta: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Catalog::default()
        }
    }

    #[test]
    fn schema_version_is_parsed_or_reported() {
        let url = "sqlite:x.db";
        assert_eq!(catalog(&[]).schema_version(url).unwrap(), None);
        assert_eq!(
            catalog(&[("schema_version", "3")])
                .schema_version(url)
                .unwrap(),
            Some(3)
        );
        assert!(matches!(
            catalog(&[("schema_version", "three")]).schema_version(url),
            Err(StoreError::BadSchemaVersion { .. })
        ));
    }

    #[test]
    fn sqlx_bookkeeping_is_not_foreign() {
        let tables = |names: &[&str]| Catalog {
            tables: names.iter().map(|t| t.to_string()).collect(),
            ..Catalog::default()
        };
        assert!(!tables(&["_sqlx_migrations"]).has_foreign_tables());
        assert!(tables(&["_sqlx_migrations", "users"]).has_foreign_tables());
    }
}

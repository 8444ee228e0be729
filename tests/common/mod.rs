//! The shared database harness for integration tests.
//!
//! [`db_tests!`] turns each test body into a `sqlite` and a `postgres` test. Each run gets a
//! fresh database: a SQLite file in a temporary directory, or a PostgreSQL schema created in the
//! database named by `MEMSCOPE_TEST_PG_URL` and dropped afterwards, so runs never collide.
//! Without the variable the PostgreSQL tests pass and say they were skipped; with it set and the
//! server unreachable they fail. Each PostgreSQL test that ran leaves a marker file in
//! `MEMSCOPE_PG_MARKER_DIR` (when set) so CI can prove they ran.
//!
//! Use it from a test file with `#[macro_use] mod common;`.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

pub mod dify;
pub mod fixtures;
pub mod mysql;

use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, NaiveDateTime, Utc};
use memscope::store::{Backend, strip_casts};
use sqlx::postgres::PgConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Row};

pub const PG_URL_VAR: &str = "MEMSCOPE_TEST_PG_URL";
pub const PG_MARKER_DIR_VAR: &str = "MEMSCOPE_PG_MARKER_DIR";

/// Generates, for each `async fn name(db) { … }`, a module `name` with the tests `sqlite` and
/// `postgres` running the same body on a fresh database of each backend. Attributes before the
/// `async fn` (e.g. `#[ignore]`) apply to both tests.
#[macro_export]
macro_rules! db_tests {
    ($($(#[$attr:meta])* async fn $name:ident($db:ident) $body:block)+) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($db: $crate::common::TestDb) $body

            $(#[$attr])*
            #[tokio::test]
            async fn sqlite() {
                $crate::common::run_sqlite(body).await;
            }

            $(#[$attr])*
            #[tokio::test]
            async fn postgres() {
                $crate::common::run_postgres(module_path!(), body).await;
            }
        }
    )+};
}

/// [`db_tests!`] for tests on Dify's tables, with a third test, `mysql`, running the body on a
/// fresh MySQL database (see `mysql.rs`): memscope reads Dify's tables there, read-only.
#[macro_export]
macro_rules! dify_db_tests {
    ($($(#[$attr:meta])* async fn $name:ident($db:ident) $body:block)+) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($db: $crate::common::TestDb) $body

            $(#[$attr])*
            #[tokio::test]
            async fn sqlite() {
                $crate::common::run_sqlite(body).await;
            }

            $(#[$attr])*
            #[tokio::test]
            async fn postgres() {
                $crate::common::run_postgres(module_path!(), body).await;
            }

            $(#[$attr])*
            #[tokio::test]
            async fn mysql() {
                $crate::common::mysql::run_mysql(module_path!(), body).await;
            }
        }
    )+};
}

/// A fresh, empty database for one test.
pub struct TestDb {
    pub backend: Backend,
    url: String,
    /// Keeps the SQLite file's directory alive for the test.
    _dir: Option<tempfile::TempDir>,
}

/// How to read a column in [`TestDb::fetch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Bool,
    /// `timestamp` (naive).
    Time,
    /// `timestamptz`.
    TimeTz,
}

/// A column value read by [`TestDb::fetch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Text(String),
    Int(i64),
    Bool(bool),
    Time(NaiveDateTime),
    TimeTz(DateTime<Utc>),
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<NaiveDateTime> for Value {
    fn from(v: NaiveDateTime) -> Self {
        Value::Time(v)
    }
}

impl From<DateTime<Utc>> for Value {
    fn from(v: DateTime<Utc>) -> Self {
        Value::TimeTz(v)
    }
}

impl<T> From<&Option<T>> for Value
where
    T: Clone,
    Value: From<T>,
{
    fn from(v: &Option<T>) -> Self {
        v.clone().map_or(Value::Null, Value::from)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

/// Reads column `i` of `row` as `kind`; the same code for both row types.
macro_rules! decode_column {
    ($row:expr, $i:expr, $kind:expr) => {{
        let (row, i) = ($row, $i);
        match $kind {
            Kind::Text => row.try_get::<Option<String>, _>(i).map(|v| Value::from(&v)),
            Kind::Int => row.try_get::<Option<i64>, _>(i).map(|v| Value::from(&v)),
            Kind::Bool => row.try_get::<Option<bool>, _>(i).map(|v| Value::from(&v)),
            Kind::Time => row
                .try_get::<Option<NaiveDateTime>, _>(i)
                .map(|v| Value::from(&v)),
            Kind::TimeTz => row
                .try_get::<Option<DateTime<Utc>>, _>(i)
                .map(|v| Value::from(&v)),
        }
        .unwrap_or_else(|e| panic!("column {i} as {:?}: {e}", $kind))
    }};
}

/// Runs `$body` with `$conn` bound to a new connection of the test's backend: the two
/// connection types share no trait that covers both `execute` and `fetch_all`.
macro_rules! with_connection {
    ($db:expr, |$conn:ident| $body:expr) => {
        match $db.backend {
            Backend::Sqlite => {
                let mut $conn = $db.sqlite_connection().await;
                $body
            }
            Backend::Postgres => {
                let mut $conn = $db.pg_connection().await;
                $body
            }
            Backend::Mysql => {
                let mut $conn = $db.mysql_connection().await;
                $body
            }
        }
    };
}

impl TestDb {
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs SQL statements (PostgreSQL syntax; casts are stripped for SQLite) outside any
    /// [`memscope::store::Store`], e.g. to build a database memscope did not create.
    pub async fn execute(&self, postgres_sql: &str) {
        let sql = self.text_for_backend(postgres_sql);
        with_connection!(self, |conn| {
            sqlx::raw_sql(AssertSqlSafe(sql))
                .execute(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("{postgres_sql}: {e}"));
        })
    }

    /// Rows of a query (PostgreSQL syntax; casts are stripped for SQLite), each column read as
    /// the given kind. Select uuid columns as `::text`.
    pub async fn fetch(&self, postgres_sql: &str, kinds: &[Kind]) -> Vec<Vec<Value>> {
        let sql = self.text_for_backend(postgres_sql);
        with_connection!(self, |conn| {
            let rows = sqlx::query(AssertSqlSafe(sql))
                .fetch_all(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("{postgres_sql}: {e}"));
            rows.iter()
                .map(|row| {
                    (0..kinds.len())
                        .map(|i| decode_column!(row, i, kinds[i]))
                        .collect()
                })
                .collect()
        })
    }

    fn text_for_backend(&self, postgres_sql: &str) -> String {
        match self.backend {
            Backend::Sqlite => strip_casts(postgres_sql),
            Backend::Postgres => postgres_sql.to_owned(),
            Backend::Mysql => mysql::mysql_sql(postgres_sql),
        }
    }

    async fn sqlite_connection(&self) -> SqliteConnection {
        SqliteConnectOptions::from_str(&self.url)
            .expect("test SQLite URL")
            .create_if_missing(true)
            .connect()
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.url))
    }

    async fn pg_connection(&self) -> PgConnection {
        PgConnection::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.url))
    }
}

/// Runs `body` on a fresh SQLite database file.
pub async fn run_sqlite<F, Fut>(body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("memory.db").display());
    body(TestDb {
        backend: Backend::Sqlite,
        url,
        _dir: Some(dir),
    })
    .await;
}

/// Runs `body` in a fresh PostgreSQL schema when `MEMSCOPE_TEST_PG_URL` is set, dropping the
/// schema afterwards (also when the body panics), then leaves the test's marker.
pub async fn run_postgres<F, Fut>(test: &str, body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    if in_postgres_schema(test, body).await
        && let Ok(dir) = std::env::var(PG_MARKER_DIR_VAR)
    {
        std::fs::create_dir_all(&dir).expect("marker directory");
        std::fs::write(
            std::path::Path::new(&dir).join(test.replace("::", "-")),
            "ran\n",
        )
        .expect("marker file");
    }
}

/// Runs `body` in a fresh PostgreSQL schema, dropped afterwards (also when the body panics);
/// `false` when `MEMSCOPE_TEST_PG_URL` is not set, and the body did not run.
pub async fn in_postgres_schema<F, Fut>(test: &str, body: F) -> bool
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Ok(base_url) = std::env::var(PG_URL_VAR) else {
        eprintln!("{test}: PostgreSQL test skipped ({PG_URL_VAR} is not set)");
        return false;
    };
    let schema = unique_schema_name(test);
    let mut admin = PgConnection::connect(&base_url).await.unwrap_or_else(|e| {
        panic!("{PG_URL_VAR}={base_url} is set but PostgreSQL is unreachable: {e}")
    });
    // The search migration's trigram indexes use pg_trgm wherever it is installed; installed
    // once for the whole database, no test's schema owns it (dropping a schema that did would
    // drop other tests' indexes). Tests running at once may race to create it: one wins.
    let _ = sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
        .execute(&mut admin)
        .await;
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("creating schema {schema}: {e}"));
    let separator = if base_url.contains('?') { '&' } else { '?' };
    let url = format!("{base_url}{separator}options[search_path]={schema}");
    let outcome = tokio::spawn(body(TestDb {
        backend: Backend::Postgres,
        url,
        _dir: None,
    }))
    .await;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("dropping schema {schema}: {e}"));
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
    true
}

/// A schema name unique to this test, process and call (PostgreSQL identifiers: 63 bytes).
fn unique_schema_name(test: &str) -> String {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let suffix = format!(
        "_{}_{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    );
    let stem: String = test
        .rsplit("::")
        .next()
        .unwrap_or(test)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(63 - "mst_".len() - suffix.len())
        .collect();
    format!("mst_{stem}{suffix}")
}

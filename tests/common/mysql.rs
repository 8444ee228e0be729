//! MySQL and MariaDB for the tests: a fresh database per test in the server
//! `MEMSCOPE_TEST_MYSQL_URL` names, dropped afterwards, with a marker in
//! `MEMSCOPE_MYSQL_MARKER_DIR` when the test really ran; and the harness's PostgreSQL-syntax
//! statements with the column types Dify's models give its tables on MySQL.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};

use memscope::store::{Backend, strip_casts};
use sqlx::mysql::MySqlConnection;
use sqlx::{AssertSqlSafe, Connection};

use super::TestDb;

pub const MYSQL_URL_VAR: &str = "MEMSCOPE_TEST_MYSQL_URL";
pub const MYSQL_MARKER_DIR_VAR: &str = "MEMSCOPE_MYSQL_MARKER_DIR";

/// Dify's column types on MySQL (`api/models/types.py`): `StringUUID` is `CHAR(36)`,
/// `LongText` `LONGTEXT`, `sa.DateTime` `DATETIME` (no fraction), `sa.Boolean` `TINYINT(1)`;
/// `sa.JSON` stays `JSON` (MariaDB makes it a checked `LONGTEXT`).
const DIFY_MYSQL_TYPES: &[(&str, &str)] = &[
    ("uuid", "CHAR(36)"),
    ("text", "LONGTEXT"),
    ("timestamp", "DATETIME"),
    ("boolean", "TINYINT(1)"),
    ("key", "\"key\""),
];

/// The statements in MySQL's form: casts stripped, `CREATE TABLE` column types as Dify's
/// models make them there, double quotes naming identifiers.
pub fn mysql_sql(postgres_sql: &str) -> String {
    let statements: Vec<String> = strip_casts(postgres_sql)
        .split(";\n")
        .map(|statement| {
            if statement.trim_start().starts_with("CREATE TABLE") {
                dify_column_types(statement, DIFY_MYSQL_TYPES)
            } else {
                dify_column_types(statement, &DIFY_MYSQL_TYPES[4..])
            }
        })
        .collect();
    format!(
        "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES'); {}",
        statements.join(";\n")
    )
}

/// Replaces each whole word of `words` in a statement (a `CREATE TABLE` takes every type of
/// [`DIFY_MYSQL_TYPES`], others only the quoted `key`). String literals hold no such word here.
fn dify_column_types(statement: &str, words: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(statement.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match words.iter().find(|(pg, _)| *pg == word.as_str()) {
            Some((_, mysql)) => out.push_str(mysql),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in statement.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

impl TestDb {
    pub(super) async fn mysql_connection(&self) -> MySqlConnection {
        MySqlConnection::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.url))
    }
}

/// The server's URL when the MySQL tests are to run; says they were skipped otherwise.
pub fn server_url(test: &str) -> Option<String> {
    let url = std::env::var(MYSQL_URL_VAR).ok();
    if url.is_none() {
        eprintln!("{test}: MySQL test skipped ({MYSQL_URL_VAR} is not set)");
    }
    url
}

/// `base` (a `mysql://…/db` URL) naming the database `name` instead.
fn with_database(base: &str, name: &str) -> String {
    let (without_query, query) = match base.split_once('?') {
        Some((url, query)) => (url, format!("?{query}")),
        None => (base, String::new()),
    };
    let after_scheme = without_query.find("://").map_or(0, |i| i + 3);
    let server = match without_query[after_scheme..].find('/') {
        Some(slash) => &without_query[..after_scheme + slash],
        None => without_query,
    };
    format!("{server}/{name}{query}")
}

/// Runs `body` on a fresh database of the MySQL server (utf8mb4, a case-insensitive collation as
/// a default install has), dropped afterwards (also when the body panics), then leaves the
/// test's marker. Does nothing without `MEMSCOPE_TEST_MYSQL_URL`.
pub async fn run_mysql<F, Fut>(test: &str, body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(base_url) = server_url(test) else {
        return;
    };
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let stem: String = test
        .rsplit("::")
        .next()
        .unwrap_or(test)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let name = format!(
        "mst_{stem}_{}_{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = MySqlConnection::connect(&base_url)
        .await
        .unwrap_or_else(|e| panic!("{MYSQL_URL_VAR}={base_url} is set but unreachable: {e}"));
    sqlx::raw_sql(AssertSqlSafe(format!(
        "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    )))
    .execute(&mut admin)
    .await
    .unwrap_or_else(|e| panic!("creating database {name}: {e}"));
    let outcome = tokio::spawn(body(TestDb {
        backend: Backend::Mysql,
        url: with_database(&base_url, &name),
        _dir: None,
    }))
    .await;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("dropping database {name}: {e}"));
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
    if let Ok(dir) = std::env::var(MYSQL_MARKER_DIR_VAR) {
        std::fs::create_dir_all(&dir).expect("marker directory");
        std::fs::write(
            std::path::Path::new(&dir).join(test.replace("::", "-")),
            "ran\n",
        )
        .expect("marker file");
    }
}

/// `mysqldump` of the database a `mysql://user@host:port/db` URL names (no password), without
/// its date line: equal dumps mean nothing was written.
pub fn dump(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split('?').next().unwrap_or(rest);
    let (user, rest) = rest.split_once('@').unwrap_or(("root", rest));
    let (server, database) = rest.split_once('/').expect("a database in the URL");
    let (host, port) = server.split_once(':').unwrap_or((server, "3306"));
    let output = std::process::Command::new("mysqldump")
        .args([
            "--skip-dump-date",
            "-h",
            host,
            "-P",
            port,
            "-u",
            user,
            database,
        ])
        .output()
        .expect("mysqldump runs");
    assert!(
        output.status.success(),
        "mysqldump: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("a UTF-8 dump")
}

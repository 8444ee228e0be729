//! MySQL and MariaDB (and the servers that speak their protocol): the session every connection
//! opens, the one direct connection opening probes with, and the pool. memscope reads Dify's
//! tables there, and those of the sources that say they read theirs (`read_on_mysql`); it never
//! creates its own schema on MySQL, so every session is read-only.

use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlConnection, MySqlPool, MySqlPoolOptions};
use sqlx::{ConnectOptions, Connection};

use super::error::StoreError;

/// What every session runs first. `ANSI_QUOTES` and `NO_BACKSLASH_ESCAPES` make the quoting of
/// memscope's PostgreSQL-syntax queries mean the same here (sqlx adds `PIPES_AS_CONCAT`), and
/// the session is read-only: the server itself refuses a write.
const SESSION_SETUP: &[&str] = &[
    "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES,NO_BACKSLASH_ESCAPES')",
    "SET SESSION TRANSACTION READ ONLY",
];

const POOL_SIZE: u32 = 5;

fn options(url: &str, redacted: &str) -> Result<MySqlConnectOptions, StoreError> {
    let url = match url.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => url.to_owned(),
    };
    MySqlConnectOptions::from_str(&url)
        .map(|options| options.charset("utf8mb4"))
        .map_err(|_| StoreError::BadUrl {
            url: redacted.to_owned(),
        })
}

async fn set_up(conn: &mut MySqlConnection) -> Result<(), sqlx::Error> {
    for &statement in SESSION_SETUP {
        sqlx::query(statement).execute(&mut *conn).await?;
    }
    Ok(())
}

fn unreachable(redacted: &str, source: sqlx::Error) -> StoreError {
    StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    }
}

/// One read-only connection outside any pool, failing at once on an unreachable server.
pub(super) async fn connect_directly(
    url: &str,
    redacted: &str,
    timeout: Duration,
) -> Result<MySqlConnection, StoreError> {
    let options = options(url, redacted)?;
    let mut conn = tokio::time::timeout(timeout, options.connect())
        .await
        .map_err(|_| {
            unreachable(
                redacted,
                sqlx::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {} s", timeout.as_secs()),
                )),
            )
        })?
        .map_err(|e| unreachable(redacted, e))?;
    set_up(&mut conn)
        .await
        .map_err(|e| unreachable(redacted, e))?;
    Ok(conn)
}

/// The read-only pool.
pub(super) async fn connect_pool(
    url: &str,
    redacted: &str,
    timeout: Duration,
) -> Result<MySqlPool, StoreError> {
    MySqlPoolOptions::new()
        .max_connections(POOL_SIZE)
        .acquire_timeout(timeout)
        .after_connect(|conn, _| Box::pin(set_up(conn)))
        .connect_with(options(url, redacted)?)
        .await
        .map_err(|e| unreachable(redacted, e))
}

/// Closes a probe's connection.
pub(super) async fn close(conn: MySqlConnection, redacted: &str) -> Result<(), StoreError> {
    conn.close().await.map_err(|e| unreachable(redacted, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::mysql_url::is_mysql_url;

    #[test]
    fn mysql_and_mariadb_urls_are_recognised() {
        assert!(is_mysql_url("mysql://root@127.0.0.1:3306/dify"));
        assert!(is_mysql_url("mariadb://root@db/dify"));
        assert!(!is_mysql_url("postgres://u@h/db"));
        assert!(options("mariadb://root@db:3307/dify", "x").is_ok());
    }
}

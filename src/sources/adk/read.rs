//! The reads, on ADK's session tables as each service writes them, each as the service's own
//! `get_session` loads them:
//! - `SqliteSessionService` (`.adk/session.db`): `event_data` JSON text, `timestamp` a REAL of
//!   seconds; events `ORDER BY timestamp, rowid` (ties in append order).
//! - `DatabaseSessionService` (schema 1, `adk_internal_metadata`): `event_data` JSON (JSONB on
//!   PostgreSQL, `LONGTEXT` on MySQL and MariaDB), `timestamp` a date-time (`DATETIME(6)` on
//!   MySQL), naive UTC; events `ORDER BY timestamp, id`, which on MySQL compares ids under the
//!   column's collation, as ADK's own query there does.
//! - the database service's old schema: separate columns, `actions` a Python pickle, which
//!   memscope never loads; the rest is read.
//!
//! Each query is written once in PostgreSQL syntax and read on every backend: its text is each
//! database's (`CAST(… AS TEXT)` is MySQL's `CAST(… AS CHAR)`), and it uses its parameters in
//! order, each once, so MySQL's positional ones bind as the others do.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::{Map, Value as Json};

use super::event::{self, Event};
use super::glance::Glance;
use crate::sources::conversation::SourceError;
use crate::store::Store;
use crate::store::pool::{DbPool, on_pool};

/// Which service wrote the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    SqliteService,
    DatabaseService,
    /// The database service's schema before 1.22: `actions` pickled.
    Pickled,
}

impl Layout {
    pub fn of(store: &Store) -> Layout {
        if !store.catalog.has_column("events", "event_data") {
            Layout::Pickled
        } else if store.has_table("adk_internal_metadata")
            || !matches!(store.pool, DbPool::Sqlite(..))
        {
            Layout::DatabaseService
        } else {
            Layout::SqliteService
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Layout::SqliteService => "SqliteSessionService",
            Layout::DatabaseService => "DatabaseSessionService",
            Layout::Pickled => "DatabaseSessionService, old schema (actions pickled)",
        }
    }
}

/// A session's key: ADK keeps each under an app and a user.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, sqlx::FromRow)]
pub struct Key {
    pub app_name: String,
    pub user_id: String,
    pub id: String,
}

/// An instant as a session table keeps it: seconds (the SQLite service's REAL) or a date-time
/// text (the database service's, UTC).
pub fn instant(text: Option<&str>) -> Option<DateTime<Utc>> {
    let text = text?.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return seconds_instant(seconds);
    }
    let text = text.trim_end_matches("+00").trim_end_matches("+00:00");
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .map(|at| at.and_utc())
}

/// A date-time column's instant as seconds, as ADK's `utc_datetime_to_timestamp` gives it.
fn seconds_of(text: Option<&str>) -> f64 {
    instant(text).map_or(0.0, |at| at.timestamp_micros() as f64 / 1e6)
}

pub fn seconds_instant(seconds: f64) -> Option<DateTime<Utc>> {
    if !seconds.is_finite() {
        return None;
    }
    DateTime::from_timestamp_micros((seconds * 1e6).round() as i64)
}

/// The sessions with this id, by app and user.
pub async fn keys_of(store: &Store, id: &str) -> Result<Vec<Key>, SourceError> {
    const KEYS: &str = "SELECT app_name, user_id, id FROM sessions WHERE id = $1 \
         ORDER BY app_name, user_id";
    Ok(on_pool!(store.pool, KEYS, |pool, sql| sqlx::query_as(sql)
        .bind(id)
        .fetch_all(pool)
        .await)
    .map_err(|e| store.query_failed(e))?)
}

/// What a session's events read as: each event ADK loads, and the rows it could not.
#[derive(Debug, Default)]
pub struct Loaded {
    pub events: Vec<Event>,
    /// Rows whose event is not JSON ADK can load: ADK fails on the session.
    pub unreadable: Vec<String>,
    /// Rows of the old schema whose `actions` is a pickle memscope did not load.
    pub pickled: usize,
}

type JsonRow = (String, Option<String>, Option<String>);
type OldRow = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
);

/// Every event of the session, oldest first, as the session's service loads them.
pub async fn events(store: &Store, key: &Key) -> Result<Loaded, SourceError> {
    let Some(rows) = stored_events(store, key).await? else {
        return old_events(store, key).await;
    };
    let mut loaded = Loaded::default();
    for (id, data, at) in rows {
        match Event::decode(loaded.events.len(), &data, at) {
            Some(event) => loaded.events.push(event),
            None => loaded.unreadable.push(id),
        }
    }
    Ok(loaded)
}

/// What the sessions list shows of a session's events: a glance at each event ADK can load,
/// and how many it could not.
#[derive(Debug, Default)]
pub struct Glanced {
    pub glances: Vec<Glance>,
    pub unreadable: usize,
}

/// A glance at every event of the session: what [`events`] reads, without building them.
pub async fn glances(store: &Store, key: &Key) -> Result<Glanced, SourceError> {
    let Some(rows) = stored_events(store, key).await? else {
        let loaded = old_events(store, key).await?;
        return Ok(Glanced {
            glances: loaded
                .events
                .iter()
                .map(|event| Glance {
                    author: event.author.clone(),
                    transfer_to: event.transfer_to().map(str::to_owned),
                })
                .collect(),
            unreadable: loaded.unreadable.len(),
        });
    };
    let mut glanced = Glanced::default();
    for (_, data, _) in rows {
        match Glance::of(&data) {
            Some(glance) => glanced.glances.push(glance),
            None => glanced.unreadable += 1,
        }
    }
    Ok(glanced)
}

/// The session's stored events, oldest first, as `(id, event_data, seconds)`; `None` on the
/// old schema, whose events are separate columns.
async fn stored_events(
    store: &Store,
    key: &Key,
) -> Result<Option<Vec<(String, String, f64)>>, SourceError> {
    let layout = Layout::of(store);
    let rows: Vec<(String, String, f64)> = match layout {
        Layout::SqliteService => {
            const SQLITE: &str = "SELECT id, event_data, CAST(timestamp AS TEXT) FROM events \
                 WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 \
                 ORDER BY timestamp ASC, rowid ASC";
            let Some(pool) = store.sqlite_pool() else {
                return Err(SourceError::failure(
                    "SqliteSessionService keeps a SQLite file",
                ));
            };
            let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(SQLITE)
                .bind(&key.app_name)
                .bind(&key.user_id)
                .bind(&key.id)
                .fetch_all(pool)
                .await
                .map_err(|e| store.query_failed(e))?;
            rows.into_iter()
                .map(|(id, data, at)| (id, data, at.and_then(|t| t.parse().ok()).unwrap_or(0.0)))
                .collect()
        }
        Layout::DatabaseService => {
            const DATABASE: &str = "SELECT id, CAST(event_data AS TEXT), \
                 CAST(timestamp AS TEXT) FROM events \
                 WHERE app_name = $1 AND user_id = $2 AND session_id = $3 \
                 ORDER BY timestamp ASC, id ASC";
            let rows: Vec<JsonRow> =
                on_pool!(store.pool, DATABASE, |pool, sql| sqlx::query_as(sql)
                    .bind(&key.app_name)
                    .bind(&key.user_id)
                    .bind(&key.id)
                    .fetch_all(pool)
                    .await)
                .map_err(|e| store.query_failed(e))?;
            // The JSON's own timestamp wins, as in ADK's `to_event`; the column is the fallback.
            rows.into_iter()
                .map(|(id, data, at)| (id, data.unwrap_or_default(), seconds_of(at.as_deref())))
                .collect()
        }
        Layout::Pickled => return Ok(None),
    };
    Ok(Some(rows))
}

async fn old_events(store: &Store, key: &Key) -> Result<Loaded, SourceError> {
    const OLD: &str = "SELECT id, invocation_id, author, branch, CAST(timestamp AS TEXT), \
         CAST(content AS TEXT), CAST(usage_metadata AS TEXT), long_running_tool_ids_json, \
         (actions IS NOT NULL) FROM events WHERE app_name = $1 AND user_id = $2 \
         AND session_id = $3 ORDER BY timestamp ASC, id ASC";
    let rows: Vec<OldRow> = on_pool!(store.pool, OLD, |pool, sql| sqlx::query_as(sql)
        .bind(&key.app_name)
        .bind(&key.user_id)
        .bind(&key.id)
        .fetch_all(pool)
        .await)
    .map_err(|e| store.query_failed(e))?;
    let mut loaded = Loaded::default();
    for (id, invocation, author, branch, at, content, usage, long_running, pickled) in rows {
        loaded.pickled += usize::from(pickled);
        let seconds = seconds_of(at.as_deref());
        let data = event::from_columns(
            &id,
            &invocation,
            &author,
            branch.as_deref(),
            seconds,
            content.as_deref(),
            usage.as_deref(),
            long_running.as_deref(),
        );
        match Event::decode(loaded.events.len(), &data, seconds) {
            Some(event) => loaded.events.push(event),
            None => loaded.unreadable.push(id),
        }
    }
    Ok(loaded)
}

/// A state column's JSON object; an empty one when there is none.
fn state_of(text: Option<String>) -> Map<String, Json> {
    text.and_then(|t| serde_json::from_str::<Json>(&t).ok())
        .and_then(|v| match v {
            Json::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
}

/// The session's state as the app sees it: the session's keys, then `app:` keys from
/// `app_states` and `user:` keys from `user_states`, each named as ADK names it.
pub async fn state(store: &Store, key: &Key) -> Result<Map<String, Json>, SourceError> {
    const SESSION: &str = "SELECT CAST(state AS TEXT) FROM sessions \
         WHERE app_name = $1 AND user_id = $2 AND id = $3";
    const APP: &str = "SELECT CAST(state AS TEXT) FROM app_states WHERE app_name = $1";
    const USER: &str = "SELECT CAST(state AS TEXT) FROM user_states \
         WHERE app_name = $1 AND user_id = $2";
    let session: Option<Option<String>> = on_pool!(store.pool, SESSION, |pool, sql| {
        sqlx::query_scalar(sql)
            .bind(&key.app_name)
            .bind(&key.user_id)
            .bind(&key.id)
            .fetch_optional(pool)
            .await
    })
    .map_err(|e| store.query_failed(e))?;
    let app: Option<Option<String>> = on_pool!(store.pool, APP, |pool, sql| {
        sqlx::query_scalar(sql)
            .bind(&key.app_name)
            .fetch_optional(pool)
            .await
    })
    .map_err(|e| store.query_failed(e))?;
    let user: Option<Option<String>> = on_pool!(store.pool, USER, |pool, sql| {
        sqlx::query_scalar(sql)
            .bind(&key.app_name)
            .bind(&key.user_id)
            .fetch_optional(pool)
            .await
    })
    .map_err(|e| store.query_failed(e))?;
    let mut merged = state_of(session.flatten());
    for (prefix, state) in [("app:", app.flatten()), ("user:", user.flatten())] {
        for (name, value) in state_of(state) {
            merged.insert(format!("{prefix}{name}"), value);
        }
    }
    Ok(merged)
}

/// One page of sessions, most recently updated first.
pub async fn page(
    store: &Store,
    pattern: &str,
    app: Option<&str>,
    user: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<(Key, Option<String>)>, SourceError> {
    // Each filter's value twice, as two parameters: MySQL binds by position.
    const PAGE: &str = "SELECT app_name, user_id, id, CAST(update_time AS TEXT) FROM sessions \
         WHERE lower(id) LIKE $1 ESCAPE '\\' AND ($2 = '' OR app_name = $3) \
         AND ($4 = '' OR user_id = $5) \
         ORDER BY update_time DESC, app_name, user_id, id LIMIT $6 OFFSET $7";
    let rows: Vec<(String, String, String, Option<String>)> =
        on_pool!(store.pool, PAGE, |pool, sql| sqlx::query_as(sql)
            .bind(pattern)
            .bind(app.unwrap_or(""))
            .bind(app.unwrap_or(""))
            .bind(user.unwrap_or(""))
            .bind(user.unwrap_or(""))
            .bind(limit)
            .bind(offset)
            .fetch_all(pool)
            .await)
        .map_err(|e| store.query_failed(e))?;
    Ok(rows
        .into_iter()
        .map(|(app_name, user_id, id, updated)| {
            (
                Key {
                    app_name,
                    user_id,
                    id,
                },
                updated,
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::instant;

    #[test]
    fn instants_read_as_each_service_writes_them() {
        let seconds = instant(Some("1795900364.09867")).unwrap();
        assert_eq!(seconds.timestamp(), 1_795_900_364);
        assert_eq!(seconds.timestamp_subsec_micros(), 98_670);
        let datetime = instant(Some("2026-11-28 21:13:00.948564")).unwrap();
        assert_eq!(datetime.to_rfc3339(), "2026-11-28T21:13:00.948564+00:00");
        let with_zone = instant(Some("2026-11-28 21:13:00.948564+00")).unwrap();
        assert_eq!(with_zone, datetime);
        assert_eq!(instant(Some("not a time")), None);
        assert_eq!(instant(None), None);
    }
}

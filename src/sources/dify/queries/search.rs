//! Conversation search: which conversations a search text matches, through an index on message
//! text where memscope's own schema has one, else by scanning the messages.
//!
//! Every path matches the same thing: the text, case-insensitively (`LOWER(…) LIKE`), anywhere
//! in a conversation's name, its app's name or one of its messages' query or answer, or as a
//! prefix of its id. The indexes only narrow down which messages the `LIKE` is tried on:
//! - SQLite: an FTS5 trigram table (`messages_fts`) finds the messages holding every trigram of
//!   the text, folded for case, anywhere in the row; each candidate is re-checked with the
//!   `LIKE`.
//! - PostgreSQL: pg_trgm GIN indexes on `LOWER(query)` and `LOWER(answer)` serve the `LIKE`
//!   itself.
//!
//! Texts shorter than three characters have no trigram, and a database without the index (Dify's
//! own, or a PostgreSQL server without pg_trgm) has none at all: those searches scan. A scan
//! walks the conversations newest first and yields each match as it finds it, so
//! [`Store::stream_conversations`] hands rows over before the scan ends, and dropping its future
//! stops it (on SQLite the statement itself is interrupted).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::TryStreamExt;
use serde::Serialize;

use super::conversations::{ConversationFilter, ConversationSummary};
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::ids::{canonical_uuid, like_escape};
use crate::store::pool::DbPool;

/// The `memscope_meta` key the search migration writes: which index message text has.
const META_KEY: &str = "message_search";

/// Characters of a trigram: shorter texts cannot use a trigram index.
const TRIGRAM: usize = 3;

/// The index a database keeps on message text for search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextIndex {
    /// SQLite's FTS5 trigram table `messages_fts`.
    Fts5Trigram,
    /// PostgreSQL's pg_trgm GIN indexes on the lowercased text.
    PgTrigram,
}

impl TextIndex {
    pub fn label(self) -> &'static str {
        match self {
            TextIndex::Fts5Trigram => "FTS5 trigram index",
            TextIndex::PgTrigram => "pg_trgm trigram indexes",
        }
    }
}

/// How one search reaches message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchPath {
    /// No search text: the plain list.
    List,
    Indexed(TextIndex),
    /// Every message of every conversation is read until a page is full.
    Scan,
}

impl SearchPath {
    pub fn is_scan(self) -> bool {
        self == SearchPath::Scan
    }
}

/// The bound values of a list query, computed once from a filter.
struct ListQuery {
    path: SearchPath,
    sql: &'static str,
    app_id: Option<String>,
    contains: Option<String>,
    prefix: Option<String>,
    after_time: Option<chrono::NaiveDateTime>,
    after_id: Option<String>,
    limit: i64,
    include_deleted: bool,
    /// The FTS5 query (`$8`), only on the SQLite indexed path.
    fts_match: Option<String>,
}

/// Trigrams an FTS5 query asks for at most: any of a text's trigrams narrow the candidates
/// (the `LIKE` decides), and a few dozen already leave next to none.
const MAX_TRIGRAMS: usize = 32;

/// The FTS5 query for the rows holding every trigram of `text` (each quoted, quotes doubled).
/// The index keeps no positions, so it cannot match the text as a phrase; the `LIKE` re-check
/// does that.
fn fts_trigrams(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut seen = std::collections::HashSet::new();
    let terms: Vec<String> = chars
        .windows(TRIGRAM)
        .map(|w| w.iter().collect::<String>())
        .filter(|t| seen.insert(t.clone()))
        .take(MAX_TRIGRAMS)
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    terms.join(" AND ")
}

impl Store {
    /// The index this database keeps on message text, if any (set by the schema version 5
    /// migration; a database memscope did not create has none and is never given one).
    pub fn text_index(&self) -> Option<TextIndex> {
        match self.catalog.meta.get(META_KEY).map(String::as_str) {
            Some("fts5-trigram") if self.has_table("messages_fts") => Some(TextIndex::Fts5Trigram),
            Some("trigram") => Some(TextIndex::PgTrigram),
            _ => None,
        }
    }

    /// How searching with `search` reaches message text here.
    pub fn search_path(&self, search: Option<&str>) -> SearchPath {
        let Some(text) = search.map(str::trim).filter(|s| !s.is_empty()) else {
            return SearchPath::List;
        };
        // The index is asked for the lowercased text, as the LIKE pattern is built from it.
        match self.text_index() {
            Some(index) if text.to_lowercase().chars().count() >= TRIGRAM => {
                SearchPath::Indexed(index)
            }
            _ => SearchPath::Scan,
        }
    }

    fn list_query(&self, filter: &ConversationFilter) -> Option<ListQuery> {
        let app_id = match filter.app_id.as_deref() {
            Some(id) => Some(canonical_uuid(id)?),
            None => None,
        };
        let text = filter
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let lowered = text.map(str::to_lowercase);
        let pattern = lowered.as_deref().map(like_escape);
        let path = self.search_path(text);
        // FTS5 folds case itself, but only the lowercased text finds every row the LIKE does:
        // SQLite's LIKE ignores case for ASCII letters only, so other letters must match as
        // the pattern spells them.
        let (sql, fts_match) = match path {
            SearchPath::List | SearchPath::Scan => (SCAN_SQL, None),
            SearchPath::Indexed(TextIndex::PgTrigram) => (PG_TRIGRAM_SQL, None),
            SearchPath::Indexed(TextIndex::Fts5Trigram) => {
                (FTS5_SQL, lowered.as_deref().map(fts_trigrams))
            }
        };
        let (after_time, after_id) = match &filter.after {
            Some(cursor) => (Some(cursor.updated_at), Some(cursor.id.clone())),
            None => (None, None),
        };
        Some(ListQuery {
            path,
            sql,
            app_id,
            contains: pattern.as_ref().map(|s| format!("%{s}%")),
            prefix: pattern.as_ref().map(|s| format!("{s}%")),
            after_time,
            after_id,
            limit: filter.limit.max(0),
            include_deleted: filter.include_deleted,
            fts_match,
        })
    }

    /// Conversations newest first (`updated_at DESC, id DESC`), one page at a time, each handed
    /// to `row` as the database finds it. Returns the path the search took.
    pub async fn stream_conversations(
        &self,
        filter: &ConversationFilter,
        mut row: impl FnMut(ConversationSummary) + Send,
    ) -> Result<SearchPath, StoreError> {
        let Some(q) = self.list_query(filter) else {
            return Ok(self.search_path(filter.search.as_deref()));
        };
        macro_rules! bound {
            ($sql:expr) => {{
                let mut query = sqlx::query_as::<_, ConversationSummary>($sql)
                    .bind(&q.app_id)
                    .bind(&q.contains)
                    .bind(&q.prefix)
                    .bind(q.after_time)
                    .bind(&q.after_id)
                    .bind(q.limit)
                    .bind(q.include_deleted);
                if let Some(fts) = &q.fts_match {
                    query = query.bind(fts);
                }
                query
            }};
        }
        let failed = |e| self.query_failed(e);
        match &self.pool {
            DbPool::Sqlite(pool, dialect) => {
                let sql = crate::store::sql::dialect_text(*dialect, q.sql);
                let mut conn = Interruptible::acquire(pool).await.map_err(failed)?;
                let mut rows = bound!(sql).fetch(&mut **conn.connection());
                while let Some(found) = rows.try_next().await.map_err(failed)? {
                    row(found);
                }
                drop(rows);
                conn.finish().await.map_err(failed)?;
            }
            DbPool::Postgres(pool, dialect) => {
                let sql = crate::store::sql::dialect_text(*dialect, q.sql);
                let mut rows = bound!(sql).fetch(pool);
                while let Some(found) = rows.try_next().await.map_err(failed)? {
                    row(found);
                }
            }
            // MySQL binds by position: the parameters in the order its text reads them.
            DbPool::Mysql(pool, dialect) => {
                let sql = crate::store::sql::dialect_text(*dialect, q.sql);
                let mut query = sqlx::query_as::<_, ConversationSummary>(sql);
                for n in crate::store::mysql_text::bind_order(q.sql) {
                    query = match n {
                        1 => query.bind(&q.app_id),
                        2 => query.bind(&q.contains),
                        3 => query.bind(&q.prefix),
                        4 => query.bind(q.after_time),
                        5 => query.bind(&q.after_id),
                        6 => query.bind(q.limit),
                        _ => query.bind(q.include_deleted),
                    };
                }
                let mut rows = query.fetch(pool);
                while let Some(found) = rows.try_next().await.map_err(failed)? {
                    row(found);
                }
            }
        }
        Ok(q.path)
    }
}

/// A pooled SQLite connection whose statements stop when the future using it is dropped: a
/// progress handler checks a flag the drop sets. A connection dropped mid-statement is closed,
/// not returned to the pool, since its handler would stop every later statement too.
struct Interruptible {
    conn: Option<sqlx::pool::PoolConnection<sqlx::Sqlite>>,
    stop: Arc<AtomicBool>,
}

/// Virtual machine steps between two looks at the flag: well under a millisecond of work.
const STEPS_PER_CHECK: i32 = 10_000;

impl Interruptible {
    async fn acquire(pool: &sqlx::SqlitePool) -> Result<Interruptible, sqlx::Error> {
        let mut conn = pool.acquire().await?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        conn.lock_handle()
            .await?
            .set_progress_handler(STEPS_PER_CHECK, move || !flag.load(Ordering::Relaxed));
        Ok(Interruptible {
            conn: Some(conn),
            stop,
        })
    }

    fn connection(&mut self) -> &mut sqlx::pool::PoolConnection<sqlx::Sqlite> {
        self.conn.as_mut().expect("held until finished or dropped")
    }

    /// The statement ran to its end: the handler goes and the connection back to the pool.
    async fn finish(mut self) -> Result<(), sqlx::Error> {
        if let Some(mut conn) = self.conn.take() {
            // Fewer than one step disables the handler.
            conn.lock_handle().await?.set_progress_handler(0, || true);
        }
        Ok(())
    }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.stop.store(true, Ordering::Relaxed);
            drop(conn.detach());
        }
    }
}

/// The list query; `$search` is the condition a conversation must meet for the search text:
/// `$2` is the `LIKE` pattern for names and message text, `$3` the one for an id prefix.
macro_rules! list_sql {
    ($($search:tt)+) => {
        concat!(
            "SELECT c.id::text AS id, c.name, c.app_id::text AS app_id, a.name AS app_name, \
                    a.mode AS app_mode, c.mode, \
                    (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) \
                        AS message_count, \
                    COALESCE((SELECT MAX(m.created_at) FROM messages m \
                              WHERE m.conversation_id = c.id), c.updated_at) AS last_activity, \
                    c.updated_at, c.is_deleted AS is_deleted \
             FROM conversations c LEFT JOIN apps a ON a.id = c.app_id \
             WHERE ($7::boolean OR NOT c.is_deleted) \
               AND ($1::text IS NULL OR c.app_id = $1::uuid) \
               AND ",
            $($search)+,
            " AND ($4::timestamp IS NULL OR (c.updated_at, c.id) < ($4::timestamp, $5::uuid)) \
             ORDER BY c.updated_at DESC, c.id DESC \
             LIMIT $6"
        )
    };
}

/// The search through an index: the set of matching conversations is found first, by name,
/// id, app name and (`$messages`, a query of conversation ids) message text, so a search
/// matching nothing reads no conversation row; the list is built from that set.
macro_rules! indexed_search {
    ($messages:literal) => {
        concat!(
            "c.id IN (\
                SELECT n.id FROM conversations n \
                WHERE LOWER(n.name) LIKE $2 ESCAPE '\\' OR n.id::text LIKE $3 ESCAPE '\\' \
                UNION SELECT n.id FROM conversations n JOIN apps an ON an.id = n.app_id \
                WHERE LOWER(an.name) LIKE $2 ESCAPE '\\' \
                UNION ",
            $messages,
            ")"
        )
    };
}

/// Walks the conversations newest first, testing each one's name, id, app name and messages:
/// rows come out as the walk finds them. Also the plain list (`$2` NULL).
const SCAN_SQL: &str = list_sql!(
    "($2::text IS NULL \
      OR LOWER(c.name) LIKE $2 ESCAPE '\\' \
      OR c.id::text LIKE $3 ESCAPE '\\' \
      OR LOWER(a.name) LIKE $2 ESCAPE '\\' \
      OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id \
                 AND (LOWER(m.query) LIKE $2 ESCAPE '\\' OR LOWER(m.answer) LIKE $2 ESCAPE '\\')))"
);

/// The messages whose lowercased text matches, found by the trigram indexes themselves.
const PG_TRIGRAM_SQL: &str = list_sql!(indexed_search!(
    "SELECT m.conversation_id FROM messages m \
     WHERE LOWER(m.query) LIKE $2 ESCAPE '\\' OR LOWER(m.answer) LIKE $2 ESCAPE '\\'"
));

/// The messages FTS5 names as candidates (`$8`), re-checked by `LIKE`.
const FTS5_SQL: &str = list_sql!(indexed_search!(
    "SELECT m.conversation_id FROM messages m \
     WHERE m.rowid IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH $8) \
       AND (LOWER(m.query) LIKE $2 ESCAPE '\\' OR LOWER(m.answer) LIKE $2 ESCAPE '\\')"
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_queries_ask_for_each_distinct_trigram_quoted() {
        assert_eq!(fts_trigrams("abcab"), "\"abc\" AND \"bca\" AND \"cab\"");
        assert_eq!(fts_trigrams("aaaa"), "\"aaa\"");
        assert_eq!(fts_trigrams("a\"b"), "\"a\"\"b\"");
        assert_eq!(fts_trigrams("é%_"), "\"é%_\"");
        let long: String = ('a'..='z').chain('A'..='Z').collect();
        assert_eq!(
            fts_trigrams(&long).matches(" AND ").count(),
            MAX_TRIGRAMS - 1
        );
    }

    #[test]
    fn each_path_has_its_message_clause() {
        assert!(SCAN_SQL.contains("EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id"));
        assert!(PG_TRIGRAM_SQL.contains("UNION SELECT m.conversation_id FROM messages m"));
        assert!(FTS5_SQL.contains("messages_fts MATCH $8"));
        assert!(!SCAN_SQL.contains("$8") && !PG_TRIGRAM_SQL.contains("$8"));
    }
}

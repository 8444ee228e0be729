//! One SQL text per query. Queries are written in PostgreSQL syntax, with explicit casts where a
//! `uuid` column meets a text parameter or is selected as text; SQLite stores those columns as
//! TEXT, so its text is the same query with the casts stripped.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

pub use super::casts::strip_casts;
use super::profile::Dialect;

/// The text of a static PostgreSQL query in a dialect, computed once and kept for the process so
/// it is `&'static str` (sqlx's `SqlSafeStr`) and sqlx's statement cache sees one text per query.
pub fn dialect_text(dialect: Dialect, postgres_sql: &'static str) -> &'static str {
    if dialect.is_verbatim() {
        return postgres_sql;
    }
    static CACHE: LazyLock<Mutex<HashMap<(Dialect, &'static str), &'static str>>> =
        LazyLock::new(Default::default);
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry((dialect, postgres_sql))
        .or_insert_with(|| Box::leak(dialect.text(postgres_sql).into_boxed_str()))
}

/// The SQLite text of a query on memscope's or Dify's tables.
pub fn sqlite_text(postgres_sql: &'static str) -> &'static str {
    dialect_text(
        Dialect::verbatim(super::catalog::Backend::Sqlite),
        postgres_sql,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_are_removed() {
        assert_eq!(
            strip_casts("SELECT id::text FROM m WHERE conversation_id = $1::uuid"),
            "SELECT id FROM m WHERE conversation_id = $1"
        );
    }

    #[test]
    fn array_casts_and_typed_widths_are_removed() {
        assert_eq!(
            strip_casts("x = ANY($1::uuid[]) AND n::bigint > 0 AND t < $2::timestamptz"),
            "x = ANY($1) AND n > 0 AND t < $2"
        );
    }

    #[test]
    fn string_literals_are_kept() {
        assert_eq!(
            strip_casts("SELECT 'a::b', 'it''s::x', c::text"),
            "SELECT 'a::b', 'it''s::x', c"
        );
    }

    #[test]
    fn text_without_casts_is_unchanged() {
        let sql = "SELECT a, b FROM t WHERE a = $1 AND b LIKE '%:%' ORDER BY a";
        assert_eq!(strip_casts(sql), sql);
    }

    #[test]
    fn sqlite_text_is_cached() {
        let first = sqlite_text("SELECT $1::uuid");
        let second = sqlite_text("SELECT $1::uuid");
        assert_eq!(first, "SELECT $1");
        assert!(std::ptr::eq(first, second));
    }
}

//! Ids in queries: UUIDs as the database stores them, a typed id or prefix resolved to one id,
//! `LIKE` patterns, and the fixed-length `IN (…)` lists that batch reads bind their ids into.

use std::collections::HashSet;

use sqlx::FromRow;

use crate::store::error::StoreError;
use crate::store::handle::Store;

/// Ids bound per `IN (…)` query. Shorter lists are padded with their first id, so every query
/// has one text and one prepared statement.
pub(crate) const IN_LIST_LEN: usize = 256;

/// `prefix` followed by `($1::uuid, …, $N::uuid)` and `suffix`, for [`IN_LIST_LEN`] ids.
pub(crate) fn in_list_query(prefix: &str, suffix: &str) -> String {
    let placeholders: Vec<String> = (1..=IN_LIST_LEN).map(|n| format!("${n}::uuid")).collect();
    format!("{prefix}({}){suffix}", placeholders.join(", "))
}

/// Ids as the database stores them (lowercase, hyphenated), dropping what is not a UUID: no row
/// can have such an id, and PostgreSQL would reject it in a `::uuid` cast.
pub(crate) fn canonical_uuids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen = HashSet::new();
    ids.into_iter()
        .filter_map(canonical_uuid)
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

pub(crate) fn canonical_uuid(id: &str) -> Option<String> {
    uuid::Uuid::parse_str(id)
        .ok()
        .map(|u| u.hyphenated().to_string())
}

/// What a typed id names: a whole id or any unique prefix of one, as git takes commit ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdMatch {
    One(String),
    Unknown,
    /// Several ids start with the prefix: the first [`ID_CANDIDATES`] of them, sorted.
    Ambiguous(Vec<String>),
}

/// How many candidates an ambiguous prefix names.
pub const ID_CANDIDATES: usize = 5;

impl IdMatch {
    /// The match for ids found by a prefix query asking for one more than [`ID_CANDIDATES`].
    pub(crate) fn from_found(mut ids: Vec<String>) -> IdMatch {
        match ids.len() {
            0 => IdMatch::Unknown,
            1 => IdMatch::One(ids.remove(0)),
            _ => {
                ids.truncate(ID_CANDIDATES);
                IdMatch::Ambiguous(ids)
            }
        }
    }
}

/// The `LIKE` pattern for the ids starting with `text`, `None` when no UUID can start so.
pub(crate) fn id_prefix_pattern(text: &str) -> Option<String> {
    let prefix = text.trim().to_ascii_lowercase();
    let uuid_like = !prefix.is_empty()
        && prefix.len() <= 36
        && prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    uuid_like.then(|| format!("{prefix}%"))
}

/// A `LIKE` pattern matching `text` literally (with `\` as the escape character).
pub(crate) fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `ids` (at most [`IN_LIST_LEN`]) padded to [`IN_LIST_LEN`] values by repeating the first: a
/// repeated value does not change an `IN` list's result.
pub(crate) fn padded(ids: &[String]) -> impl Iterator<Item = &String> {
    ids.iter()
        .chain(ids.first().into_iter().cycle())
        .take(IN_LIST_LEN)
}

impl Store {
    /// The rows of `sql`, an [`in_list_query`] text, for every id of `ids`: one query per
    /// [`IN_LIST_LEN`] ids, the last list [`padded`], with `then` bound after the ids when given.
    /// Rows come in the order of the queries, each query's in its own order.
    pub(crate) async fn rows_for_ids<R>(
        &self,
        sql: &'static str,
        ids: &[String],
        then: Option<&str>,
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'r> FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> FromRow<'r, sqlx::postgres::PgRow>
            + for<'r> FromRow<'r, sqlx::mysql::MySqlRow>
            + Send
            + Unpin,
    {
        let mut rows = Vec::new();
        for chunk in ids.chunks(IN_LIST_LEN) {
            let found: Vec<R> = on_pool!(self.pool, sql, |pool, sql| {
                let mut query = sqlx::query_as(sql);
                for id in padded(chunk) {
                    query = query.bind(id);
                }
                if let Some(value) = then {
                    query = query.bind(value);
                }
                query.fetch_all(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
            rows.extend(found);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_literally() {
        assert_eq!(like_escape("50%_off\\"), "50\\%\\_off\\\\");
        assert_eq!(like_escape("plain"), "plain");
    }

    #[test]
    fn uuids_are_canonicalised_deduplicated_and_filtered() {
        let ids = canonical_uuids([
            "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "6f9619ff-8b86-d011-b42d-00c04fc964ff",
            "not-a-uuid",
            "00000000-0000-0000-0000-000000000001",
        ]);
        assert_eq!(
            ids,
            [
                "6f9619ff-8b86-d011-b42d-00c04fc964ff",
                "00000000-0000-0000-0000-000000000001"
            ]
        );
    }

    #[test]
    fn in_list_has_one_placeholder_per_slot() {
        let sql = in_list_query("SELECT 1 WHERE x IN ", " ORDER BY x");
        assert!(sql.starts_with("SELECT 1 WHERE x IN ($1::uuid, $2::uuid, "));
        assert!(sql.ends_with(&format!("${IN_LIST_LEN}::uuid) ORDER BY x")));
        assert_eq!(sql.matches("::uuid").count(), IN_LIST_LEN);
    }

    #[test]
    fn in_lists_are_padded_with_the_first_id() {
        let ids = vec!["a".to_string(), "b".to_string()];
        let values: Vec<&String> = padded(&ids).collect();
        assert_eq!(values.len(), IN_LIST_LEN);
        assert_eq!((values[0], values[1]), (&ids[0], &ids[1]));
        assert!(values[2..].iter().all(|v| *v == "a"));
        let full: Vec<String> = (0..IN_LIST_LEN).map(|i| i.to_string()).collect();
        assert!(padded(&full).eq(full.iter()));
    }
}

//! How memscope's queries reach Langflow's tables: stand-ins for memscope's own memory-base
//! columns, and on SQLite Langflow's compact uuids (32 hex digits, no dashes), read back in the
//! dashed form Langflow prints.

use crate::sources::rewrite::{OwnText, Rewrite};
use crate::store::casts::rewrite_casts;
use crate::store::catalog::Backend;

/// Langflow's text for its tables, as its databases' dialect carries it.
pub const REWRITE: Rewrite = Rewrite::Own(OwnText {
    source: "langflow",
    rewrite,
    compact_ids,
});

/// memscope's own memory-base columns and what stands for them in Langflow's tables, as
/// (column, SQLite text, PostgreSQL text): Langflow's threshold always counts flow runs, and the
/// provider is in the base's knowledge-base row (`model_selection`, matched by owner and name).
type StandIn = (&'static str, &'static str, &'static str);

const COLUMN_STAND_INS: &[StandIn] = &[
    ("mb.threshold_unit", "'runs'", "'runs'"),
    (
        "mb.embedding_provider",
        "coalesce((SELECT json_extract(kb.model_selection, '$.provider') FROM knowledge_base kb \
         WHERE kb.user_id = mb.user_id AND kb.name = mb.kb_name), '')",
        "coalesce((SELECT kb.model_selection->>'provider' FROM knowledge_base kb \
         WHERE kb.user_id = mb.user_id AND kb.name = mb.kb_name), '')",
    ),
];

/// The query's text for Langflow's tables on `backend`.
pub fn rewrite(postgres_sql: &str, backend: Backend) -> String {
    let pick: fn(&StandIn) -> &'static str = match backend {
        Backend::Sqlite => |(_, sqlite, _)| sqlite,
        Backend::Postgres => |(_, _, postgres)| postgres,
        // Langflow runs on neither MySQL nor MariaDB, but both read JSON as SQLite does.
        Backend::Mysql => |(_, sqlite, _)| sqlite,
    };
    let sql = COLUMN_STAND_INS
        .iter()
        .fold(postgres_sql.to_owned(), |sql, entry| {
            sql.replace(entry.0, pick(entry))
        });
    if compact_ids(backend) {
        compact_uuids(&sql)
    } else {
        sql
    }
}

/// Whether Langflow stores uuids as 32 hex digits on `backend`.
pub fn compact_ids(backend: Backend) -> bool {
    backend == Backend::Sqlite
}

/// SQLite text for Langflow's tables: a `$n::uuid` parameter is compared in Langflow's stored
/// form (lowercase, no dashes), an id column read `::text` comes back dashed, other casts go.
/// Columns named `id` or `…_id` are uuids in Langflow's schema (its `session_id` is text, and is
/// never cast).
fn compact_uuids(postgres_sql: &str) -> String {
    rewrite_casts(postgres_sql, rewrite_cast)
}

fn rewrite_cast(operand: &str, cast: &str) -> String {
    let column = operand.rsplit('.').next().unwrap_or(operand);
    let is_id_column = column == "id" || column.ends_with("_id");
    match cast {
        "uuid" if operand.starts_with('$') => format!("replace(lower({operand}), '-', '')"),
        "text" if is_id_column && !operand.starts_with('$') => dashed(operand),
        _ => operand.to_owned(),
    }
}

/// A 32-hex-digit uuid column as Langflow prints it (8-4-4-4-12); any other value unchanged.
fn dashed(column: &str) -> String {
    format!(
        "(CASE WHEN length({column}) = 32 THEN lower(substr({column}, 1, 8) || '-' || \
         substr({column}, 9, 4) || '-' || substr({column}, 13, 4) || '-' || \
         substr({column}, 17, 4) || '-' || substr({column}, 21, 12)) ELSE {column} END)"
    )
}

#[cfg(test)]
#[path = "dialect_tests.rs"]
mod tests;

//! How memscope's queries reach Langflow's tables: stand-ins for memscope's own memory-base
//! columns, and on SQLite Langflow's compact uuids (32 hex digits, no dashes), read back in the
//! dashed form Langflow prints.

use crate::store::casts::rewrite_casts;
use crate::store::catalog::Backend;

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
mod tests {
    use super::*;
    use crate::sources::Rewrite;
    use crate::sources::dify::schema::DifySchema;
    use crate::store::profile::Dialect;

    #[test]
    fn langflow_sqlite_compares_uuid_parameters_compactly_and_reads_them_dashed() {
        let text = Dialect::new(Backend::Sqlite, Rewrite::Langflow)
            .text("SELECT mb.id::text AS id, m.content_blocks::text AS b FROM memory_base mb WHERE mb.flow_id = $1::uuid");
        assert_eq!(
            text,
            format!(
                "SELECT {} AS id, m.content_blocks AS b FROM memory_base mb WHERE mb.flow_id = \
                 replace(lower($1), '-', '')",
                dashed("mb.id")
            )
        );
    }

    #[test]
    fn langflow_has_stand_ins_for_memscopes_own_columns() {
        for backend in [Backend::Sqlite, Backend::Postgres] {
            let dialect = Dialect::new(backend, Rewrite::Langflow);
            let text = dialect.text("SELECT mb.threshold_unit AS u FROM memory_base mb");
            assert_eq!(text, "SELECT 'runs' AS u FROM memory_base mb");
            let text = dialect.text("SELECT mb.embedding_provider FROM memory_base mb");
            assert!(text.contains("model_selection"), "{text}");
        }
        let full = Rewrite::Dify(DifySchema::FULL);
        assert_eq!(
            Dialect::new(Backend::Postgres, full).text("SELECT mb.threshold_unit, x::text"),
            "SELECT mb.threshold_unit, x::text"
        );
        assert_eq!(
            Dialect::new(Backend::Sqlite, full).text("SELECT mb.threshold_unit, x::text"),
            "SELECT mb.threshold_unit, x"
        );
    }

    #[test]
    fn casts_inside_literals_and_on_expressions_are_handled() {
        assert_eq!(
            Dialect::new(Backend::Sqlite, Rewrite::Langflow)
                .text("SELECT 'a::uuid', coalesce(sum(x), 0)::bigint, n::bigint"),
            "SELECT 'a::uuid', coalesce(sum(x), 0), n"
        );
    }
}

use super::*;
use crate::sources::rewrite::Rewrite;
use crate::store::profile::Dialect;

#[test]
fn langflow_sqlite_compares_uuid_parameters_compactly_and_reads_them_dashed() {
    let text = Dialect::new(Backend::Sqlite, REWRITE)
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
        let dialect = Dialect::new(backend, REWRITE);
        let text = dialect.text("SELECT mb.threshold_unit AS u FROM memory_base mb");
        assert_eq!(text, "SELECT 'runs' AS u FROM memory_base mb");
        let text = dialect.text("SELECT mb.embedding_provider FROM memory_base mb");
        assert!(text.contains("model_selection"), "{text}");
    }
    let full = Rewrite::VERBATIM;
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
        Dialect::new(Backend::Sqlite, REWRITE)
            .text("SELECT 'a::uuid', coalesce(sum(x), 0)::bigint, n::bigint"),
        "SELECT 'a::uuid', coalesce(sum(x), 0), n"
    );
}

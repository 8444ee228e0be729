use super::*;
use crate::store::Backend;
use crate::store::profile::{Dialect, Profile};

const DIFY: &[&str] = &[
    "apps",
    "conversations",
    "messages",
    "workflow_runs",
    "workflow_node_executions",
];

fn dify_catalog(messages: &[&str], conversations: &[&str], extra: &[&str]) -> Catalog {
    let mut catalog = Catalog {
        tables: [DIFY, extra]
            .concat()
            .iter()
            .map(|t| t.to_string())
            .collect(),
        ..Catalog::default()
    };
    for (table, columns) in [("messages", messages), ("conversations", conversations)] {
        catalog.columns.insert(
            table.to_owned(),
            columns.iter().map(|c| c.to_string()).collect(),
        );
    }
    catalog
}

#[test]
fn dify_schema_parts_are_read_from_the_columns_and_tables() {
    let catalog = dify_catalog(
        &["id", "agent_based"],
        &["id", "is_deleted"],
        &["message_agent_thoughts"],
    );
    let before_threads =
        Profile::detect(&catalog, Backend::Postgres, crate::sources::SOURCES).unwrap();
    let parts = DifySchema::of(&catalog);
    assert!(!parts.regeneration_threads && !parts.offloaded_outputs && !parts.dialogue_count);
    assert!(parts.deleted_conversations && parts.agent_thoughts);
    assert!(parts.memory_skips_unanswered());
    assert_eq!(
        parts.found(),
        "deleted conversations marked, agent thoughts"
    );
    assert_eq!(
        before_threads.dialect,
        Dialect::new(Backend::Postgres, parts.rewrite())
    );
    let eras = before_threads.schema_eras(&catalog).unwrap();
    assert_eq!(eras.found, parts.found());
    assert_eq!(
        serde_json::to_value(&eras.parts).unwrap(),
        serde_json::json!({
            "regeneration_threads": false, "deleted_conversations": true,
            "offloaded_outputs": false, "dialogue_count": false, "agent_thoughts": true,
            "archived_runs": false, "message_app_mode": false, "agent_sessions": false,
        })
    );

    let newest = dify_catalog(
        &["id", "parent_message_id"],
        &["id", "dialogue_count"],
        &["workflow_node_execution_offload"],
    );
    let parts = DifySchema::of(&newest);
    assert!(parts.regeneration_threads && parts.offloaded_outputs && parts.dialogue_count);
    assert!(!parts.deleted_conversations && !parts.memory_skips_unanswered());
    assert!(!parts.archived_runs && !parts.message_app_mode);
    assert_eq!(
        parts.found(),
        "regeneration threads, offloaded outputs, dialogue counts"
    );

    let archiving = dify_catalog(
        &["id", "parent_message_id", "app_mode"],
        &["id", "dialogue_count"],
        &["workflow_node_execution_offload", "workflow_archive_logs"],
    );
    let parts = DifySchema::of(&archiving);
    assert!(parts.archived_runs && parts.message_app_mode && !parts.agent_sessions);
    assert_eq!(
        parts.found(),
        "regeneration threads, offloaded outputs, dialogue counts, archived workflow runs, \
         message app modes"
    );

    let agent_v2 = dify_catalog(
        &["id", "parent_message_id", "app_mode"],
        &["id", "dialogue_count"],
        &[
            "workflow_node_execution_offload",
            "workflow_archive_logs",
            "agent_runtime_sessions",
        ],
    );
    let parts = DifySchema::of(&agent_v2);
    assert!(parts.agent_sessions);
    assert!(
        parts
            .found()
            .ends_with("message app modes, agent runtime sessions")
    );
    assert!(
        parts
            .behaviours()
            .iter()
            .any(|line| line.contains("reads as archived"))
    );
}

#[test]
fn missing_dify_columns_and_tables_have_stand_ins() {
    let linear = DifySchema {
        regeneration_threads: false,
        offloaded_outputs: false,
        ..DifySchema::FULL
    };
    let sql = "SELECT m.parent_message_id::text AS p FROM messages m \
               LEFT JOIN workflow_node_execution_offload oo ON oo.node_execution_id = e.id";
    assert_eq!(
        Dialect::new(Backend::Postgres, linear.rewrite()).text(sql),
        "SELECT '00000000-0000-0000-0000-000000000000'::text AS p FROM messages m \
         LEFT JOIN (SELECT NULL::uuid AS node_execution_id, NULL::text AS type, \
         NULL::uuid AS file_id WHERE false) oo ON oo.node_execution_id = e.id"
    );
    assert_eq!(
        Dialect::new(Backend::Sqlite, linear.rewrite())
            .text("SELECT m.parent_message_id::text AS p"),
        "SELECT '00000000-0000-0000-0000-000000000000' AS p"
    );
    let unarchived = DifySchema {
        archived_runs: false,
        ..DifySchema::FULL
    };
    assert_eq!(
        Dialect::new(Backend::Postgres, unarchived.rewrite())
            .text("SELECT a.workflow_run_id::text FROM workflow_archive_logs a"),
        "SELECT a.workflow_run_id::text FROM (SELECT NULL::uuid AS workflow_run_id WHERE false) a"
    );
    let undeletable = DifySchema {
        deleted_conversations: false,
        ..DifySchema::FULL
    };
    assert_eq!(
        Dialect::new(Backend::Postgres, undeletable.rewrite())
            .text("WHERE ($7::boolean OR NOT c.is_deleted)"),
        "WHERE ($7::boolean OR NOT false)"
    );
    assert!(Dialect::new(Backend::Postgres, DifySchema::FULL.rewrite()).is_verbatim());
    assert!(!Dialect::new(Backend::Postgres, undeletable.rewrite()).is_verbatim());
}

use crate::sources::dify::schema::DifySchema;
use crate::sources::{Ingestion, KbHome, Part};
use crate::store::catalog::{Backend, Catalog};
use crate::store::profile::{Dialect, Profile};

fn catalog(tables: &[&str], meta: &[(&str, &str)]) -> Catalog {
    Catalog {
        tables: tables.iter().map(|t| t.to_string()).collect(),
        meta: meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Catalog::default()
    }
}

const LANGFLOW: &[&str] = &[
    "alembic_version",
    "user",
    "flow",
    "message",
    "job",
    "memory_base",
    "memory_base_session",
    "memory_base_workflow_run",
    "message_ingestion_record",
    "knowledge_base",
];
const DIFY: &[&str] = &[
    "apps",
    "conversations",
    "messages",
    "workflow_runs",
    "workflow_node_executions",
];

#[test]
fn each_source_is_recognised_with_its_parts() {
    let langflow =
        Profile::detect(&catalog(LANGFLOW, &[]), Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(langflow.source.name(), "Langflow");
    assert_eq!(langflow.parts().collect::<Vec<_>>(), [Part::MemoryBases]);
    assert_eq!(
        langflow.dialect,
        Dialect::new(Backend::Sqlite, crate::sources::langflow::dialect::REWRITE)
    );
    assert_eq!(langflow.capabilities().ingestion, Ingestion::AppTask);
    assert_eq!(langflow.capabilities().knowledge_bases, KbHome::AppRows);
    assert!(!langflow.capabilities().memscope_writes);

    let dify = Profile::detect(&catalog(DIFY, &[]), Backend::Postgres, super::SOURCES).unwrap();
    assert_eq!(dify.source.name(), "Dify");
    assert_eq!(
        dify.parts().collect::<Vec<_>>(),
        [Part::Conversations, Part::NodeContexts]
    );
    assert_eq!(
        dify.dialect,
        Dialect::new(
            Backend::Postgres,
            DifySchema::of(&catalog(DIFY, &[])).rewrite()
        )
    );

    let all: Vec<&str> = DIFY
        .iter()
        .chain(LANGFLOW)
        .chain(&["chat_memories", "chat_memory_messages", "memscope_meta"])
        .copied()
        .collect();
    let own_catalog = catalog(&all, &[("created_by", "memscope")]);
    let own = Profile::detect(&own_catalog, Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(own.source.name(), "memscope");
    assert_eq!(own.parts().count(), 4);
    assert_eq!(
        own.dialect,
        Dialect::new(Backend::Sqlite, DifySchema::of(&own_catalog).rewrite())
    );
    assert_eq!(own.capabilities().ingestion, Ingestion::Memscope);
    assert!(own.capabilities().memscope_writes);
}

#[test]
fn a_database_with_both_families_is_read_as_difys() {
    let both: Vec<&str> = DIFY.iter().chain(LANGFLOW).copied().collect();
    let profile = Profile::detect(&catalog(&both, &[]), Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(profile.source.name(), "Dify");
    assert_eq!(
        profile.dialect,
        Dialect::new(
            Backend::Sqlite,
            DifySchema::of(&catalog(&both, &[])).rewrite()
        )
    );
    assert!(profile.has(Part::MemoryBases));
}

#[test]
fn other_databases_are_not_memory_databases() {
    assert!(
        Profile::detect(
            &catalog(&["users", "orders"], &[]),
            Backend::Sqlite,
            super::SOURCES
        )
        .is_none()
    );
    assert!(
        Profile::detect(
            &catalog(&["messages"], &[]),
            Backend::Sqlite,
            super::SOURCES
        )
        .is_none()
    );
    assert!(
        Profile::detect(
            &catalog(&["memscope_meta"], &[]),
            Backend::Sqlite,
            super::SOURCES
        )
        .is_none()
    );
}

#[test]
fn a_missing_part_is_explained_in_one_line() {
    let mut langflow = catalog(LANGFLOW, &[]);
    langflow
        .probed
        .insert("alembic_revision", "mb01b2c3d4e5".into());
    let profile = Profile::detect(&langflow, Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(
        profile.lacks(Part::Conversations),
        "a Langflow database (schema mb01b2c3d4e5), which has no conversations; \
         it holds memory bases"
    );
    let dify = Profile::detect(&catalog(DIFY, &[]), Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(
        dify.lacks(Part::MemoryBases),
        "a Dify database, which has no memory bases; it holds conversations and \
         workflow node executions"
    );
}

#[test]
fn creating_or_deleting_a_langflow_base_is_refused_with_langflows_own_endpoint() {
    use crate::sources::BaseChange;
    let mut langflow = catalog(LANGFLOW, &[]);
    langflow
        .probed
        .insert("alembic_revision", "mb01b2c3d4e5".into());
    let profile = Profile::detect(&langflow, Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(
        profile.refuses_base_change(BaseChange::Create).as_deref(),
        Some(
            "memscope does not create memory bases in a Langflow database (schema \
             mb01b2c3d4e5); Langflow's own API does: POST /api/v1/memories (or its UI)"
        )
    );
    let delete = profile.refuses_base_change(BaseChange::Delete).unwrap();
    assert!(
        delete.ends_with("DELETE /api/v1/memories/{memory_base_id} (or its UI)"),
        "{delete}"
    );
    let all: Vec<&str> = DIFY.iter().chain(LANGFLOW).copied().collect();
    let own_catalog = catalog(&all, &[("created_by", "memscope")]);
    let own = Profile::detect(&own_catalog, Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(own.refuses_base_change(BaseChange::Create), None);
    assert_eq!(own.refuses_base_change(BaseChange::Delete), None);
}

#[test]
fn langgraph_savers_are_recognised_beside_other_tables() {
    let sqlite = Profile::detect(
        &catalog(&["checkpoints", "writes", "store", "orders"], &[]),
        Backend::Sqlite,
        super::SOURCES,
    )
    .unwrap();
    assert_eq!(sqlite.describe(), "a LangGraph checkpoint database");
    assert_eq!(sqlite.parts().collect::<Vec<_>>(), [Part::Checkpoints]);
    assert!(super::checkpoint_history_of(sqlite.source).is_some());
    assert!(!sqlite.capabilities().memscope_writes);

    let mut postgres = catalog(
        &[
            "checkpoints",
            "checkpoint_blobs",
            "checkpoint_writes",
            "checkpoint_migrations",
            "users",
        ],
        &[],
    );
    postgres.probed.insert("checkpoint_migration", "9".into());
    let profile = Profile::detect(&postgres, Backend::Postgres, super::SOURCES).unwrap();
    assert_eq!(
        profile.lacks(Part::Conversations),
        "a LangGraph checkpoint database (schema v9), which has no conversations; \
         it holds checkpoint threads"
    );
}

#[test]
fn a_checkpoints_table_alone_is_no_saver_and_dify_wins_a_shared_database() {
    assert!(
        Profile::detect(
            &catalog(&["checkpoints"], &[]),
            Backend::Sqlite,
            super::SOURCES
        )
        .is_none()
    );
    assert!(
        Profile::detect(
            &catalog(&["checkpoints", "checkpoint_blobs"], &[]),
            Backend::Postgres,
            super::SOURCES
        )
        .is_none()
    );
    let shared: Vec<&str> = DIFY
        .iter()
        .chain(&["checkpoints", "writes"])
        .copied()
        .collect();
    let profile = Profile::detect(&catalog(&shared, &[]), Backend::Sqlite, super::SOURCES).unwrap();
    assert_eq!(profile.source.name(), "Dify");
}

#[test]
fn every_registered_source_keeps_conversations_listed_by_its_key() {
    for source in super::SOURCES {
        assert!(
            super::conversations_of(*source).is_some(),
            "{} keeps conversations but has no capability in the registry",
            source.name()
        );
    }
}

//! memscope's own schema: Dify's conversation tables, Langflow's memory-base tables and
//! memscope's chat memories, in a database memscope created (and so may write). Its demo story
//! is the chat memories' (`demo.rs`).

pub(crate) mod demo;

use std::collections::BTreeSet;

use super::adapter::{
    Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::dify::schema::DifySchema;
use super::rewrite::Rewrite;
use super::schema_eras::SchemaEras;
use crate::store::catalog::{Catalog, CountedTable};

pub struct Memscope;

impl MemorySource for Memscope {
    fn name(&self) -> &'static str {
        "memscope"
    }

    fn key(&self) -> &'static str {
        "memscope"
    }

    fn counted_tables(&self) -> &'static [CountedTable] {
        MEMSCOPE_TABLES
    }

    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        catalog.created_by_memscope()
    }

    fn capabilities(&self) -> Capabilities {
        MEMSCOPE_FORMATS
    }

    /// Its conversation tables are Dify's, read as Dify's are.
    fn rewrite(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Rewrite {
        DifySchema::of_database(catalog, parts).rewrite()
    }

    fn schema_eras(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Option<SchemaEras> {
        DifySchema::eras_of_database(catalog, parts)
    }
}

/// memscope's own formats for memory bases: what its schema, and Dify's (which has none of
/// them but takes memscope's tables beside its own), allow.
pub const MEMSCOPE_FORMATS: Capabilities = Capabilities {
    memscope_writes: true,
    ingestion: Ingestion::Memscope,
    jobs: JobOwnership::ProcessRecords,
    locks: LockStyle::Memscope,
    knowledge_bases: KbHome::MemscopeDirectory,
};

/// The tables of memscope's own schema that the summary counts, in its order: Dify's
/// conversation tables, memscope's chat memories, and the users, flows, jobs, messages and
/// memory bases of Langflow's memory-base tables. A Dify database takes memscope's tables beside
/// its own, so Dify's list is this one too.
pub const MEMSCOPE_TABLES: &[CountedTable] = &[
    CountedTable {
        table: "apps",
        count_sql: "SELECT COUNT(*) FROM apps",
    },
    CountedTable {
        table: "conversations",
        count_sql: "SELECT COUNT(*) FROM conversations",
    },
    CountedTable {
        table: "messages",
        count_sql: "SELECT COUNT(*) FROM messages",
    },
    CountedTable {
        table: "message_files",
        count_sql: "SELECT COUNT(*) FROM message_files",
    },
    CountedTable {
        table: "upload_files",
        count_sql: "SELECT COUNT(*) FROM upload_files",
    },
    CountedTable {
        table: "workflow_runs",
        count_sql: "SELECT COUNT(*) FROM workflow_runs",
    },
    CountedTable {
        table: "workflow_node_executions",
        count_sql: "SELECT COUNT(*) FROM workflow_node_executions",
    },
    CountedTable {
        table: "workflow_node_execution_offload",
        count_sql: "SELECT COUNT(*) FROM workflow_node_execution_offload",
    },
    CountedTable {
        table: "chat_memories",
        count_sql: "SELECT COUNT(*) FROM chat_memories",
    },
    CountedTable {
        table: "chat_memory_messages",
        count_sql: "SELECT COUNT(*) FROM chat_memory_messages",
    },
    CountedTable {
        table: "chat_memory_trims",
        count_sql: "SELECT COUNT(*) FROM chat_memory_trims",
    },
    CountedTable {
        table: "chat_memory_trim_archive",
        count_sql: "SELECT COUNT(*) FROM chat_memory_trim_archive",
    },
    CountedTable {
        table: "user",
        count_sql: "SELECT COUNT(*) FROM \"user\"",
    },
    CountedTable {
        table: "flow",
        count_sql: "SELECT COUNT(*) FROM flow",
    },
    CountedTable {
        table: "job",
        count_sql: "SELECT COUNT(*) FROM job",
    },
    CountedTable {
        table: "message",
        count_sql: "SELECT COUNT(*) FROM message",
    },
    CountedTable {
        table: "memory_base",
        count_sql: "SELECT COUNT(*) FROM memory_base",
    },
    CountedTable {
        table: "memory_base_session",
        count_sql: "SELECT COUNT(*) FROM memory_base_session",
    },
    CountedTable {
        table: "memory_base_workflow_run",
        count_sql: "SELECT COUNT(*) FROM memory_base_workflow_run",
    },
    CountedTable {
        table: "message_ingestion_record",
        count_sql: "SELECT COUNT(*) FROM message_ingestion_record",
    },
];

//! Langflow's databases: its messages, memory bases, jobs and knowledge bases, written in
//! Langflow's own formats so that a running Langflow reads them as its own; its conversations,
//! one per (flow, session) of its `message` table, and the rows its Agent's chat memory reads
//! ([`crate::memory::agent_history`] computes what that memory feeds the model).

pub mod budget;
pub mod conversation;
pub mod conversations;
pub mod demo;
pub mod dialect;
pub mod doctor;
mod history;
pub mod kb;
mod listing;
pub mod messages;
pub mod opened;
mod session_tree;
mod sync;
pub mod writes;

use std::collections::BTreeSet;

use super::adapter::{
    BaseChange, Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::rewrite::Rewrite;
use crate::store::catalog::{Catalog, CatalogProbe, CountedTable};

pub struct Langflow;

impl MemorySource for Langflow {
    fn name(&self) -> &'static str {
        "Langflow"
    }

    fn key(&self) -> &'static str {
        "langflow"
    }

    fn counted_tables(&self) -> &'static [CountedTable] {
        LANGFLOW_TABLES
    }

    /// Langflow's `message` table (Dify's is `messages`).
    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        catalog.has_table("message")
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            memscope_writes: false,
            ingestion: Ingestion::AppTask,
            jobs: JobOwnership::Heartbeat,
            locks: LockStyle::AppKeys,
            knowledge_bases: KbHome::AppRows,
        }
    }

    fn rewrite(&self, _catalog: &Catalog, _parts: &BTreeSet<Part>) -> Rewrite {
        dialect::REWRITE
    }

    fn probes(&self) -> &'static [CatalogProbe] {
        &[ALEMBIC_REVISION]
    }

    /// Langflow's Alembic revision.
    fn revision(&self, catalog: &Catalog) -> Option<String> {
        catalog.probed(&ALEMBIC_REVISION).map(str::to_owned)
    }

    /// Langflow 1.13's memories router (`langflow/api/v1/memories.py`, under `/api/v1`):
    /// `create_memory_base` and `delete_memory_base`.
    fn base_endpoint(&self, change: BaseChange) -> Option<&'static str> {
        Some(match change {
            BaseChange::Create => "POST /api/v1/memories",
            BaseChange::Delete => "DELETE /api/v1/memories/{memory_base_id}",
        })
    }
}

/// The tables of Langflow's databases that the summary counts: its users, flows, jobs and
/// messages, and its memory bases.
const LANGFLOW_TABLES: &[CountedTable] = &[
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

/// Langflow's Alembic revision: the schema of its migrations.
const ALEMBIC_REVISION: CatalogProbe = CatalogProbe {
    name: "alembic_revision",
    table: "alembic_version",
    sql: "SELECT version_num FROM alembic_version LIMIT 1",
};

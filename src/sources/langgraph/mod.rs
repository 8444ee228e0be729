//! LangGraph's checkpoint savers (SqliteSaver 3.1, PostgresSaver 3.2): recognising their tables
//! (also beside other tables in one database), the reads the adapter is built on, and a stored
//! checkpoint decoded with `decode`. The rows are read as the savers wrote them;
//! memscope's writes (with `--write`) are LangGraph's own: a trim as `update_state` writes it
//! (`trim.rs`), and a prune of older checkpoints, archived to a file first (`prune.rs`,
//! `archive.rs`), which `restore.rs` puts back into the database it came from. It adds no table, row or file of its own to the database.

pub mod archive;
pub mod budget;
pub mod checkpoint_tree;
pub mod conversation;
pub mod decode;
pub mod demo;
pub mod doctor;
mod figures;
pub mod opened;
pub mod prune;
mod read;
pub mod restore;
pub mod saver;
pub mod sizes;
mod stored;
pub mod thread_history;
pub mod thread_prunes;
pub mod thread_trims;
pub mod threads;
pub mod trim;

use std::collections::BTreeSet;

pub use read::{
    LangGraphPool, StoredBlob, StoredBody, StoredCheckpoint, StoredWrite, ThreadSummary,
};
pub use stored::CheckpointError;

use super::adapter::{
    Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::rewrite::Rewrite;
use crate::store::catalog::{Catalog, CatalogProbe, CountedTable};

pub struct LangGraph;

impl MemorySource for LangGraph {
    fn name(&self) -> &'static str {
        "LangGraph checkpoint"
    }

    fn key(&self) -> &'static str {
        "langgraph"
    }

    fn counted_tables(&self) -> &'static [CountedTable] {
        LANGGRAPH_TABLES
    }

    /// SqliteSaver's `checkpoints` and `writes`, or PostgresSaver's `checkpoints`,
    /// `checkpoint_blobs` and `checkpoint_writes`; other tables may sit beside them.
    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        catalog.has_table("checkpoints")
            && (catalog.has_table("writes")
                || (catalog.has_table("checkpoint_blobs")
                    && catalog.has_table("checkpoint_writes")))
    }

    /// memscope only reads these databases. A LangGraph database holds no memory bases, so
    /// the kinds of ingestion, jobs, locks and knowledge bases never come into play.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            memscope_writes: false,
            ingestion: Ingestion::AppTask,
            jobs: JobOwnership::Heartbeat,
            locks: LockStyle::AppKeys,
            knowledge_bases: KbHome::AppRows,
        }
    }

    /// memscope's own queries never reach these tables: the reads are this folder's.
    fn rewrite(&self, _catalog: &Catalog, _parts: &BTreeSet<Part>) -> Rewrite {
        Rewrite::VERBATIM
    }

    /// Checkpoints keyed on `thread_ts` (before langgraph 0.2).
    fn unreadable(&self, catalog: &Catalog) -> Option<&'static str> {
        catalog.has_column("checkpoints", "thread_ts").then_some(
            "in LangGraph's layout from before 0.2 (checkpoints keyed on `thread_ts`), which \
             memscope does not read; LangGraph 0.2 and later key them on `checkpoint_id`",
        )
    }

    fn probes(&self) -> &'static [CatalogProbe] {
        &[NEWEST_MIGRATION]
    }

    /// PostgresSaver's newest migration (`checkpoint_migrations`); SqliteSaver keeps none.
    fn revision(&self, catalog: &Catalog) -> Option<String> {
        newest_migration(catalog).map(|v| format!("v{v}"))
    }
}

/// The tables of LangGraph's checkpoint savers that the summary counts: SqliteSaver's two,
/// PostgresSaver's four.
const LANGGRAPH_TABLES: &[CountedTable] = &[
    CountedTable {
        table: "checkpoints",
        count_sql: "SELECT COUNT(*) FROM checkpoints",
    },
    CountedTable {
        table: "writes",
        count_sql: "SELECT COUNT(*) FROM writes",
    },
    CountedTable {
        table: "checkpoint_blobs",
        count_sql: "SELECT COUNT(*) FROM checkpoint_blobs",
    },
    CountedTable {
        table: "checkpoint_writes",
        count_sql: "SELECT COUNT(*) FROM checkpoint_writes",
    },
    CountedTable {
        table: "checkpoint_migrations",
        count_sql: "SELECT COUNT(*) FROM checkpoint_migrations",
    },
];

/// The newest of PostgresSaver's migrations (`checkpoint_migrations.v`).
const NEWEST_MIGRATION: CatalogProbe = CatalogProbe {
    name: "checkpoint_migration",
    table: "checkpoint_migrations",
    sql: "SELECT CAST(MAX(v) AS TEXT) FROM checkpoint_migrations",
};

/// The newest of PostgresSaver's migrations the database has run; `None` for SqliteSaver's,
/// which keeps none.
pub fn newest_migration(catalog: &Catalog) -> Option<i64> {
    catalog.probed(&NEWEST_MIGRATION)?.parse().ok()
}

//! The OpenAI Agents SDK's sessions (openai-agents 0.24.0): `SQLiteSession` and
//! `SQLAlchemySession` keep each session's items (Responses API input items, one JSON text a
//! row) in `agent_sessions` and `agent_messages`; `AdvancedSQLiteSession` adds branches and
//! per-turn usage (`message_structure`, `turn_usage`, and in 0.24.0 `branch_reservations` and
//! `session_clear_generations`). memscope only reads these databases: a session's history is
//! what the SDK's own `get_items` and the Runner's preparation make of its rows.

// Declared, never imported here: the registry of `mod.rs`, which the store asks, must not
// reach the conversation code built on the store.
pub mod conversation;
mod cut;
pub mod demo;
pub mod doctor;
pub mod encrypted;
pub mod item;
mod list;
pub mod prepare;
pub mod read;
mod tree;
pub mod trim;
mod trim_write;

use std::collections::BTreeSet;

use super::adapter::{
    Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::rewrite::Rewrite;
use crate::store::catalog::Catalog;

/// The columns the SDK's session classes create and read; other tables may sit beside them.
const SESSION_COLUMNS: [(&str, &[&str]); 2] = [
    (
        "agent_sessions",
        &["session_id", "created_at", "updated_at"],
    ),
    (
        "agent_messages",
        &["id", "session_id", "message_data", "created_at"],
    ),
];

pub struct OpenAiAgents;

impl MemorySource for OpenAiAgents {
    fn name(&self) -> &'static str {
        "OpenAI Agents SDK session"
    }

    fn key(&self) -> &'static str {
        "openai-agents"
    }

    /// The two session tables with their columns; the advanced session's tables are optional.
    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        SESSION_COLUMNS.iter().all(|(table, columns)| {
            columns
                .iter()
                .all(|column| catalog.has_column(table, column))
        })
    }

    /// memscope only reads these databases; they hold no memory bases, so the kinds of
    /// ingestion, jobs, locks and knowledge bases never come into play.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            memscope_writes: false,
            ingestion: Ingestion::AppTask,
            jobs: JobOwnership::Heartbeat,
            locks: LockStyle::AppKeys,
            knowledge_bases: KbHome::AppRows,
            // A session is a flat log of items, as a flow's session is.
        }
    }

    /// memscope's own queries never reach these tables: the reads are this folder's.
    fn rewrite(&self, _catalog: &Catalog, _parts: &BTreeSet<Part>) -> Rewrite {
        Rewrite::VERBATIM
    }
}

#[cfg(test)]
mod tests;

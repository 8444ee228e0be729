//! Google's Agent Development Kit (google-adk 2.13.0) sessions: `SqliteSessionService` (what
//! `adk web` and `adk run` write, `.adk/session.db` beside the agent) and
//! `DatabaseSessionService` (SQLAlchemy; its schema version in `adk_internal_metadata`, or the
//! old schema whose `actions` column is a Python pickle, never loaded here) keep each session as
//! a list of events, with app-wide and per-user state beside them. memscope only reads these
//! databases: what an agent's model is sent of a session is what ADK rebuilds from the events
//! on every turn (`contents.rs`), for the agent its runner picks (`router.rs`).

// Declared, never imported here: the registry of `mod.rs`, which the store asks, must not
// reach the conversation code built on the store.
pub mod compaction;
pub mod contents;
pub mod conversation;
pub mod demo;
pub mod doctor;
pub mod event;
mod glance;
pub mod item;
mod list;
mod opened;
pub mod pyrepr;
pub mod read;
pub mod rearrange;
pub mod router;
pub mod session;
mod tree;

use std::collections::BTreeSet;

use super::adapter::{
    Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::rewrite::Rewrite;
use crate::store::catalog::Catalog;

/// The columns both services create and read; other tables may sit beside them.
const SESSION_COLUMNS: [(&str, &[&str]); 4] = [
    (
        "sessions",
        &[
            "app_name",
            "user_id",
            "id",
            "state",
            "create_time",
            "update_time",
        ],
    ),
    (
        "events",
        &[
            "id",
            "app_name",
            "user_id",
            "session_id",
            "invocation_id",
            "timestamp",
        ],
    ),
    ("app_states", &["app_name", "state", "update_time"]),
    (
        "user_states",
        &["app_name", "user_id", "state", "update_time"],
    ),
];

/// An event's body: one JSON column, or the old schema's columns around a pickled `actions`.
const EVENT_BODIES: [&[&str]; 2] = [&["event_data"], &["author", "actions", "content"]];

pub struct Adk;

impl MemorySource for Adk {
    fn name(&self) -> &'static str {
        "Google ADK session"
    }

    fn key(&self) -> &'static str {
        "adk"
    }

    /// The four tables with their columns, and an event body ADK writes.
    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        SESSION_COLUMNS.iter().all(|(table, columns)| {
            columns
                .iter()
                .all(|column| catalog.has_column(table, column))
        }) && EVENT_BODIES.iter().any(|body| {
            body.iter()
                .all(|column| catalog.has_column("events", column))
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
            // A session is a flat log of events, as a flow's session is.
        }
    }

    /// DatabaseSessionService on MySQL and MariaDB: this folder's reads are written for it.
    fn read_on_mysql(&self) -> bool {
        true
    }

    /// memscope's own queries never reach these tables: the reads are this folder's.
    fn rewrite(&self, _catalog: &Catalog, _parts: &BTreeSet<Part>) -> Rewrite {
        Rewrite::VERBATIM
    }
}

#[cfg(test)]
mod tests;

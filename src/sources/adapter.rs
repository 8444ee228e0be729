//! The adapter interface every source implements, and what callers ask of it: the parts a
//! database may hold and the capabilities of its source.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use super::rewrite::Rewrite;
use super::schema_eras::SchemaEras;
use crate::store::catalog::{Catalog, CatalogProbe, CountedTable};

/// A kind of memory database: how it is recognised, what it has and allows, and how memscope's
/// queries reach its tables.
pub trait MemorySource: Sync {
    /// The source's name, for people: "Langflow".
    fn name(&self) -> &'static str;

    /// The source's name for scripts, as JSON documents give it: "langflow".
    fn key(&self) -> &'static str;

    /// Whether a database with this catalog (and these parts of memscope's schema) is the
    /// source's.
    fn recognises(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> bool;

    /// What the source's databases allow and who runs their jobs.
    fn capabilities(&self) -> Capabilities;

    /// How memscope's query text becomes the text the source's tables need in a database with
    /// this catalog and these parts (the source reads its schema eras there).
    fn rewrite(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Rewrite;

    /// What a database with this catalog and these parts has of the source's schema eras, and
    /// what memscope does because of them, for `info`: `None` where the source's schema has
    /// none (or the database keeps none of the tables they concern).
    fn schema_eras(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Option<SchemaEras> {
        let _ = (catalog, parts);
        None
    }

    /// Why memscope cannot read this database of the source (an old layout), in words that
    /// follow "a … database": `None` when it can.
    fn unreadable(&self, catalog: &Catalog) -> Option<&'static str> {
        let _ = catalog;
        None
    }

    /// Whether memscope reads the source's own tables on MySQL and MariaDB (read-only, each
    /// query's text in MySQL's form); Dify's conversation tables are read there whatever the
    /// source.
    fn read_on_mysql(&self) -> bool {
        false
    }

    /// The revision of the database's schema, when the source versions it ("schema …" in
    /// messages).
    fn revision(&self, catalog: &Catalog) -> Option<String> {
        let _ = catalog;
        None
    }

    /// What the source reads of its own tables when a database is opened, before it is known
    /// which source made it (the revision of its migrations), for `recognises`, `unreadable`
    /// and `revision` to read in the catalog.
    fn probes(&self) -> &'static [CatalogProbe] {
        &[]
    }

    /// The tables of the source's databases that the summary, `info` and `demo` count, in the
    /// order they show them; a table a database lacks is left out.
    fn counted_tables(&self) -> &'static [CountedTable] {
        &[]
    }

    /// The app's own API endpoint that makes `change` on a database whose memory bases
    /// memscope does not create or delete ([`Capabilities::memscope_writes`] false):
    /// "POST /api/v1/memories". `None` where the source has no such endpoint.
    fn base_endpoint(&self, change: BaseChange) -> Option<&'static str> {
        let _ = change;
        None
    }
}

/// A change to which memory bases a database has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseChange {
    Create,
    Delete,
}

impl BaseChange {
    /// The verb, for messages: "create".
    pub fn verb(self) -> &'static str {
        match self {
            BaseChange::Create => "create",
            BaseChange::Delete => "delete",
        }
    }
}

impl fmt::Debug for dyn MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A part of what memscope shows, which a database may or may not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// Dify's conversations and their messages.
    Conversations,
    /// Dify's workflow runs and node executions (per-node contexts).
    NodeContexts,
    /// Stored message lists trimmed by policy (memscope's own tables).
    ChatMemories,
    /// Langflow's memory bases, their sessions and ingestion jobs.
    MemoryBases,
    /// LangGraph's checkpoints: every thread's state after every step.
    Checkpoints,
}

impl Part {
    pub const ALL: [Part; 5] = [
        Part::Conversations,
        Part::NodeContexts,
        Part::ChatMemories,
        Part::MemoryBases,
        Part::Checkpoints,
    ];

    /// What the part is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Part::Conversations => "conversations",
            Part::NodeContexts => "workflow node executions",
            Part::ChatMemories => "chat memories",
            Part::MemoryBases => "memory bases",
            Part::Checkpoints => "checkpoint threads",
        }
    }

    /// The tables that make up the part.
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Part::Conversations => &["conversations", "messages"],
            Part::NodeContexts => &["workflow_runs", "workflow_node_executions"],
            Part::ChatMemories => &["chat_memories", "chat_memory_messages"],
            Part::MemoryBases => &["memory_base", "memory_base_session", "message", "job"],
            // Both savers name it so; their other tables differ (`sources/langgraph`).
            Part::Checkpoints => &["checkpoints"],
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What a source's databases allow, and whose formats their memory bases are kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Whether memscope may create and delete memory bases and write its own bookkeeping (lease
    /// rows, process records) here; otherwise it only syncs, in place, the bases the app made.
    pub memscope_writes: bool,
    /// How a session's ingestion runs and is recorded.
    pub ingestion: Ingestion,
    /// How a job whose process died is told apart.
    pub jobs: JobOwnership,
    /// How a session is locked while it syncs.
    pub locks: LockStyle,
    /// Where the knowledge bases that memory bases flush into live.
    pub knowledge_bases: KbHome,
}

/// How a memory base's session is ingested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ingestion {
    /// memscope's own steps, in memscope's formats; memscope's watcher may sync automatically.
    Memscope,
    /// As the app's own ingestion task does, in its formats: the app's jobs, its knowledge-base
    /// rows and vector layout; the app syncs automatically itself, and its run hook records
    /// runs for auto-capture bases only.
    AppTask,
}

/// How a job whose process died is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOwnership {
    /// memscope records each job's process (host, pid) and checks it is alive.
    ProcessRecords,
    /// The app's jobs carry a heartbeat; a stale one marks the job abandoned.
    Heartbeat,
}

/// How a session is locked while it syncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockStyle {
    /// memscope's own: a PostgreSQL advisory lock, or a SQLite lease row kept renewed.
    Memscope,
    /// The app's own keys and lock files, so that memscope and the app never ingest one
    /// session together.
    AppKeys,
}

/// Where a database's knowledge bases live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KbHome {
    /// memscope's directories, one per database, user and knowledge base.
    MemscopeDirectory,
    /// The app's own knowledge-base rows and vector files.
    AppRows,
}

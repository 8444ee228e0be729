//! The memory sources memscope reads, one folder each: memscope's own schema (`memscope/`),
//! Dify's (`dify/`), Langflow's (`langflow/`), LangGraph's checkpoint savers (`langgraph/`) and the
//! OpenAI Agents SDK's sessions (`openai_agents/`) and Google ADK's (`adk/`). A source's folder holds what is particular to
//! it: recognising it from the catalog, its schema eras, the rewrites its tables need, and what
//! its databases have and allow.
//!
//! The rest of memscope never compares sources: it asks the opened database's
//! [`MemorySource`] (on the store's profile) what it has and allows, through its
//! [`Capabilities`]. The backend (SQLite, PostgreSQL) is the other axis: a source's rewrite is
//! written once and the backend's dialect finishes it (`store/profile.rs`).

pub mod adapter;
pub mod adk;
pub mod agent_runtime;
pub mod checkpoint_history;
pub mod checkpoint_prune;
pub mod checkpoint_trim;
pub mod conversation;
pub mod conversation_registry;
pub mod dify;
pub mod doctor;
#[cfg(test)]
pub mod fixture;
pub mod langflow;
pub mod langgraph;
pub mod memscope;
pub mod node_context;
pub mod openai_agents;
pub mod opened;
pub mod rewrite;
pub mod schema_eras;
pub mod settings;
pub mod source_error;
pub mod stored_figures;
pub mod stored_trim;
pub mod turn_trees;

use std::collections::BTreeSet;

pub use adapter::{
    BaseChange, Capabilities, ConversationShape, Ingestion, JobOwnership, KbHome, LockStyle,
    MemorySource, Part,
};
pub use rewrite::Rewrite;

use crate::store::catalog::{Catalog, CatalogProbe};

/// Every source, tried in this order on a database's catalog; the first that recognises it
/// reads it. memscope's own schema first (it carries Dify's and Langflow's tables too), then
/// Dify's: a database with both families keeps Dify's dashed ids, which only Langflow's SQLite
/// does not. LangGraph's savers last: their tables may share a database with anything, and a
/// database that also holds Dify's or Langflow's tables is read as theirs. The OpenAI Agents
/// SDK's session tables after them, for the same reason, and Google ADK's (whose `sessions` and
/// `events` are recognised by all their columns, beside anything). Adding a source is
/// its folder and one line here.
const SOURCES: &[&dyn MemorySource] = &[
    &memscope::Memscope,
    &dify::Dify,
    &langflow::Langflow,
    &langgraph::LangGraph,
    &openai_agents::OpenAiAgents,
    &adk::Adk,
    #[cfg(test)]
    &fixture::TestLog,
];

/// What every source reads of its own tables when a database is opened (`MemorySource::probes`).
pub fn catalog_probes() -> Vec<CatalogProbe> {
    SOURCES
        .iter()
        .flat_map(|source| source.probes())
        .copied()
        .collect()
}

/// The source that made a database, or `None` when it is not a memory database at all.
pub fn recognise(catalog: &Catalog, parts: &BTreeSet<Part>) -> Option<&'static dyn MemorySource> {
    SOURCES
        .iter()
        .copied()
        .find(|source| source.recognises(catalog, parts))
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;

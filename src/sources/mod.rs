//! The memory sources memscope reads, one folder each: memscope's own schema (`memscope/`),
//! Dify's (`dify/`), Langflow's (`langflow/`), LangGraph's checkpoint savers (`langgraph/`) and the
//! OpenAI Agents SDK's sessions (`openai_agents/`) and Google ADK's (`adk/`). A source's folder holds what is particular to
//! it: recognising it from the catalog, its schema eras, the rewrites its tables need, and what
//! its databases have and allow.
//!
//! This file is the registry, the one place outside a source's folder that names it: the
//! sources a database is recognised among (`Store::open` and `Store::init` are defined here, so
//! that the store below never names a source), and the conversation capabilities of each.
//!
//! The rest of memscope never compares sources: it asks the opened database's
//! [`MemorySource`] (on the store's profile) what it has and allows, through its
//! [`Capabilities`], and reaches its conversations through the capabilities found here. The
//! backend (SQLite, PostgreSQL) is the other axis: a source's rewrite is written once and the
//! backend's dialect finishes it (`store/profile.rs`).

pub mod adapter;
pub mod adk;
pub mod agent_runtime;
pub mod checkpoint_history;
pub mod checkpoint_prune;
pub mod checkpoint_trim;
pub mod conversation;
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

pub use adapter::{
    BaseChange, Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
pub use rewrite::Rewrite;

use crate::store::error::StoreError;
use crate::store::handle::{Access, Store};
use crate::store::profile::Sources;
use adk::conversation::AdkSessions;
use adk::doctor::AdkDoctor;
use agent_runtime::AgentRuntime;
use checkpoint_history::CheckpointHistory;
use checkpoint_prune::CheckpointPrune;
use checkpoint_trim::CheckpointTrim;
use conversation::ConversationSource;
use dify::agent_sessions::DifyAgentRuntime;
use dify::conversation::DifyConversations;
use dify::doctor::DifyDoctor;
use dify::node_contexts::DifyNodeContexts;
use dify::turn_trees::DifyTurnTrees;
use doctor::ConversationDoctor;
use langflow::conversation::LangflowSessions;
use langflow::doctor::LangflowDoctor;
use langgraph::conversation::LangGraphThreads;
use langgraph::doctor::LangGraphDoctor;
use langgraph::thread_history::ThreadHistories;
use langgraph::thread_prunes::ThreadPrunes;
use langgraph::thread_trims::ThreadTrims;
use node_context::NodeContexts;
use openai_agents::conversation::AgentSessions;
use openai_agents::doctor::AgentSessionsDoctor;
use openai_agents::trim::SessionTrims;
use stored_trim::StoredTrim;
use turn_trees::TurnTrees;

/// Every source, tried in this order on a database's catalog; the first that recognises it
/// reads it. memscope's own schema first (it carries Dify's and Langflow's tables too), then
/// Dify's: a database with both families keeps Dify's dashed ids, which only Langflow's SQLite
/// does not. LangGraph's savers last: their tables may share a database with anything, and a
/// database that also holds Dify's or Langflow's tables is read as theirs. The OpenAI Agents
/// SDK's session tables after them, for the same reason, and Google ADK's (whose `sessions` and
/// `events` are recognised by all their columns, beside anything). Adding a source is
/// its folder, one line here and, if it keeps conversations, one in [`CONVERSATIONS`].
pub(crate) const SOURCES: Sources = &[
    &memscope::Memscope,
    &dify::Dify,
    &langflow::Langflow,
    &langgraph::LangGraph,
    &openai_agents::OpenAiAgents,
    &adk::Adk,
    #[cfg(test)]
    &fixture::TestLog,
];

impl Store {
    /// Opens an existing memory database, recognised among memscope's sources. Fails when the
    /// URL is bad or the server unreachable, when the database holds no memory tables, or when
    /// memscope's schema in it is newer than this binary. A database memscope did not create
    /// opens read-only under [`Access::Auto`].
    pub async fn open(url: &str, access: Access) -> Result<Store, StoreError> {
        Store::open_among(url, access, SOURCES).await
    }

    /// Creates memscope's schema or brings it up to date, and opens the database read-write
    /// ([`Store::init_among`]).
    pub async fn init(url: &str) -> Result<Store, StoreError> {
        Store::init_among(url, SOURCES).await
    }
}

/// A source's conversation capability, how `doctor` scans its conversations, how a viewer reads
/// its threads of checkpoints, how memscope trims a stored conversation or a thread of
/// checkpoints and prunes checkpoints where it may, how its chatflows' node contexts and its
/// agents' runtime sessions are read where it keeps them, and how its regeneration trees of
/// turns are loaded where its conversations are those.
struct Registered {
    key: &'static str,
    conversations: &'static dyn ConversationSource,
    doctor: Option<&'static dyn ConversationDoctor>,
    trim: Option<&'static dyn StoredTrim>,
    checkpoint_history: Option<&'static dyn CheckpointHistory>,
    checkpoint_trim: Option<&'static dyn CheckpointTrim>,
    checkpoint_prune: Option<&'static dyn CheckpointPrune>,
    node_contexts: Option<&'static dyn NodeContexts>,
    agent_runtime: Option<&'static dyn AgentRuntime>,
    turn_trees: Option<&'static dyn TurnTrees>,
}

impl Registered {
    /// A source that keeps conversations and scans them, with none of the optional capabilities.
    const fn keeps(
        key: &'static str,
        conversations: &'static dyn ConversationSource,
        doctor: &'static dyn ConversationDoctor,
    ) -> Registered {
        Registered {
            key,
            conversations,
            doctor: Some(doctor),
            trim: None,
            checkpoint_history: None,
            checkpoint_trim: None,
            checkpoint_prune: None,
            node_contexts: None,
            agent_runtime: None,
            turn_trees: None,
        }
    }

    /// A source whose conversations are Dify's tables: Dify's, and memscope's own schema, which
    /// keeps them (and its chatflows' node executions) there, so Dify's capabilities read them.
    const fn in_dify_tables(key: &'static str) -> Registered {
        Registered {
            node_contexts: Some(&DifyNodeContexts),
            agent_runtime: Some(&DifyAgentRuntime),
            turn_trees: Some(&DifyTurnTrees),
            ..Registered::keeps(key, &DifyConversations, &DifyDoctor)
        }
    }
}

/// Each source that keeps conversations, by its key.
const CONVERSATIONS: &[Registered] = &[
    Registered::in_dify_tables("memscope"),
    Registered::in_dify_tables("dify"),
    Registered::keeps("langflow", &LangflowSessions, &LangflowDoctor),
    Registered {
        checkpoint_history: Some(&ThreadHistories),
        checkpoint_trim: Some(&ThreadTrims),
        checkpoint_prune: Some(&ThreadPrunes),
        ..Registered::keeps("langgraph", &LangGraphThreads, &LangGraphDoctor)
    },
    Registered {
        trim: Some(&SessionTrims),
        ..Registered::keeps("openai-agents", &AgentSessions, &AgentSessionsDoctor)
    },
    Registered::keeps("adk", &AdkSessions, &AdkDoctor),
    #[cfg(test)]
    Registered::keeps(
        "test-log",
        &fixture::conversation::TestLogConversations,
        &fixture::doctor::TestLogDoctor,
    ),
];

fn registered(source: &dyn MemorySource) -> Option<&'static Registered> {
    CONVERSATIONS.iter().find(|r| r.key == source.key())
}

/// How `source`'s databases keep conversations; `None` when they keep none.
pub fn conversations_of(source: &dyn MemorySource) -> Option<&'static dyn ConversationSource> {
    registered(source).map(|r| r.conversations)
}

/// The lookups of the optional capabilities: each is `None` where the source lacks it.
macro_rules! optional_capabilities {
    ($($(#[$doc:meta])* $lookup:ident: $field:ident as $capability:ident;)*) => {$(
        $(#[$doc])*
        pub fn $lookup(source: &dyn MemorySource) -> Option<&'static dyn $capability> {
            registered(source).and_then(|r| r.$field)
        }
    )*};
}

optional_capabilities! {
    /// How `doctor` scans `source`'s conversations.
    doctor_of: doctor as ConversationDoctor;
    /// How `source`'s chatflows' node contexts are read.
    node_contexts_of: node_contexts as NodeContexts;
    /// How `source`'s agents' runtime sessions are read.
    agent_runtime_of: agent_runtime as AgentRuntime;
    /// How `source`'s regeneration trees of turns are loaded, where its conversations are those.
    turn_trees_of: turn_trees as TurnTrees;
    /// How memscope trims `source`'s stored conversations in place, where it may.
    trim_of: trim as StoredTrim;
    /// How a viewer reads `source`'s threads of checkpoints, where it keeps them.
    checkpoint_history_of: checkpoint_history as CheckpointHistory;
    /// How memscope trims `source`'s threads of checkpoints, where it may.
    checkpoint_trim_of: checkpoint_trim as CheckpointTrim;
    /// How memscope prunes `source`'s threads of checkpoints, where it may.
    checkpoint_prune_of: checkpoint_prune as CheckpointPrune;
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;

//! Which sources keep conversations, and their conversation capability: the second registry
//! line of a source that keeps any. Apart from `mod.rs`'s registry, so that the store, which
//! asks that registry who made a database, never reaches the conversation code built on it.

use super::adapter::MemorySource;
use super::adk::conversation::AdkSessions;
use super::adk::doctor::AdkDoctor;
use super::agent_runtime::AgentRuntime;
use super::checkpoint_history::CheckpointHistory;
use super::checkpoint_prune::CheckpointPrune;
use super::checkpoint_trim::CheckpointTrim;
use super::conversation::ConversationSource;
use super::dify::agent_sessions::DifyAgentRuntime;
use super::dify::conversation::DifyConversations;
use super::dify::doctor::DifyDoctor;
use super::dify::node_contexts::DifyNodeContexts;
use super::dify::turn_trees::DifyTurnTrees;
use super::doctor::ConversationDoctor;
use super::langflow::conversation::LangflowSessions;
use super::langflow::doctor::LangflowDoctor;
use super::langgraph::conversation::LangGraphThreads;
use super::langgraph::doctor::LangGraphDoctor;
use super::langgraph::thread_history::ThreadHistories;
use super::langgraph::thread_prunes::ThreadPrunes;
use super::langgraph::thread_trims::ThreadTrims;
use super::node_context::NodeContexts;
use super::openai_agents::conversation::AgentSessions;
use super::openai_agents::doctor::AgentSessionsDoctor;
use super::openai_agents::trim::SessionTrims;
use super::stored_trim::StoredTrim;
use super::turn_trees::TurnTrees;

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
        &super::fixture::conversation::TestLogConversations,
        &super::fixture::doctor::TestLogDoctor,
    ),
];

fn registered(source: &dyn MemorySource) -> Option<&'static Registered> {
    CONVERSATIONS.iter().find(|r| r.key == source.key())
}

/// How `source`'s databases keep conversations; `None` when they keep none.
pub fn conversations_of(source: &dyn MemorySource) -> Option<&'static dyn ConversationSource> {
    registered(source).map(|r| r.conversations)
}

/// How `doctor` scans `source`'s conversations; `None` when it keeps none or has no scan.
pub fn doctor_of(source: &dyn MemorySource) -> Option<&'static dyn ConversationDoctor> {
    registered(source).and_then(|r| r.doctor)
}

/// How `source`'s chatflows' node contexts are read; `None` where it keeps none.
pub fn node_contexts_of(source: &dyn MemorySource) -> Option<&'static dyn NodeContexts> {
    registered(source).and_then(|r| r.node_contexts)
}

/// How `source`'s agents' runtime sessions are read; `None` where it keeps none.
pub fn agent_runtime_of(source: &dyn MemorySource) -> Option<&'static dyn AgentRuntime> {
    registered(source).and_then(|r| r.agent_runtime)
}

/// How `source`'s regeneration trees of turns are loaded; `None` where its conversations are
/// not those.
pub fn turn_trees_of(source: &dyn MemorySource) -> Option<&'static dyn TurnTrees> {
    registered(source).and_then(|r| r.turn_trees)
}

/// How memscope trims `source`'s stored conversations in place, where it may.
pub fn trim_of(source: &dyn MemorySource) -> Option<&'static dyn StoredTrim> {
    registered(source).and_then(|r| r.trim)
}

/// How a viewer reads `source`'s threads of checkpoints, where it keeps them.
pub fn checkpoint_history_of(source: &dyn MemorySource) -> Option<&'static dyn CheckpointHistory> {
    registered(source).and_then(|r| r.checkpoint_history)
}

/// How memscope trims `source`'s threads of checkpoints, where it may.
pub fn checkpoint_trim_of(source: &dyn MemorySource) -> Option<&'static dyn CheckpointTrim> {
    registered(source).and_then(|r| r.checkpoint_trim)
}

/// How memscope prunes `source`'s threads of checkpoints, where it may.
pub fn checkpoint_prune_of(source: &dyn MemorySource) -> Option<&'static dyn CheckpointPrune> {
    registered(source).and_then(|r| r.checkpoint_prune)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_source_that_keeps_conversations_is_listed_by_its_key() {
        for source in super::super::SOURCES {
            assert!(
                conversations_of(*source).is_some(),
                "{} keeps conversations but has no capability here",
                source.name()
            );
        }
    }
}

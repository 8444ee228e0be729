//! Which sources keep conversations, and their conversation capability: the second registry
//! line of a source that keeps any. Apart from `mod.rs`'s registry, so that the store, which
//! asks that registry who made a database, never reaches the conversation code built on it.

use super::adapter::MemorySource;
use super::conversation::ConversationSource;
use super::dify::conversation::DifyConversations;
use super::langflow::conversation::LangflowSessions;
use super::langgraph::conversation::LangGraphThreads;
use super::openai_agents::conversation::AgentSessions;

/// Each source that keeps conversations, by its key. memscope's own schema keeps them in
/// Dify's tables, so Dify's capability reads them.
const CONVERSATIONS: &[(&str, &dyn ConversationSource)] = &[
    ("memscope", &DifyConversations),
    ("dify", &DifyConversations),
    ("langflow", &LangflowSessions),
    ("langgraph", &LangGraphThreads),
    ("openai-agents", &AgentSessions),
    #[cfg(test)]
    (
        "test-log",
        &super::fixture::conversation::TestLogConversations,
    ),
];

/// How `source`'s databases keep conversations; `None` when they keep none.
pub fn conversations_of(source: &dyn MemorySource) -> Option<&'static dyn ConversationSource> {
    CONVERSATIONS
        .iter()
        .find(|(key, _)| *key == source.key())
        .map(|(_, conversations)| *conversations)
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

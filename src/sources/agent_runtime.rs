//! The agent-runtime capability: a source whose agents keep runtime sessions beside its
//! conversations (Dify's Agent V2: an Agent App conversation's own, and those of the agent nodes
//! its chatflow turns ran) reads one conversation's sessions.

use super::conversation::SourceFuture;
use crate::memory::agent_session::AgentSessionRow;
use crate::store::Store;

/// A conversation's agent runtime sessions.
pub trait AgentRuntime: Sync {
    /// The conversation `conversation` names (its id or a unique prefix) and its sessions.
    fn sessions<'a>(
        &'a self,
        store: &'a Store,
        conversation: &'a str,
    ) -> SourceFuture<'a, RuntimeSessions>;
}

/// One conversation's agent runtime sessions.
#[derive(Debug, Clone)]
pub struct RuntimeSessions {
    pub conversation_id: String,
    pub conversation_name: String,
    /// Oldest first; `None` where the database's schema keeps no sessions (an app release
    /// before them).
    pub rows: Option<Vec<AgentSessionRow>>,
}

//! A conversation's Agent V2 runtime sessions with their snapshots read, for a view.

use serde::Serialize;

use super::InspectError;
use super::conversation::conversation_info;
use crate::memory::agent_session::{AgentSessionRow, SessionSnapshot, read_snapshot};
use crate::sources::dify::agent_sessions::conversation_agent_sessions;
use crate::sources::dify::queries::ConversationInfo;
use crate::store::Store;

/// One session and what its snapshot holds.
#[derive(Debug, Clone, Serialize)]
pub struct AgentSession {
    #[serde(flatten)]
    pub row: AgentSessionRow,
    pub snapshot: SessionSnapshot,
}

/// A conversation's sessions; `None` where the database has no `agent_runtime_sessions` table.
#[derive(Debug, Clone)]
pub struct AgentSessions {
    pub info: ConversationInfo,
    pub sessions: Option<Vec<AgentSession>>,
}

pub async fn load_agent_sessions(
    store: &Store,
    conversation: &str,
) -> Result<AgentSessions, InspectError> {
    let info = conversation_info(store, conversation).await?;
    let rows = conversation_agent_sessions(store, &info.id).await?;
    let sessions = rows.map(|rows| {
        rows.into_iter()
            .map(|row| AgentSession {
                snapshot: read_snapshot(&row.session_snapshot),
                row,
            })
            .collect()
    });
    Ok(AgentSessions { info, sessions })
}

//! A conversation's agent runtime sessions (Dify's Agent V2) with their snapshots read, for a
//! view: the agent-runtime capability of the database's source reads them.

use serde::Serialize;

use super::InspectError;
use crate::memory::agent_session::{AgentSessionRow, SessionSnapshot, read_snapshot};
use crate::sources::agent_runtime_of;
use crate::store::{Part, Store};

/// One session and what its snapshot holds.
#[derive(Debug, Clone, Serialize)]
pub struct AgentSession {
    #[serde(flatten)]
    pub row: AgentSessionRow,
    pub snapshot: SessionSnapshot,
}

/// The conversation the sessions belong to.
#[derive(Debug, Clone)]
pub struct SessionsOf {
    pub id: String,
    pub name: String,
}

/// A conversation's sessions; `None` where the database's schema keeps none.
#[derive(Debug, Clone)]
pub struct AgentSessions {
    pub info: SessionsOf,
    pub sessions: Option<Vec<AgentSession>>,
}

pub async fn load_agent_sessions(
    store: &Store,
    conversation: &str,
) -> Result<AgentSessions, InspectError> {
    let runtime = agent_runtime_of(store.profile().source).ok_or_else(|| {
        InspectError::NoConversations(format!(
            "{} keeps no agent runtime sessions",
            store.profile().describe()
        ))
    })?;
    store.require(Part::Conversations)?;
    let found = runtime.sessions(store, conversation).await?;
    let sessions = found.rows.map(|rows| {
        rows.into_iter()
            .map(|row| AgentSession {
                snapshot: read_snapshot(&row.session_snapshot),
                row,
            })
            .collect()
    });
    Ok(AgentSessions {
        info: SessionsOf {
            id: found.conversation_id,
            name: found.conversation_name,
        },
        sessions,
    })
}

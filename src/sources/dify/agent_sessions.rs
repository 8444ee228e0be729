//! A conversation's Agent V2 runtime sessions, read-only: the rows of `agent_runtime_sessions`
//! its Agent App conversation owns, and those of the agent nodes its chatflow turns ran.

use chrono::NaiveDateTime;
use sqlx::FromRow;

use super::window::conversation_info;
use crate::memory::agent_session::AgentSessionRow;
use crate::sources::agent_runtime::{AgentRuntime, RuntimeSessions};
use crate::sources::conversation::SourceFuture;
use crate::store::pool::on_pool;
use crate::store::{Store, StoreError};

/// Dify's agent runtime sessions, as the agent-runtime capability gives them.
pub struct DifyAgentRuntime;

impl AgentRuntime for DifyAgentRuntime {
    fn sessions<'a>(
        &'a self,
        store: &'a Store,
        conversation: &'a str,
    ) -> SourceFuture<'a, RuntimeSessions> {
        Box::pin(async move {
            let info = conversation_info(store, conversation).await?;
            let rows = conversation_agent_sessions(store, &info.id).await?;
            Ok(RuntimeSessions {
                conversation_id: info.id,
                conversation_name: info.name,
                rows,
            })
        })
    }
}

/// By the conversation (`$1`), or by the workflow runs of its messages (`$2`, the same id): a
/// parameter each, so every backend binds them in order.
const SESSIONS_SQL: &str = "SELECT s.id::text AS id, s.owner_type, s.agent_id::text AS agent_id, \
     s.status, s.backend_run_id, s.workflow_run_id::text AS workflow_run_id, s.node_id, \
     s.session_snapshot, s.created_at, s.updated_at, s.cleaned_at \
     FROM agent_runtime_sessions s \
     WHERE s.conversation_id = $1::uuid \
        OR s.workflow_run_id IN (SELECT m.workflow_run_id FROM messages m \
                                 WHERE m.conversation_id = $2::uuid) \
     ORDER BY s.created_at, s.id";

#[derive(FromRow)]
struct SessionRecord {
    id: String,
    owner_type: String,
    agent_id: String,
    status: String,
    backend_run_id: Option<String>,
    workflow_run_id: Option<String>,
    node_id: Option<String>,
    session_snapshot: String,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    cleaned_at: Option<NaiveDateTime>,
}

/// The conversation's sessions oldest first, or `None` where the schema has no
/// `agent_runtime_sessions` table (Dify before its Agent V2).
pub async fn conversation_agent_sessions(
    store: &Store,
    conversation_id: &str,
) -> Result<Option<Vec<AgentSessionRow>>, StoreError> {
    if !store.dify_schema().agent_sessions {
        return Ok(None);
    }
    let records: Vec<SessionRecord> = on_pool!(store.pool, SESSIONS_SQL, |pool, sql| {
        sqlx::query_as(sql)
            .bind(conversation_id)
            .bind(conversation_id)
            .fetch_all(pool)
            .await
    })
    .map_err(|e| store.query_failed(e))?;
    Ok(Some(
        records
            .into_iter()
            .map(|r| AgentSessionRow {
                id: r.id,
                owner_type: r.owner_type,
                agent_id: r.agent_id,
                status: r.status,
                backend_run_id: r.backend_run_id,
                workflow_run_id: r.workflow_run_id,
                node_id: r.node_id,
                session_snapshot: r.session_snapshot,
                created_at: r.created_at,
                updated_at: r.updated_at,
                cleaned_at: r.cleaned_at,
            })
            .collect(),
    ))
}

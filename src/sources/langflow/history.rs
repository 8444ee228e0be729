//! What a session's Agent is fed, as the conversation capability gives it: exactly what
//! `aget_agent_chat_history` returns for the flow, the session, the owner and the newest
//! `n_messages`, counted under the budget, with what it leaves out.

use serde_json::json;

use super::budget::{agent_budget, counted};
use super::messages::{session_flows, session_messages};
use crate::memory::agent_history::{AGENT_DEFAULT_N_MESSAGES, AgentHistoryArgs, agent_history};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{
    Extra, HistoryRequest, MessageFacts, MessageKind, SourceError, SourceHistory,
};
use crate::store::Store;

pub async fn history(
    store: &Store,
    request: &HistoryRequest,
) -> Result<SourceHistory, SourceError> {
    let session = &request.id;
    let flows = session_flows(store, session).await?;
    let flow = flows.choose(request.options.get("flow"))?.clone();
    let n_messages = request
        .options
        .number::<u32>("n-messages")?
        .unwrap_or(AGENT_DEFAULT_N_MESSAGES);
    let context_id = request
        .options
        .get("context-id")
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    let rows = session_messages(store, session, None).await?;
    let fed = agent_history(
        &rows,
        &AgentHistoryArgs {
            flow_id: flow.id.clone(),
            session_id: session.clone(),
            context_id: context_id.clone(),
            owner: flow.owner.clone(),
            n_messages: Some(n_messages),
        },
    );
    let budget = agent_budget(
        &fed,
        n_messages,
        flow.owner.is_some(),
        &request.budget,
        &mut CountCache::default(),
    );
    let messages = fed
        .messages
        .iter()
        .map(|m| MessageFacts {
            kind: MessageKind::Message,
            at: Some(m.timestamp),
            raw: request.raw(m),
            shown: m.is_error_text_fed().then(|| format!("[error] {}", m.text)),
            extra: request.details(|| {
                json!({
                    "sender": m.sender,
                    "sender_name": m.sender_name,
                    "run_id": m.run_id,
                    "context_id": m.context_id,
                    "category": m.category,
                    "files": m.files,
                })
            }),
        })
        .collect();
    let header = vec![
        format!(
            "session {:?} of flow {} ({}), owner {}",
            session,
            flow.name.as_deref().unwrap_or("(deleted flow)"),
            flow.id.as_deref().unwrap_or("no flow id"),
            flow.owner.as_deref().unwrap_or("(none)"),
        ),
        format!(
            "n_messages {n_messages}{}",
            context_id
                .as_deref()
                .map_or(String::new(), |c| format!(", context id {c:?}")),
        ),
    ];
    let extra = Extra::from_iter([
        ("flow".to_owned(), json!(flow.name)),
        ("flow_id".to_owned(), json!(flow.id)),
        ("owner".to_owned(), json!(flow.owner)),
        ("n_messages".to_owned(), json!(n_messages)),
        ("context_id".to_owned(), json!(context_id)),
        ("error_text_fed".to_owned(), json!(budget.error_text_fed)),
    ]);
    Ok(SourceHistory {
        id: session.clone(),
        title: flow.name.clone(),
        header,
        rule: budget.rule,
        messages,
        kept_above_cut: None,
        left_out: counted(&budget.left_out),
        warnings: budget.warnings,
        view: budget.view,
        extra,
    })
}

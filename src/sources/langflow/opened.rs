//! A Langflow session of one flow opened for a view: its rows in order, grouped by run, and
//! the Agent's chat memory over them (`aget_agent_chat_history` over the flow, the session and
//! the owner, the newest `n_messages`), recounted under each budget and window.

use std::sync::Arc;

use super::budget::{agent_budget, counted};
use super::messages::{session_flows, session_messages};
use crate::memory::agent_history::{
    AGENT_DEFAULT_N_MESSAGES, AgentHistoryArgs, ERROR_CATEGORY, LangflowMessage, SENDER_USER,
    agent_history,
};
use crate::memory::budget_view::BudgetSettings;
use crate::memory::memory_base::canonical_id;
use crate::memory::model::{ChatMessage, PromptMessage, Role};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::SourceError;
use crate::sources::opened::{
    ConversationKey, ConversationMemory, FedHistory, MessageWindow, OpenConversation, ShownMessage,
};
use crate::store::Store;

/// Every row stored under the session id (of every flow and owner), and the flow whose Agent
/// reads them with its owner.
#[derive(Debug, Clone)]
struct AgentMemory {
    session: String,
    rows: Vec<LangflowMessage>,
    flow_id: Option<String>,
    owner: Option<String>,
}

const N_MESSAGES: MessageWindow = MessageWindow {
    name: "n_messages",
    default: AGENT_DEFAULT_N_MESSAGES,
    describe: |n| match n {
        0 => "the Agent's memory is off, nothing is fed".to_owned(),
        n => format!("the Agent reads the newest {n} messages"),
    },
};

impl ConversationMemory for AgentMemory {
    fn window(&self) -> Option<MessageWindow> {
        Some(N_MESSAGES)
    }

    fn fed(
        &self,
        window: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String> {
        let n_messages = window.unwrap_or(N_MESSAGES.default);
        let args = AgentHistoryArgs {
            flow_id: self.flow_id.clone(),
            session_id: self.session.clone(),
            context_id: None,
            owner: self.owner.clone(),
            n_messages: Some(n_messages),
        };
        let fed = agent_history(&self.rows, &args);
        let budget = agent_budget(&fed, n_messages, self.owner.is_some(), settings, cache);
        Ok(FedHistory {
            view: budget.view,
            rule: budget.rule,
            left_out: counted(&budget.left_out),
            flagged: budget.error_text_fed,
            flagged_why: "error-category text without the error flag reaches the model",
            kept_above_cut: None,
            warnings: budget.warnings,
            trim_start: None,
        })
    }
}

/// The session `key` names, of the flow its scope names.
pub async fn open(store: &Store, key: &ConversationKey) -> Result<OpenConversation, SourceError> {
    let rows = session_messages(store, &key.id, None).await?;
    let flows = session_flows(store, &key.id).await?;
    let same =
        |flow: Option<&str>| flow.map(canonical_id) == key.scope.as_deref().map(canonical_id);
    let flow = flows.flows.iter().find(|f| same(f.id.as_deref()));
    let flow_label = flow.map_or_else(|| "no flow".to_owned(), |f| f.label());
    let messages: Vec<ShownMessage> = rows
        .iter()
        .filter(|m| same(m.flow_id.as_deref()))
        .map(shown)
        .collect();
    if messages.is_empty() {
        return Err(SourceError::not_found(format!(
            "no messages are stored under session {:?} of {flow_label}",
            key.id
        )));
    }
    let owner = flow.and_then(|f| f.owner.clone());
    let shared = match flows.flows.len().saturating_sub(1) {
        0 => String::new(),
        n => format!(
            " (the session id is used by {} too)",
            crate::format::count(n as u64, "other flow")
        ),
    };
    Ok(OpenConversation {
        key: key.clone(),
        heading: format!(
            "session {:?} of flow {flow_label}, owner {}{shared}",
            key.id,
            owner.as_deref().unwrap_or("(none)")
        ),
        structure: "Langflow keeps no regeneration tree: a session is one flat log, shown in \
                    order and grouped by run"
            .to_owned(),
        messages,
        memory: agent_memory(key, rows, owner),
        warnings: Vec::new(),
        views: None,
    })
}

/// What the Agent of the flow `key` scopes feeds its model of `rows` (every row stored under
/// the session id), reading as `owner`.
pub fn agent_memory(
    key: &ConversationKey,
    rows: Vec<LangflowMessage>,
    owner: Option<String>,
) -> Arc<dyn ConversationMemory> {
    Arc::new(AgentMemory {
        session: key.id.clone(),
        rows,
        flow_id: key.scope.clone(),
        owner,
    })
}

/// A stored row as the view shows it, with what an operator should see at once.
pub fn shown(m: &LangflowMessage) -> ShownMessage {
    let human = m.sender.is_empty() || m.sender == SENDER_USER;
    let role = if human { Role::User } else { Role::Assistant };
    let mut marks = Vec::new();
    if m.error {
        marks.push("error flag: never fed to the model".to_owned());
    }
    if m.category == ERROR_CATEGORY && !m.error {
        marks.push("error category without the error flag: fed to the model".to_owned());
    } else if m.category != "message" && !m.error {
        marks.push(format!("category {}", m.category));
    }
    ShownMessage {
        message: ChatMessage {
            id: m.id.clone(),
            message: PromptMessage::text(role, m.text.clone()),
            created_at: Some(m.timestamp.naive_utc()),
            usage: None,
        },
        run: m.run_id.clone(),
        sender: match m.sender_name.as_str() {
            "" => m.sender.clone(),
            name if name == m.sender => name.to_owned(),
            name => format!("{} · {name}", m.sender),
        },
        files: m.files.clone(),
        marks,
        owner: m.owner.clone(),
        context_id: m.context_id.clone().filter(|c| !c.is_empty()),
    }
}

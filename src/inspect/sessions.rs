//! The conversations of databases that keep no regeneration trees, as one list and one messages
//! view: Langflow's (flow, session) pairs, a flat log grouped by run, and LangGraph's threads, at
//! their latest checkpoint. What the model is fed of them is `session_budget.rs`.

use chrono::{DateTime, Utc};

use crate::memory::agent_history::LangflowMessage;
use crate::memory::model::{ChatMessage, PromptMessage, Role, TokenUsage};
use crate::sources::langflow::conversations::conversations as langflow_conversations;
use crate::sources::langflow::messages::session_messages;
use crate::sources::langgraph::decode::message::LangChainMessage;
use crate::sources::langgraph::saver::{LangGraphDb, LangGraphError};
use crate::store::{ConversationShape, Store, StoreError};

/// Why a list page or a conversation could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    LangGraph(#[from] LangGraphError),
    #[error("no messages are stored under session {session:?} of {flow}")]
    EmptySession { session: String, flow: String },
    #[error("thread {0} has no checkpoint of its root graph")]
    NoCheckpoint(String),
    #[error("this database keeps its conversations as regeneration trees, not as sessions")]
    Trees,
}

/// One conversation of the list, whatever the database: a Langflow session of one flow, or a
/// LangGraph thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRow {
    pub key: SessionKey,
    /// The flow's name (Langflow); `None` when the flow is gone or the source has none.
    pub flow_name: Option<String>,
    /// Messages of the conversation; `None` when they could not be read.
    pub messages: Option<i64>,
    /// Checkpoints of every namespace (LangGraph).
    pub checkpoints: Option<i64>,
    pub last_activity: Option<String>,
    /// Who owns it (Langflow: the flow's user name, else its id).
    pub owner: Option<String>,
    /// Why the row could not be read whole.
    pub problem: Option<String>,
}

/// What names a conversation: a session id, with its flow where sessions belong to flows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey {
    pub id: String,
    /// Langflow's `flow_id`: one session id may be used by several flows.
    pub flow_id: Option<String>,
}

/// A page of the list, and whether more follow.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRowPage {
    pub rows: Vec<ConversationRow>,
    pub has_more: bool,
}

/// The conversations from `offset`, at most `limit`, newest activity first; `search` keeps those
/// whose id or message text contains it (any case).
pub async fn conversation_rows(
    store: &Store,
    search: Option<&str>,
    offset: u64,
    limit: u32,
) -> Result<ConversationRowPage, SessionError> {
    match store.profile().capabilities().conversations {
        ConversationShape::FlowSessions => {
            let page = langflow_conversations(store, search, offset, limit).await?;
            let rows = page
                .conversations
                .into_iter()
                .map(|c| ConversationRow {
                    key: SessionKey {
                        id: c.id,
                        flow_id: c.flow_id,
                    },
                    flow_name: c.flow,
                    messages: Some(c.messages),
                    checkpoints: None,
                    last_activity: Some(minute(c.last_activity)),
                    owner: c.owner_name.or(c.owner),
                    problem: None,
                })
                .collect();
            Ok(ConversationRowPage {
                rows,
                has_more: page.has_more,
            })
        }
        ConversationShape::CheckpointThreads => {
            let db = LangGraphDb::open(store)?;
            let page = db
                .thread_page(search, offset as usize, limit as usize)
                .await?;
            let rows = page
                .threads
                .into_iter()
                .map(|t| ConversationRow {
                    key: SessionKey {
                        id: t.id,
                        flow_id: None,
                    },
                    flow_name: None,
                    messages: t.messages.map(|n| n as i64),
                    checkpoints: Some(t.checkpoints),
                    last_activity: t.last_activity,
                    owner: None,
                    problem: t.error,
                })
                .collect();
            Ok(ConversationRowPage {
                rows,
                has_more: page.has_more,
            })
        }
        ConversationShape::RegenerationTrees => Err(SessionError::Trees),
    }
}

fn minute(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M").to_string()
}

/// One message as the view shows it: the neutral message, and what its source adds.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionMessage {
    pub message: ChatMessage,
    /// The run that wrote it (Langflow's `run_id`): the view groups by it.
    pub run: Option<String>,
    /// Who wrote it, as the source names it: Langflow's sender and sender name, LangChain's type
    /// and name.
    pub sender: String,
    pub files: Vec<String>,
    /// What an operator should see at once: the error flag, the error category, a tool's error.
    pub marks: Vec<String>,
    pub owner: Option<String>,
    pub context_id: Option<String>,
}

/// What the model's history is read from: the rows the source's memory reads.
#[derive(Debug, Clone, PartialEq)]
pub enum HistorySource {
    /// Every message stored under the session id (of every flow and owner), and the flow whose
    /// Agent reads them with its owner.
    AgentMemory {
        rows: Vec<LangflowMessage>,
        flow_id: Option<String>,
        owner: Option<String>,
    },
    /// The `messages` channel of the latest checkpoint.
    Checkpoint {
        checkpoint_id: String,
        messages: Vec<LangChainMessage>,
    },
}

/// An open conversation: its messages in order, and what its history is read from.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionView {
    pub key: SessionKey,
    /// What the conversation is, in one line: "session s of flow F, owner O".
    pub heading: String,
    /// How the source keeps it, instead of a tree this view does not draw.
    pub structure: String,
    pub messages: Vec<SessionMessage>,
    pub source: HistorySource,
    /// Entries read but not understood (a checkpoint's channel).
    pub warnings: Vec<String>,
}

impl SessionView {
    /// Whether the model's history has a message window the user can change (Langflow's
    /// `n_messages`).
    pub fn has_message_window(&self) -> bool {
        matches!(self.source, HistorySource::AgentMemory { .. })
    }
}

/// Loads the conversation `key` names.
pub async fn load_session(store: &Store, key: &SessionKey) -> Result<SessionView, SessionError> {
    match store.profile().capabilities().conversations {
        ConversationShape::FlowSessions => load_flow_session(store, key).await,
        ConversationShape::CheckpointThreads => load_thread(store, key).await,
        ConversationShape::RegenerationTrees => Err(SessionError::Trees),
    }
}

async fn load_flow_session(store: &Store, key: &SessionKey) -> Result<SessionView, SessionError> {
    let rows = session_messages(store, &key.id, None).await?;
    let flows = crate::sources::langflow::messages::session_flows(store, &key.id).await?;
    let flow = flows
        .flows
        .iter()
        .find(|f| f.id.as_deref().map(canonical) == key.flow_id.as_deref().map(canonical));
    let flow_label = flow.map_or_else(|| "no flow".to_owned(), |f| f.label());
    let same_flow = |m: &&LangflowMessage| {
        m.flow_id.as_deref().map(canonical) == key.flow_id.as_deref().map(canonical)
    };
    let messages: Vec<SessionMessage> = rows.iter().filter(same_flow).map(flow_message).collect();
    if messages.is_empty() {
        return Err(SessionError::EmptySession {
            session: key.id.clone(),
            flow: flow_label,
        });
    }
    let owner = flow.and_then(|f| f.owner.clone());
    let others = flows.flows.len().saturating_sub(1);
    let shared = match others {
        0 => String::new(),
        n => format!(
            " (the session id is used by {} too)",
            crate::format::count(n as u64, "other flow")
        ),
    };
    Ok(SessionView {
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
        source: HistorySource::AgentMemory {
            rows,
            flow_id: key.flow_id.clone(),
            owner,
        },
        warnings: Vec::new(),
    })
}

fn canonical(id: &str) -> String {
    crate::memory::memory_base::canonical_id(id)
}

fn flow_message(m: &LangflowMessage) -> SessionMessage {
    let human = m.sender.is_empty() || m.sender == crate::memory::agent_history::SENDER_USER;
    let role = if human { Role::User } else { Role::Assistant };
    let mut marks = Vec::new();
    if m.error {
        marks.push("error flag: never fed to the model".to_owned());
    }
    if m.category == crate::memory::agent_history::ERROR_CATEGORY && !m.error {
        marks.push("error category without the error flag: fed to the model".to_owned());
    } else if m.category != "message" && !m.error {
        marks.push(format!("category {}", m.category));
    }
    SessionMessage {
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

async fn load_thread(store: &Store, key: &SessionKey) -> Result<SessionView, SessionError> {
    let db = LangGraphDb::open(store)?;
    let tree = db.tree(&key.id).await?;
    let latest = tree
        .latest()
        .map(|c| c.id.clone())
        .ok_or_else(|| SessionError::NoCheckpoint(key.id.clone()))?;
    let state = db.state_at(&key.id, &latest).await?;
    let messages = state
        .messages
        .iter()
        .enumerate()
        .filter_map(|(index, m)| checkpoint_message(index, m))
        .collect();
    let mut warnings = state.warnings;
    warnings.extend(
        state
            .unread
            .iter()
            .map(|u| format!("message {}: {}", u.index, u.reason)),
    );
    Ok(SessionView {
        key: key.clone(),
        heading: format!(
            "thread {} at its latest checkpoint {} ({})",
            key.id, state.checkpoint_id, state.ts
        ),
        structure: format!(
            "LangGraph keeps a tree of {}, each the whole state after a step: shown \
             here is the latest one's messages channel",
            crate::format::count(tree.root.checkpoints.len() as u64, "checkpoint")
        ),
        messages,
        source: HistorySource::Checkpoint {
            checkpoint_id: state.checkpoint_id,
            messages: state.messages,
        },
        warnings,
    })
}

/// A LangChain message as the view shows it; `None` for a `RemoveMessage`, which no model sees.
pub fn checkpoint_message(index: usize, m: &LangChainMessage) -> Option<SessionMessage> {
    let prompt = m.to_prompt_message()?;
    let usage = m.usage_metadata.as_ref().and_then(|u| {
        Some(TokenUsage {
            input_tokens: u.get("input_tokens")?.as_i64()?,
            output_tokens: u.get("output_tokens")?.as_i64()?,
        })
    });
    let mut marks = Vec::new();
    if m.status.as_deref() == Some("error") {
        marks.push("tool error".to_owned());
    }
    Some(SessionMessage {
        message: ChatMessage {
            id: m.id.clone().unwrap_or_else(|| format!("#{index}")),
            message: prompt,
            created_at: None,
            usage,
        },
        run: None,
        sender: match &m.name {
            Some(name) => format!("{} · {name}", m.kind),
            None => m.kind.clone(),
        },
        files: Vec::new(),
        marks,
        owner: None,
        context_id: None,
    })
}

impl SessionMessage {
    /// The message whole, for the detail popup: text, tool calls and what the source adds.
    pub fn whole(&self) -> String {
        let message = &self.message.message;
        let mut text = format!("{} ({})\n", self.sender, message.role.as_str());
        if let Some(at) = self.message.created_at {
            text += &format!("at {at}\n");
        }
        text += &format!("id {}\n", self.message.id);
        if let Some(run) = &self.run {
            text += &format!("run {run}\n");
        }
        if let Some(owner) = &self.owner {
            text += &format!("owner {owner}\n");
        }
        if let Some(context) = &self.context_id {
            text += &format!("context id {context}\n");
        }
        if let Some(call) = &message.tool_call_id {
            text += &format!("answers tool call {call}\n");
        }
        if let Some(usage) = self.message.usage {
            text += &format!(
                "tokens of its call: {} in, {} out\n",
                usage.input_tokens, usage.output_tokens
            );
        }
        for mark in &self.marks {
            text += &format!("⚑ {mark}\n");
        }
        for file in &self.files {
            text += &format!("file {file}\n");
        }
        text.push('\n');
        text += &message.content.text();
        for call in &message.tool_calls {
            text += &format!("\n\ncalls {}({})", call.name, call.arguments);
        }
        text
    }
}

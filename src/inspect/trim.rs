//! Trim previews and applying them to chat memories.
//!
//! A [`TrimSession`] holds one history with its per-message counts, taken once; every preview
//! replans from those counts, so a TUI recomputes on each parameter change without tokenizing.
//! Applying is for chat memories only: conversation threads are views computed at read time.

use chrono::Utc;
use serde::Serialize;
use serde_json::Value;

use super::AmbiguousId;
use crate::memory::budget::MessageTokens;
use crate::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};
use crate::memory::tokens::{CountCache, TokenCounter};
use crate::memory::trim::{
    ChatMemoryPolicy, MessageCount, MessageCounter, PolicyPlanner, Step, TrimError, TrimOptions,
    TrimPlan, trim_messages_counted,
};
use crate::sources::opened::TrimStart;
use crate::store::rows::{ChatMemoryMessageRow, ChatMemoryRow};
use crate::store::{DeleteScope, MemoryChange, Store, StoreError};
use crate::summarize::{SummarizeError, Summarizer, summarize_plan};

#[derive(Debug, thiserror::Error)]
pub enum TrimInspectError {
    #[error("no chat memory {0}")]
    UnknownMemory(String),
    #[error("memory node {node} has no chat memory for chat {chat}")]
    NoMemory { node: String, chat: String },
    #[error(transparent)]
    Ambiguous(#[from] super::AmbiguousId),
    #[error(
        "trims are applied to chat memories only: {0} is a view computed at read time, and its \
         rows are never deleted; use `trim preview` to see what a trim would do"
    )]
    NotAStoredList(&'static str),
    #[error("chat memory {id} has a bad policy: {source}")]
    BadStoredPolicy { id: String, source: TrimError },
    #[error(transparent)]
    Trim(#[from] TrimError),
    #[error(transparent)]
    Summarize(#[from] SummarizeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a trim counts: model tokens, or messages (`len`).
#[derive(Debug, Clone)]
pub enum TrimCounter {
    Tokens(TokenCounter),
    Messages,
}

impl MessageCounter for TrimCounter {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        match self {
            TrimCounter::Tokens(counter) => counter.count_message(message),
            TrimCounter::Messages => MessageCount.count_message(message),
        }
    }

    fn list_overhead(&self) -> u32 {
        match self {
            TrimCounter::Tokens(counter) => counter.list_overhead(),
            TrimCounter::Messages => MessageCount.list_overhead(),
        }
    }

    fn count_text(&self, text: &str) -> usize {
        match self {
            TrimCounter::Tokens(counter) => counter.count_text(text),
            TrimCounter::Messages => MessageCount.count_text(text),
        }
    }

    fn describe(&self) -> String {
        match self {
            TrimCounter::Tokens(counter) => counter.description(),
            TrimCounter::Messages => MessageCount.describe(),
        }
    }
}

/// One history ready for previews: its messages and their counts.
pub struct TrimSession {
    pub messages: Vec<PromptMessage>,
    counts: Vec<MessageTokens>,
    pub counter: TrimCounter,
}

impl TrimSession {
    /// Counts every message once (through `cache` for token counters).
    pub fn new(messages: Vec<PromptMessage>, counter: TrimCounter, cache: &mut CountCache) -> Self {
        let counts = match &counter {
            TrimCounter::Tokens(tokens) => cache.count_messages(tokens, &messages),
            TrimCounter::Messages => messages
                .iter()
                .map(|m| MessageCount.count_message(m))
                .collect(),
        };
        TrimSession {
            messages,
            counts,
            counter,
        }
    }

    /// A history whose counts were already taken with `counter` (a budget view's). `None`
    /// when they do not line up with the messages.
    pub fn with_counts(
        messages: Vec<PromptMessage>,
        counts: Vec<MessageTokens>,
        counter: TrimCounter,
    ) -> Option<Self> {
        (messages.len() == counts.len()).then_some(TrimSession {
            messages,
            counts,
            counter,
        })
    }

    /// LangChain's `trim_messages` with these options.
    pub fn preview_trim_messages(&self, options: &TrimOptions) -> Result<TrimPlan, TrimError> {
        trim_messages_counted(&self.messages, &self.counts, options, &self.counter)
    }

    /// The planner of a policy over this history (predefined messages come first in its plans).
    pub fn planner<'a>(
        &'a self,
        policy: &'a ChatMemoryPolicy,
    ) -> Result<PolicyPlanner<'a>, TrimError> {
        PolicyPlanner::new(policy, &self.messages, &self.counts, &self.counter)
    }

    /// The policy's plan, without a summary text (its prompt is in the plan).
    pub fn preview_policy(&self, policy: &ChatMemoryPolicy) -> Result<TrimPlan, TrimError> {
        Ok(self.planner(policy)?.plan())
    }

    /// The policy's plan with the summary written by `summarizer`.
    pub async fn summarized_policy_plan(
        &self,
        policy: &ChatMemoryPolicy,
        summarizer: &Summarizer,
    ) -> Result<TrimPlan, TrimInspectError> {
        let planner = self.planner(policy)?;
        Ok(summarize_plan(&planner, planner.plan(), summarizer).await?)
    }
}

/// Where a trim starts when the history's cut is itself a trim (a LangGraph thread's, which
/// `history`, the checkpoint's messages pane and the thread's budget panel show): the messages
/// it chose from, their counts and the options that give that cut again, as a preview session.
/// `trim preview|apply` and the TUI's `T` on a thread all start here.
pub fn trim_from_cut(start: &TrimStart, counter: TrimCounter) -> (TrimSession, TrimOptions) {
    let session = TrimSession {
        messages: start.messages.clone(),
        counts: start.counts.clone(),
        counter,
    };
    (session, start.options.clone())
}

/// A chat memory as stored, with its messages and parsed policy.
pub struct LoadedMemory {
    pub memory: ChatMemoryRow,
    pub policy: ChatMemoryPolicy,
    pub rows: Vec<ChatMemoryMessageRow>,
}

impl LoadedMemory {
    pub fn messages(&self) -> Vec<PromptMessage> {
        self.rows.iter().map(row_message).collect()
    }
}

/// The chat memory `id` names (a whole id or a unique prefix), with its policy and messages.
pub async fn load_memory(store: &Store, id: &str) -> Result<LoadedMemory, TrimInspectError> {
    let unknown = || TrimInspectError::UnknownMemory(id.to_owned());
    let found = store.resolve_chat_memory_id(id).await?;
    let full = AmbiguousId::check("chat memory", id, found)?.ok_or_else(unknown)?;
    let memory = store.chat_memory(&full).await?.ok_or_else(unknown)?;
    let policy = ChatMemoryPolicy::from_json(&memory.policy).map_err(|source| {
        TrimInspectError::BadStoredPolicy {
            id: memory.id.clone(),
            source,
        }
    })?;
    let rows = store.chat_memory_messages(&memory.id, None, 0).await?;
    Ok(LoadedMemory {
        memory,
        policy,
        rows,
    })
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub plan: TrimPlan,
    /// `None` when the plan changed nothing and nothing was written.
    pub change_id: Option<String>,
}

/// Plans `policy` over the memory, summarizes, and applies the plan in one transaction
/// (recorded as `action`).
pub async fn apply_policy(
    store: &Store,
    loaded: &LoadedMemory,
    policy: &ChatMemoryPolicy,
    counter: TrimCounter,
    summarizer: &Summarizer,
    action: &str,
) -> Result<Applied, TrimInspectError> {
    let mut cache = CountCache::default();
    let session = TrimSession::new(loaded.messages(), counter, &mut cache);
    let plan = session.summarized_policy_plan(policy, summarizer).await?;
    let change = change_for(&plan, policy, &loaded.rows, &loaded.memory.id, action);
    if change.is_empty() {
        return Ok(Applied {
            plan,
            change_id: None,
        });
    }
    let change_id = store
        .apply_chat_memory_change(&loaded.memory.id, &change)
        .await?;
    Ok(Applied {
        plan,
        change_id: Some(change_id),
    })
}

/// The rows a plan changes. Plan indices count the policy's predefined messages first; those
/// are configuration, not rows, and are never changed.
pub fn change_for(
    plan: &TrimPlan,
    policy: &ChatMemoryPolicy,
    rows: &[ChatMemoryMessageRow],
    chat_memory_id: &str,
    action: &str,
) -> MemoryChange {
    let predefined = policy.predefined_messages.len();
    let row = |index: usize| index.checked_sub(predefined).and_then(|i| rows.get(i));
    let mut change = MemoryChange {
        action: action.to_owned(),
        policy: policy.to_json(),
        ..MemoryChange::default()
    };
    for step in &plan.steps {
        match step {
            Step::Remove { index, .. } => {
                if let Some(row) = row(*index) {
                    change.removed.push(row.id.clone());
                }
            }
            Step::Modify { index, message, .. } => {
                if let Some(row) = row(*index) {
                    change.modified.push(message_row(row, message));
                }
            }
            Step::Keep { .. } | Step::Summary => {}
        }
    }
    let summary = plan.summary.as_ref().and_then(|slot| {
        let message = slot.message()?;
        let first = slot.summarized.iter().find_map(|&i| row(i))?;
        Some(ChatMemoryMessageRow {
            id: uuid::Uuid::new_v4().to_string(),
            chat_memory_id: chat_memory_id.to_owned(),
            // The first summarized row's place: it is deleted before the summary is written.
            seq: first.seq,
            role: Role::System.as_str().to_owned(),
            content: content_json(&message.content),
            tool_calls: None,
            tool_call_id: None,
            files: None,
            workflow_request_id: None,
            is_summary: true,
            created_at: Utc::now().naive_utc(),
        })
    });
    change.added.extend(summary);
    change
}

/// Adds a message as seed 004's Add Memory node does and applies the memory's policy, both as
/// one change recorded as `add` (one undo takes both back). Creates the memory for a new
/// (memory node, chat id) pair only when `create` says how.
pub struct NewMessage<'a> {
    pub memory_node_id: &'a str,
    pub chat_id: &'a str,
    pub role: Role,
    pub content: &'a str,
    /// Seed 004's `{"files": [...]}` or a bare list.
    pub files: Option<Value>,
    pub workflow_request_id: Option<&'a str>,
    /// The memory to create when the pair has none; `None` refuses a pair without a memory.
    pub create: Option<NewMemory<'a>>,
}

/// The label and policy JSON of a memory [`add_message`] creates.
#[derive(Debug, Clone, Copy)]
pub struct NewMemory<'a> {
    pub label: &'a str,
    pub policy: &'a str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Added {
    pub chat_memory_id: String,
    pub created: bool,
    pub message_id: String,
    pub seq: i64,
    /// The policy's plan over the list with the message; its change id undoes the whole add.
    pub trim: Applied,
}

pub async fn add_message(
    store: &Store,
    new: &NewMessage<'_>,
    counter: TrimCounter,
    summarizer: &Summarizer,
) -> Result<Added, TrimInspectError> {
    let now = Utc::now().naive_utc();
    let existing = store
        .find_chat_memory(new.memory_node_id, new.chat_id)
        .await?;
    let created = existing.is_none();
    let memory = match (existing, new.create) {
        (Some(memory), _) => memory,
        (None, None) => {
            return Err(TrimInspectError::NoMemory {
                node: new.memory_node_id.to_owned(),
                chat: new.chat_id.to_owned(),
            });
        }
        (None, Some(create)) => {
            ChatMemoryPolicy::from_json(create.policy)?;
            let memory = ChatMemoryRow {
                id: uuid::Uuid::new_v4().to_string(),
                memory_node_id: new.memory_node_id.to_owned(),
                chat_id: new.chat_id.to_owned(),
                label: create.label.to_owned(),
                policy: create.policy.to_owned(),
                created_at: now,
                updated_at: now,
            };
            store.create_chat_memory(&memory).await?;
            memory
        }
    };
    let files = new.files.as_ref().map(|files| {
        files
            .get("files")
            .cloned()
            .unwrap_or_else(|| files.clone())
            .to_string()
    });
    let row = ChatMemoryMessageRow {
        id: uuid::Uuid::new_v4().to_string(),
        chat_memory_id: memory.id.clone(),
        seq: 0,
        role: new.role.as_str().to_owned(),
        content: content_json(&Content::Text(new.content.to_owned())),
        tool_calls: None,
        tool_call_id: None,
        files,
        workflow_request_id: new.workflow_request_id.map(str::to_owned),
        is_summary: false,
        created_at: now,
    };
    // The message and what the policy then does to the list are one change, written in one
    // transaction: one undo takes the message back out and restores what the policy removed.
    let mut loaded = load_memory(store, &memory.id).await?;
    let mut row = row;
    row.seq = loaded.rows.last().map_or(0, |last| last.seq + 1);
    let seq = row.seq;
    let message_id = row.id.clone();
    loaded.rows.push(row.clone());
    let mut cache = CountCache::default();
    let session = TrimSession::new(loaded.messages(), counter, &mut cache);
    let plan = session
        .summarized_policy_plan(&loaded.policy, summarizer)
        .await?;
    let mut change = change_for(&plan, &loaded.policy, &loaded.rows, &memory.id, "add");
    // The new message is not stored yet: it is written as the plan leaves it, or not at all.
    let removed_at = change.removed.iter().position(|id| *id == message_id);
    let removed = removed_at.map(|at| change.removed.remove(at)).is_some();
    let modified_at = change.modified.iter().position(|r| r.id == message_id);
    let modified = modified_at.map(|at| change.modified.remove(at));
    if !removed {
        change.added.insert(0, modified.unwrap_or(row));
    }
    let change_id = store.apply_chat_memory_change(&memory.id, &change).await?;
    Ok(Added {
        chat_memory_id: memory.id,
        created,
        message_id,
        seq,
        trim: Applied {
            plan,
            change_id: Some(change_id),
        },
    })
}

/// Deletes messages as seed 004's Delete Memory node does (latest workflow request or all,
/// only the given roles), archived so `trim undo` brings them back. Returns the change id and
/// how many messages went, or `None` when none matched.
pub async fn delete_messages(
    store: &Store,
    loaded: &LoadedMemory,
    scope: DeleteScope,
    roles: &[Role],
) -> Result<Option<(String, usize)>, TrimInspectError> {
    let removed = messages_to_delete(store, loaded, scope, roles).await?;
    if removed.is_empty() {
        return Ok(None);
    }
    let change = MemoryChange {
        action: "delete".to_owned(),
        policy: loaded.memory.policy.clone(),
        removed,
        ..MemoryChange::default()
    };
    let count = change.removed.len();
    let id = store
        .apply_chat_memory_change(&loaded.memory.id, &change)
        .await?;
    Ok(Some((id, count)))
}

/// The ids of the messages a delete would remove, oldest first: what a confirmation counts.
pub async fn messages_to_delete(
    store: &Store,
    loaded: &LoadedMemory,
    scope: DeleteScope,
    roles: &[Role],
) -> Result<Vec<String>, TrimInspectError> {
    let candidates = store
        .chat_memory_delete_candidates(&loaded.memory.id, scope)
        .await?;
    Ok(loaded
        .rows
        .iter()
        .filter(|row| candidates.contains(&row.id))
        .filter(|row| Role::parse(&row.role).is_some_and(|role| roles.contains(&role)))
        .map(|row| row.id.clone())
        .collect())
}

/// The prompt message a stored row stands for: image files become image parts before the text
/// (so `max_images` sees them), a summary row reads as the summary message.
pub fn row_message(row: &ChatMemoryMessageRow) -> PromptMessage {
    let content: Content =
        serde_json::from_str(&row.content).unwrap_or_else(|_| Content::Text(row.content.clone()));
    let tool_calls: Vec<ToolCall> = row
        .tool_calls
        .as_deref()
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default();
    let images: Vec<ContentPart> = image_files(row)
        .into_iter()
        .map(|source| ContentPart::Image { source })
        .collect();
    let content = if images.is_empty() {
        content
    } else {
        let mut parts = images;
        match content {
            Content::Text(text) if text.is_empty() => {}
            Content::Text(text) => parts.push(ContentPart::Text { text }),
            Content::Parts(more) => parts.extend(more),
        }
        Content::Parts(parts)
    };
    PromptMessage {
        role: Role::parse(&row.role).unwrap_or(Role::User),
        content,
        name: None,
        tool_calls,
        tool_call_id: row.tool_call_id.clone(),
    }
}

/// URLs of the row's image files, in order.
fn image_files(row: &ChatMemoryMessageRow) -> Vec<String> {
    files_of(row)
        .iter()
        .filter(|file| is_image(file))
        .filter_map(|file| file.get("url").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn files_of(row: &ChatMemoryMessageRow) -> Vec<Value> {
    row.files
        .as_deref()
        .and_then(|json| serde_json::from_str::<Value>(json).ok())
        .and_then(|value| match value {
            Value::Array(files) => Some(files),
            Value::Object(mut object) => match object.remove("files") {
                Some(Value::Array(files)) => Some(files),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_default()
}

fn is_image(file: &Value) -> bool {
    file.get("content_type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("image/"))
}

/// The row of a modified message: image files still shown as image parts stay in `files`, the
/// rest of the content (stubs included) goes to `content`.
pub fn message_row(
    original: &ChatMemoryMessageRow,
    message: &PromptMessage,
) -> ChatMemoryMessageRow {
    let file_urls = image_files(original);
    let (content, kept_images) = match &message.content {
        Content::Parts(parts) => {
            let mut kept_images = Vec::new();
            let mut rest = Vec::new();
            for part in parts {
                match part {
                    ContentPart::Image { source } if file_urls.contains(source) => {
                        kept_images.push(source.clone());
                    }
                    other => rest.push(other.clone()),
                }
            }
            let content = match rest.as_slice() {
                [] => Content::Text(String::new()),
                [ContentPart::Text { text }] => Content::Text(text.clone()),
                _ => Content::Parts(rest),
            };
            (content, kept_images)
        }
        text => (text.clone(), file_urls.clone()),
    };
    let files: Vec<Value> = files_of(original)
        .into_iter()
        .filter(|file| {
            !is_image(file)
                || file
                    .get("url")
                    .and_then(Value::as_str)
                    .is_some_and(|url| kept_images.iter().any(|k| k == url))
        })
        .collect();
    ChatMemoryMessageRow {
        content: content_json(&content),
        files: (!files.is_empty()).then(|| Value::Array(files).to_string()),
        ..original.clone()
    }
}

fn content_json(content: &Content) -> String {
    serde_json::to_string(content).unwrap_or_default()
}

#[cfg(test)]
#[path = "trim_tests.rs"]
mod tests;

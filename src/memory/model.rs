//! The domain types memory semantics work on: rows as the memory layer stores them, and the
//! prompt messages it builds from them. Plain data, no IO.

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// Dify's `UUID_NIL`: the parent of every pre-0.9 ("legacy") and every service-API message.
pub const UUID_NIL: &str = "00000000-0000-0000-0000-000000000000";

/// One row of Dify's `messages` table: one user turn and the assistant's answer to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMessage {
    pub id: String,
    pub conversation_id: String,
    /// `None` or `""` marks a thread root; [`UUID_NIL`] a legacy or service-API chain.
    pub parent_message_id: Option<String>,
    pub query: String,
    /// `""` until generation finishes, and for stopped or errored turns.
    pub answer: String,
    pub message_tokens: i64,
    pub answer_tokens: i64,
    /// `normal` or `error`.
    pub status: String,
    pub error: Option<String>,
    pub invoke_from: Option<String>,
    pub workflow_run_id: Option<String>,
    /// Second precision in Dify, so ties between rows are possible.
    pub created_at: NaiveDateTime,
    /// `messages.app_mode` (Dify since October 2025): the app mode the turn was answered in,
    /// `None` where the column is missing or empty.
    #[serde(default)]
    pub app_mode: Option<String>,
}

impl StoredMessage {
    /// A finished turn with Dify's column defaults for the rest: status `normal`, no token
    /// counts, no error, no workflow run.
    pub fn turn(
        id: impl Into<String>,
        conversation_id: impl Into<String>,
        parent_message_id: Option<&str>,
        query: impl Into<String>,
        answer: impl Into<String>,
        created_at: NaiveDateTime,
    ) -> StoredMessage {
        StoredMessage {
            id: id.into(),
            conversation_id: conversation_id.into(),
            parent_message_id: parent_message_id.map(Into::into),
            query: query.into(),
            answer: answer.into(),
            message_tokens: 0,
            answer_tokens: 0,
            status: "normal".into(),
            error: None,
            invoke_from: None,
            workflow_run_id: None,
            created_at,
            app_mode: None,
        }
    }

    /// The parent link as the extraction reads it: `None` and `""` both mean "no parent".
    pub fn parent(&self) -> Option<&str> {
        self.parent_message_id.as_deref().filter(|p| !p.is_empty())
    }
}

/// Who a `message_files` row belongs to. Dify treats a NULL `belongs_to` as the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileOwner {
    User,
    Assistant,
}

/// One row of Dify's `message_files`, joined with the upload's name where there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageFile {
    pub id: String,
    pub message_id: String,
    /// `image`, `document`, `audio`, `video` or `custom`.
    pub file_type: String,
    /// `remote_url`, `local_file` or `tool_file`.
    pub transfer_method: String,
    pub url: Option<String>,
    /// Raw column value: `user`, `assistant` or NULL.
    pub belongs_to: Option<String>,
    pub upload_file_id: Option<String>,
    /// `upload_files.name` when the upload row exists.
    pub name: Option<String>,
}

impl MessageFile {
    pub fn owner(&self) -> FileOwner {
        match self.belongs_to.as_deref() {
            Some("assistant") => FileOwner::Assistant,
            _ => FileOwner::User,
        }
    }

    /// What an operator recognises the file by: its upload name, else its URL, else its id.
    pub fn label(&self) -> &str {
        self.name
            .as_deref()
            .or(self.url.as_deref())
            .unwrap_or(&self.id)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "user" | "human" => Some(Role::User),
            "assistant" | "ai" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// One part of a multi-part message. Non-text parts carry only what an inspector shows and what
/// token counters look at (they count text parts only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    Text { text: String },
    Image { source: String },
    Document { source: String },
    Audio { source: String },
    Video { source: String },
}

impl ContentPart {
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// Message content: a plain string, or parts (files first, then text, in Dify's current order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl Content {
    /// The text parts concatenated, as token counters see the content.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Content::Text(s) => std::borrow::Cow::Borrowed(s),
            Content::Parts(parts) => parts.iter().filter_map(ContentPart::text).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Content::Text(s) => s.is_empty(),
            Content::Parts(parts) => parts.is_empty(),
        }
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// JSON text, as the model produced it.
    pub arguments: String,
}

/// A message as sent to a model: what history assembly, node contexts and chat memories produce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptMessage {
    pub role: Role,
    pub content: Content,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl PromptMessage {
    pub fn new(role: Role, content: Content) -> Self {
        PromptMessage {
            role,
            content,
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self::new(role, Content::Text(text.into()))
    }
}

/// A message as LangChain, OpenAI and LangGraph keep it: a [`PromptMessage`] (role, content as
/// text and blocks, name, tool calls, tool call id) with the id its source gave it, when it was
/// written, and the model's token usage on the reply that produced it. Every source's messages
/// become this at the source's edge (`sources/dify/messages.rs` for Dify's rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The source's id of the record holding the message. A record may hold more than one
    /// message (a Dify row holds a question and its answer), so ids can repeat.
    pub id: String,
    #[serde(flatten)]
    pub message: PromptMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<NaiveDateTime>,
    /// On an assistant message: the tokens of the call that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// A model call's token counts, as LangChain's `usage_metadata` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input_tokens: i64,
    pub output_tokens: i64,
}

impl TokenUsage {
    pub fn total_tokens(self) -> i64 {
        self.input_tokens + self.output_tokens
    }
}

/// Anything with an id and a parent link: message rows, node memory records.
pub trait ThreadNode {
    fn node_id(&self) -> &str;
    /// The declared parent. `None` and `Some("")` both mean "no parent".
    fn parent_id(&self) -> Option<&str>;
}

impl ThreadNode for StoredMessage {
    fn node_id(&self) -> &str {
        &self.id
    }

    fn parent_id(&self) -> Option<&str> {
        self.parent()
    }
}

impl<T: ThreadNode + ?Sized> ThreadNode for &T {
    fn node_id(&self) -> &str {
        (**self).node_id()
    }

    fn parent_id(&self) -> Option<&str> {
        (**self).parent_id()
    }
}

/// The parent link with `""` folded into `None`, whatever the implementation returns.
pub(crate) fn declared_parent<N: ThreadNode + ?Sized>(node: &N) -> Option<&str> {
    node.parent_id().filter(|parent| !parent.is_empty())
}

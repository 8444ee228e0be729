//! LangChain's messages as LangGraph stores them (a pydantic v2 object of
//! `langchain_core.messages.*`, or a legacy constructor dict), read into [`LangChainMessage`]:
//! everything an inspector shows, and memscope's neutral [`PromptMessage`] for budgets and trims.

use serde::Serialize;
use serde_json::Value as Json;

use super::lc_json::is_langchain_message;
use super::value::{Object, Value};
use crate::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};

/// One stored message, with its LangChain fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangChainMessage {
    /// The class: `AIMessage`, `ToolMessageChunk`, ...
    pub class: String,
    /// LangChain's `type`: `human`, `ai`, `system`, `tool`, `function`, `chat`, `remove`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: Option<String>,
    /// As stored: a string, or a list of blocks.
    pub content: Json,
    pub name: Option<String>,
    pub tool_calls: Vec<LangChainToolCall>,
    pub tool_call_id: Option<String>,
    /// A tool message's `success` or `error`.
    pub status: Option<String>,
    /// A chat message's free-form role.
    pub role: Option<String>,
    pub usage_metadata: Option<Json>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangChainToolCall {
    pub id: Option<String>,
    pub name: String,
    pub args: Json,
}

impl LangChainMessage {
    /// The message a stored value holds: `None` when it is no LangChain message, an error when it
    /// is one whose fields cannot be read.
    pub fn from_value(value: &Value) -> Option<Result<LangChainMessage, String>> {
        let object = value.as_object()?;
        if !is_message_class(&object.module, &object.class) {
            return None;
        }
        Some(read(object))
    }

    /// The role a model sees; `None` for a `RemoveMessage`, which no model sees.
    pub fn role(&self) -> Option<Role> {
        match self.kind.as_str() {
            "human" => Some(Role::User),
            "ai" => Some(Role::Assistant),
            "system" => Some(Role::System),
            "tool" | "function" => Some(Role::Tool),
            "chat" => Some(
                self.role
                    .as_deref()
                    .and_then(Role::parse)
                    .unwrap_or(Role::User),
            ),
            _ => None,
        }
    }

    /// The content as memscope's parts: text blocks as text, media blocks by their source;
    /// other blocks (tool use, reasoning) carry no text a counter sees and are left out.
    pub fn prompt_content(&self) -> Content {
        match &self.content {
            Json::String(text) => Content::Text(text.clone()),
            Json::Array(blocks) => Content::Parts(blocks.iter().filter_map(content_part).collect()),
            Json::Null => Content::default(),
            other => Content::Text(other.to_string()),
        }
    }

    /// The neutral message budgets and trims work on; `None` for a `RemoveMessage`.
    pub fn to_prompt_message(&self) -> Option<PromptMessage> {
        let mut message = PromptMessage::new(self.role()?, self.prompt_content());
        message.name = self.name.clone();
        message.tool_call_id = self.tool_call_id.clone();
        message.tool_calls = self
            .tool_calls
            .iter()
            .map(|call| ToolCall {
                id: call.id.clone().unwrap_or_default(),
                name: call.name.clone(),
                arguments: call.args.to_string(),
            })
            .collect();
        Some(message)
    }
}

/// Whether an object of this class is a LangChain message.
pub(super) fn is_message_class(module: &str, class: &str) -> bool {
    is_langchain_message(module) && class.contains("Message")
}

fn read(object: &Object) -> Result<LangChainMessage, String> {
    let fields = &object.data;
    if !matches!(fields, Value::Map(_)) {
        return Err(format!("{} holds no fields", object.class));
    }
    let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
    let kind = text("type").unwrap_or_else(|| kind_of_class(&object.class));
    let content = fields.get("content").map_or(Json::Null, Value::to_json);
    let mut tool_calls = fields
        .get("tool_calls")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(tool_call)
        .collect::<Result<Vec<_>, _>>()?;
    if tool_calls.is_empty()
        && let Some(Value::List(calls)) = fields
            .get("additional_kwargs")
            .and_then(|kwargs| kwargs.get("tool_calls"))
    {
        // Messages from before `tool_calls` had its field keep OpenAI's calls here; LangChain
        // reads them from here too.
        tool_calls = calls.iter().filter_map(openai_tool_call).collect();
    }
    Ok(LangChainMessage {
        class: object.class.clone(),
        kind,
        id: text("id"),
        content,
        name: text("name"),
        tool_calls,
        tool_call_id: text("tool_call_id"),
        status: text("status"),
        role: text("role"),
        usage_metadata: fields
            .get("usage_metadata")
            .filter(|usage| !usage.is_null())
            .map(Value::to_json),
    })
}

/// LangChain's `type` for a class stored without one (legacy constructor dicts).
fn kind_of_class(class: &str) -> String {
    let base = class.strip_suffix("Chunk").unwrap_or(class);
    match base {
        "HumanMessage" => "human",
        "AIMessage" => "ai",
        "SystemMessage" => "system",
        "ToolMessage" => "tool",
        "FunctionMessage" => "function",
        "ChatMessage" => "chat",
        "RemoveMessage" => "remove",
        other => return other.to_ascii_lowercase(),
    }
    .to_owned()
}

fn tool_call(value: &Value) -> Result<LangChainToolCall, String> {
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a tool call without a name")?;
    Ok(LangChainToolCall {
        id: value.get("id").and_then(Value::as_str).map(str::to_owned),
        name: name.to_owned(),
        args: value.get("args").map_or(Json::Null, Value::to_json),
    })
}

/// `{"id", "type": "function", "function": {"name", "arguments": "<json text>"}}`.
fn openai_tool_call(value: &Value) -> Option<LangChainToolCall> {
    let function = value.get("function")?;
    let arguments = function
        .get("arguments")
        .and_then(Value::as_str)
        .unwrap_or("{}");
    Some(LangChainToolCall {
        id: value.get("id").and_then(Value::as_str).map(str::to_owned),
        name: function.get("name")?.as_str()?.to_owned(),
        args: serde_json::from_str(arguments)
            .unwrap_or_else(|_| Json::String(arguments.to_owned())),
    })
}

/// One content block: LangChain's older (`image_url`) and standard (`image`, `file`, `audio`,
/// `video` with a `url`, a `file_id` or inline `base64`) shapes.
fn content_part(block: &Json) -> Option<ContentPart> {
    if let Json::String(text) = block {
        return Some(ContentPart::Text { text: text.clone() });
    }
    let kind = block.get("type")?.as_str()?;
    let source = || media_source(block);
    Some(match kind {
        "text" => ContentPart::Text {
            text: block.get("text")?.as_str()?.to_owned(),
        },
        "image_url" => ContentPart::Image {
            source: match block.get("image_url")? {
                Json::String(url) => url.clone(),
                other => other.get("url")?.as_str()?.to_owned(),
            },
        },
        "image" => ContentPart::Image { source: source() },
        "file" => ContentPart::Document { source: source() },
        "audio" => ContentPart::Audio { source: source() },
        "video" => ContentPart::Video { source: source() },
        _ => return None,
    })
}

fn media_source(block: &Json) -> String {
    let field = |key: &str| block.get(key).and_then(Json::as_str);
    if let Some(url) = field("url") {
        return url.to_owned();
    }
    if let Some(id) = field("file_id").or(field("id")) {
        return format!("file {id}");
    }
    let mime = field("mime_type").unwrap_or("data");
    match field("base64").or(field("data")) {
        Some(data) => format!("inline {mime}, {} base64 characters", data.len()),
        None => mime.to_owned(),
    }
}

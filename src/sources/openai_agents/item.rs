//! One stored session item: a Responses API input item, one JSON text per `agent_messages` row,
//! as the SDK's `get_items` decodes it; what the model is handed of it (`strip_internal_input_item_metadata`
//! in `agents/run_internal/items.py`); and what memscope counts and shows of it.

use chrono::{DateTime, Utc};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value as Json, json};

use crate::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};
use crate::sources::conversation::MessageKind;

/// The keys `strip_internal_input_item_metadata` removes from an item before the model sees it:
/// the session's own notes on a tool call, and the author of a compacted item.
pub const METADATA_KEYS: [&str; 3] = [
    "_agents_tool_description",
    "_agents_tool_title",
    "created_by",
];

/// A call item's type and the type of the output that completes it
/// (`_TOOL_CALL_TO_OUTPUT_TYPE` in `agents/run_internal/items.py`).
pub const CALL_OUTPUT_TYPES: [(&str, &str); 8] = [
    ("program", "program_output"),
    ("function_call", "function_call_output"),
    ("custom_tool_call", "custom_tool_call_output"),
    ("shell_call", "shell_call_output"),
    ("apply_patch_call", "apply_patch_call_output"),
    ("computer_call", "computer_call_output"),
    ("local_shell_call", "local_shell_call_output"),
    ("tool_search_call", "tool_search_output"),
];

/// Hosted tool calls the model ran itself: stored and sent, with no output item of their own.
const HOSTED_CALLS: [&str; 7] = [
    "file_search_call",
    "web_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
];

/// The output type a call of `item_type` needs; `None` for any other item.
pub fn output_type_of(item_type: &str) -> Option<&'static str> {
    CALL_OUTPUT_TYPES
        .iter()
        .find(|(call, _)| *call == item_type)
        .map(|(_, output)| *output)
}

pub fn is_output_type(item_type: &str) -> bool {
    CALL_OUTPUT_TYPES
        .iter()
        .any(|(_, output)| *output == item_type)
}

/// One item as `get_items` returned it.
#[derive(Debug, Clone)]
pub struct StoredItem {
    /// The `agent_messages` row.
    pub row: i64,
    pub at: Option<DateTime<Utc>>,
    pub value: Json,
    /// The row's text, as stored.
    pub text: Box<RawValue>,
    /// Whether metadata keys were stripped from `value`: the text still holds them.
    stripped: bool,
    /// When an `EncryptedSession` sealed it.
    pub sealed_at: Option<DateTime<Utc>>,
}

impl StoredItem {
    /// The row decoded as `json.loads` decodes it; `None` for a row the SDK skips as corrupt.
    pub fn decode(row: i64, at: Option<DateTime<Utc>>, text: String) -> Option<StoredItem> {
        let value: Json = serde_json::from_str(&text).ok()?;
        let text = RawValue::from_string(text).ok()?;
        Some(StoredItem {
            row,
            at,
            value,
            text,
            stripped: false,
            sealed_at: None,
        })
    }

    /// The item's `type`, when it is a string.
    pub fn item_type(&self) -> Option<&str> {
        self.value.get("type").and_then(Json::as_str)
    }

    pub fn call_id(&self) -> Option<&str> {
        self.value.get("call_id").and_then(Json::as_str)
    }

    /// The item as the model is handed it: the stored text, its fields in their order, less the
    /// metadata keys.
    pub fn sent(&self) -> Box<RawValue> {
        if !self.stripped {
            return self.text.clone();
        }
        serde_json::from_str::<Fields>(self.text.get())
            .ok()
            .and_then(|Fields(fields)| {
                let kept: Vec<_> = fields
                    .into_iter()
                    .filter(|(key, _)| !METADATA_KEYS.contains(&key.as_str()))
                    .collect();
                serde_json::value::to_raw_value(&Fields(kept)).ok()
            })
            .unwrap_or_else(|| self.text.clone())
    }

    /// The item with the metadata keys stripped, as the SDK's preparation reads it.
    pub fn strip_metadata(&mut self) {
        if let Some(fields) = self.value.as_object_mut() {
            for key in METADATA_KEYS {
                self.stripped |= fields.remove(key).is_some();
            }
        }
    }
}

/// An object's fields in their stored order, each value as written: a stripped item keeps the
/// order and spelling of everything the SDK does not remove.
struct Fields(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push(field);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(key, value)| (key, value)))
    }
}

/// What an item is, and the prompt message its tokens are counted as: a message by its role
/// (a developer message counts as a system one), a call as the assistant's tool call, an
/// output as a tool message, reasoning and compaction as the assistant's, anything else as
/// its JSON.
pub fn prompt_of(value: &Json) -> (MessageKind, PromptMessage) {
    let item_type = value.get("type").and_then(Json::as_str);
    let role = value.get("role").and_then(Json::as_str);
    match (item_type, role) {
        (None | Some("message"), Some(role)) => {
            let role = match role {
                "developer" => Role::System,
                other => Role::parse(other).unwrap_or(Role::User),
            };
            (
                MessageKind::Message,
                PromptMessage::new(role, content_of(value.get("content"))),
            )
        }
        (Some("reasoning"), _) => (
            MessageKind::Reasoning,
            PromptMessage::text(Role::Assistant, reasoning_text(value)),
        ),
        (Some("compaction"), _) => (
            MessageKind::Compaction,
            PromptMessage::text(Role::Assistant, ""),
        ),
        (Some(kind), _) if output_type_of(kind).is_some() || HOSTED_CALLS.contains(&kind) => {
            let arguments = value
                .get("arguments")
                .or_else(|| value.get("input"))
                .or_else(|| value.get("action"))
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                .unwrap_or_default();
            let mut message = PromptMessage::text(Role::Assistant, "");
            message.tool_calls.push(ToolCall {
                id: text_field(value, "call_id")
                    .or_else(|| text_field(value, "id"))
                    .unwrap_or_default(),
                name: text_field(value, "name").unwrap_or_else(|| kind.to_owned()),
                arguments,
            });
            (MessageKind::ToolCall, message)
        }
        (Some(kind), _) if is_output_type(kind) => {
            let mut message = PromptMessage::new(Role::Tool, content_of(value.get("output")));
            message.tool_call_id = text_field(value, "call_id");
            (MessageKind::ToolResult, message)
        }
        _ => (
            MessageKind::Other,
            PromptMessage::text(Role::Assistant, value.to_string()),
        ),
    }
}

/// What the history table prints of an item whose counted text says little: a call as
/// `name(arguments)`, reasoning without a readable summary and compaction as what they are.
pub fn shown(kind: MessageKind, message: &PromptMessage) -> Option<String> {
    match kind {
        MessageKind::ToolCall => message
            .tool_calls
            .first()
            .map(|call| format!("{}({})", call.name, call.arguments)),
        MessageKind::Reasoning if message.content.is_empty() => {
            Some("(reasoning without a readable summary)".to_owned())
        }
        MessageKind::Compaction => Some("(compacted history, opaque)".to_owned()),
        _ => None,
    }
}

fn text_field(value: &Json, key: &str) -> Option<String> {
    value.get(key).and_then(Json::as_str).map(str::to_owned)
}

/// A message's or an output's content: a string, or parts (text, refusals, images, files,
/// audio); anything else as its JSON text.
fn content_of(content: Option<&Json>) -> Content {
    match content {
        None | Some(Json::Null) => Content::default(),
        Some(Json::String(text)) => Content::Text(text.clone()),
        // Text parts alone are the text: every counter counts it, whoever's message it is.
        Some(Json::Array(parts)) => {
            let parts: Vec<ContentPart> = parts.iter().map(part_of).collect();
            if parts.iter().all(|part| part.text().is_some()) {
                Content::Text(parts.iter().filter_map(ContentPart::text).collect())
            } else {
                Content::Parts(parts)
            }
        }
        Some(other) => Content::Text(other.to_string()),
    }
}

fn part_of(part: &Json) -> ContentPart {
    let field = |key: &str| text_field(part, key);
    let source = || {
        field("image_url")
            .or_else(|| field("file_url"))
            .or_else(|| field("filename"))
            .or_else(|| field("file_id"))
            .unwrap_or_default()
    };
    match part.get("type").and_then(Json::as_str) {
        Some("input_image") => ContentPart::Image { source: source() },
        Some("input_file") => ContentPart::Document { source: source() },
        Some("input_audio") => ContentPart::Audio { source: source() },
        _ => ContentPart::Text {
            text: field("text")
                .or_else(|| field("refusal"))
                .unwrap_or_else(|| part.to_string()),
        },
    }
}

/// The summary and reasoning text of a reasoning item, one part a line; its encrypted content
/// is not readable, so it counts as nothing.
fn reasoning_text(value: &Json) -> String {
    ["summary", "content"]
        .iter()
        .filter_map(|key| value.get(*key).and_then(Json::as_array))
        .flatten()
        .filter_map(|part| part.get("text").and_then(Json::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The details `history --json` adds to an item: its row, type and call id.
pub fn details(item: &StoredItem) -> Json {
    let mut details = json!({
        "row": item.row,
        "type": item.item_type(),
        "call_id": item.call_id(),
    });
    if let Some(sealed) = item.sealed_at {
        details["sealed_at"] = json!(crate::sources::conversation::rfc3339_text(&sealed));
        details["age_seconds"] = json!((chrono::Utc::now() - sealed).num_seconds());
    }
    details
}

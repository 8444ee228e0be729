//! Reading Dify's JSON documents item by item: roles, contents with their file parts, tool
//! calls, and one problem for each item that cannot be read.

use serde_json::{Map, Value};

use super::parsed::{NodeMessage, NodeProblem, ParsedMessages};
use crate::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};
use crate::memory::wire::kind_of;

pub(super) fn parse_json(bytes: &[u8], what: &str) -> Result<Value, NodeProblem> {
    serde_json::from_slice(bytes).map_err(|error| NodeProblem::NotJson {
        what: what.to_owned(),
        error: error.to_string(),
    })
}

pub(super) fn as_object<'v>(
    value: &'v Value,
    what: &str,
) -> Result<&'v Map<String, Value>, NodeProblem> {
    value.as_object().ok_or_else(|| NodeProblem::NotAnObject {
        what: what.to_owned(),
    })
}

/// The list under `key`: `Ok(None)` when the key is absent.
pub(super) fn list_at<'v>(
    object: &'v Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<&'v Vec<Value>>, NodeProblem> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(NodeProblem::NotAList {
            what: what.to_owned(),
            key: key.to_owned(),
            found: kind_of(other).to_owned(),
        }),
    }
}

/// An optional string field: absent and null read as `None`.
pub(super) fn opt_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` is {}, not a string", kind_of(other))),
    }
}

pub(super) fn string_or_empty(object: &Map<String, Value>, key: &str) -> Result<String, String> {
    Ok(opt_string(object, key)?.unwrap_or_default())
}

/// Per-item failures: a role Dify does not know, or anything else wrong with the item.
pub(super) enum ItemError {
    UnknownRole(String),
    Bad(String),
}

impl ItemError {
    pub(super) fn into_problem(self, what: &str, index: usize) -> NodeProblem {
        let what = what.to_owned();
        match self {
            ItemError::UnknownRole(role) => NodeProblem::UnknownRole { what, index, role },
            ItemError::Bad(error) => NodeProblem::BadItem { what, index, error },
        }
    }
}

impl From<String> for ItemError {
    fn from(error: String) -> Self {
        ItemError::Bad(error)
    }
}

pub(super) fn role_of(object: &Map<String, Value>) -> Result<Role, ItemError> {
    match object.get("role") {
        Some(Value::String(role)) => {
            Role::parse(role).ok_or_else(|| ItemError::UnknownRole(role.clone()))
        }
        Some(other) => Err(ItemError::Bad(format!(
            "`role` is {}, not a string",
            kind_of(other)
        ))),
        None => Err(ItemError::Bad("no `role`".to_owned())),
    }
}

pub(super) fn item_object(item: &Value) -> Result<&Map<String, Value>, ItemError> {
    item.as_object()
        .ok_or_else(|| ItemError::Bad(format!("{}, not an object", kind_of(item))))
}

/// A file part labelled by what an operator recognises it by. `kind` is Dify's file or content
/// type; `custom` and unknown kinds are sent as documents.
fn file_part(kind: &str, source: String) -> ContentPart {
    match kind {
        "image" => ContentPart::Image { source },
        "audio" => ContentPart::Audio { source },
        "video" => ContentPart::Video { source },
        _ => ContentPart::Document { source },
    }
}

/// The first non-empty string among `keys`.
fn first_label(object: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .filter_map(|key| object.get(*key)?.as_str())
        .find(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A node-memory file reference `{type, transfer_method, upload_file_id?, tool_file_id?, url?}`.
fn file_reference(value: &Value) -> Result<ContentPart, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("a file reference is {}", kind_of(value)))?;
    let kind = opt_string(object, "type")?.unwrap_or_default();
    let source = first_label(
        object,
        &[
            "filename",
            "upload_file_id",
            "tool_file_id",
            "url",
            "remote_url",
        ],
    )
    .unwrap_or_else(|| "file without a reference".to_owned());
    Ok(file_part(&kind, source))
}

pub(super) fn file_references(
    object: &Map<String, Value>,
    key: &str,
) -> Result<Vec<ContentPart>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(files)) => files.iter().map(file_reference).collect(),
        Some(other) => Err(format!("`{key}` is {}, not a list", kind_of(other))),
    }
}

/// Files first, then the text: Dify's current order. Plain text when there are no files.
pub(super) fn files_then_text(mut files: Vec<ContentPart>, text: String) -> Content {
    if files.is_empty() {
        return Content::Text(text);
    }
    files.push(ContentPart::Text { text });
    Content::Parts(files)
}

/// A pydantic dump of a content part: `{type: "text", data}` or a multimodal part whose data
/// was blanked (`file_ref`) or truncated, labelled by file name, reference or URL.
fn content_part(value: &Value) -> Result<ContentPart, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("a content part is {}", kind_of(value)))?;
    let kind = opt_string(object, "type")?.ok_or("a content part has no `type`")?;
    if kind == "text" {
        let text = match opt_string(object, "data")? {
            Some(text) => text,
            None => string_or_empty(object, "text")?,
        };
        return Ok(ContentPart::Text { text });
    }
    let source = first_label(object, &["filename", "file_ref", "url"])
        .unwrap_or_else(|| format!("{kind} data (blanked)"));
    Ok(file_part(&kind, source))
}

pub(super) fn content(value: Option<&Value>) -> Result<Content, String> {
    match value {
        None | Some(Value::Null) => Ok(Content::default()),
        Some(Value::String(text)) => Ok(Content::Text(text.clone())),
        Some(Value::Array(parts)) => Ok(Content::Parts(
            parts.iter().map(content_part).collect::<Result<_, _>>()?,
        )),
        Some(other) => Err(format!(
            "`content` is {}, not a string or a list",
            kind_of(other)
        )),
    }
}

/// Arguments as the model produced them: JSON text, or an object some writers store parsed.
fn arguments_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// `[{id, type: "function", function: {name, arguments}}]`, or the flat `{id, name, arguments}`.
fn tool_calls(object: &Map<String, Value>) -> Result<Vec<ToolCall>, String> {
    let calls = match object.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(calls)) => calls,
        Some(other) => return Err(format!("`tool_calls` is {}, not a list", kind_of(other))),
    };
    calls
        .iter()
        .map(|call| {
            let call = call
                .as_object()
                .ok_or_else(|| format!("a tool call is {}", kind_of(call)))?;
            let function = match call.get("function") {
                Some(Value::Object(function)) => function,
                _ => call,
            };
            Ok(ToolCall {
                id: string_or_empty(call, "id")?,
                name: string_or_empty(function, "name")?,
                arguments: arguments_text(function.get("arguments")),
            })
        })
        .collect()
}

/// One item of `outputs["context"]`: a pydantic dump of a PromptMessage.
pub(super) fn context_message(item: &Value) -> Result<PromptMessage, ItemError> {
    let object = item_object(item)?;
    let role = role_of(object)?;
    Ok(PromptMessage {
        role,
        content: content(object.get("content"))?,
        name: opt_string(object, "name")?,
        tool_calls: tool_calls(object)?,
        tool_call_id: opt_string(object, "tool_call_id")?,
    })
}

/// One item of `process_data["prompts"]` (PromptMessageUtil): `{role, text, files[],
/// tool_calls?}`, image and audio data saved truncated.
pub(super) fn prompt_message(item: &Value) -> Result<PromptMessage, ItemError> {
    let object = item_object(item)?;
    let role = role_of(object)?;
    let files = match object.get("files") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(files)) => files
            .iter()
            .map(|file| {
                let file = file
                    .as_object()
                    .ok_or_else(|| format!("a file is {}", kind_of(file)))?;
                let kind = opt_string(file, "type")?.unwrap_or_default();
                Ok(file_part(&kind, format!("{kind} data (truncated)")))
            })
            .collect::<Result<_, String>>()?,
        Some(other) => {
            return Err(ItemError::Bad(format!(
                "`files` is {}, not a list",
                kind_of(other)
            )));
        }
    };
    let mut message = PromptMessage::new(
        role,
        files_then_text(files, string_or_empty(object, "text")?),
    );
    message.tool_calls = tool_calls(object)?;
    Ok(message)
}

/// Parses every item of `items`, keeping the readable ones and a problem per unreadable one.
pub(super) fn parse_items(
    items: &[Value],
    what: &str,
    parse: impl Fn(&Value) -> Result<PromptMessage, ItemError>,
    source: impl Fn(usize) -> String,
) -> ParsedMessages {
    let mut parsed = ParsedMessages {
        found: true,
        ..ParsedMessages::default()
    };
    for (index, item) in items.iter().enumerate() {
        match parse(item) {
            Ok(message) => parsed.messages.push(NodeMessage {
                message,
                source: source(index),
            }),
            Err(error) => parsed.problems.push(error.into_problem(what, index)),
        }
    }
    parsed
}

//! Message lists in the OpenAI chat wire format (what `tokens --input` and trim previews read):
//! `[{role, content, name?, tool_calls?, tool_call_id?}]`, content a string or a list of parts.

use serde_json::Value;

use super::model::{Content, ContentPart, PromptMessage, Role, ToolCall};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("expected a JSON list of messages, found {0}")]
    NotAList(&'static str),
    #[error("message {index}: {problem}")]
    Message { index: usize, problem: String },
}

/// Parses a whole list; the first malformed message is reported with its index.
pub fn parse_messages(json: &str) -> Result<Vec<PromptMessage>, WireError> {
    let value: Value = serde_json::from_str(json).map_err(|e| WireError::Json(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(WireError::NotAList(kind_of(&value)));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            parse_message(item).map_err(|problem| WireError::Message { index, problem })
        })
        .collect()
}

/// A JSON value's kind, for messages such as "`context` is a string, not a list".
pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn optional_string(
    object: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "`{key}` must be a string, found {}",
            kind_of(other)
        )),
    }
}

/// Parses one message object.
pub fn parse_message(item: &Value) -> Result<PromptMessage, String> {
    let Value::Object(object) = item else {
        return Err(format!("expected an object, found {}", kind_of(item)));
    };
    let role_name = optional_string(object, "role")?.ok_or("missing `role`")?;
    let role = Role::parse(&role_name).ok_or_else(|| {
        format!("unknown role `{role_name}` (expected system, user, assistant or tool)")
    })?;
    let content = match object.get("content") {
        None | Some(Value::Null) => Content::default(),
        Some(Value::String(s)) => Content::Text(s.clone()),
        Some(Value::Array(parts)) => Content::Parts(
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| parse_part(p).map_err(|e| format!("content part {i}: {e}")))
                .collect::<Result<_, _>>()?,
        ),
        Some(other) => {
            return Err(format!(
                "`content` must be a string or a list of parts, found {}",
                kind_of(other)
            ));
        }
    };
    let tool_calls = match object.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| parse_tool_call(c).map_err(|e| format!("tool call {i}: {e}")))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`tool_calls` must be a list, found {}",
                kind_of(other)
            ));
        }
    };
    Ok(PromptMessage {
        role,
        content,
        name: optional_string(object, "name")?,
        tool_calls,
        tool_call_id: optional_string(object, "tool_call_id")?,
    })
}

fn parse_part(part: &Value) -> Result<ContentPart, String> {
    let Value::Object(object) = part else {
        return Err(format!("expected an object, found {}", kind_of(part)));
    };
    let part_type = optional_string(object, "type")?.ok_or("missing `type`")?;
    // A nested `{url}` object (OpenAI's image_url) or a plain string names the source.
    let source = |key: &str| -> String {
        match object.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Object(inner)) => inner
                .get("url")
                .or_else(|| inner.get("filename"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    };
    Ok(match part_type.as_str() {
        "text" => ContentPart::Text {
            text: optional_string(object, "text")?.ok_or("text part without `text`")?,
        },
        "image_url" | "image" => ContentPart::Image {
            source: source("image_url") + &source("url"),
        },
        "input_audio" | "audio" => ContentPart::Audio {
            source: source("input_audio") + &source("url"),
        },
        "file" | "document" => ContentPart::Document {
            source: source("file") + &source("url"),
        },
        "video" | "video_url" => ContentPart::Video {
            source: source("video_url") + &source("url"),
        },
        other => return Err(format!("unknown content part type `{other}`")),
    })
}

fn parse_tool_call(call: &Value) -> Result<ToolCall, String> {
    let Value::Object(object) = call else {
        return Err(format!("expected an object, found {}", kind_of(call)));
    };
    let function = match object.get("function") {
        Some(Value::Object(f)) => f,
        _ => return Err("missing `function` object".into()),
    };
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        // Some clients send the arguments as an object rather than JSON text.
        Some(other) => other.to_string(),
    };
    Ok(ToolCall {
        id: optional_string(object, "id")?.unwrap_or_default(),
        name: optional_string(function, "name")?.ok_or("function without `name`")?,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_strings_parts_names_and_tool_calls() {
        let json = r#"[
            {"role": "system", "content": "be brief"},
            {"role": "user", "name": "ann", "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "https://x/cat.png"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "42"}
        ]"#;
        let messages = parse_messages(json).unwrap();
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[1].name.as_deref(), Some("ann"));
        assert_eq!(
            messages[1].content,
            Content::Parts(vec![
                ContentPart::Text {
                    text: "what is this?".into()
                },
                ContentPart::Image {
                    source: "https://x/cat.png".into()
                },
            ])
        );
        assert_eq!(messages[2].tool_calls[0].name, "lookup");
        assert_eq!(messages[2].tool_calls[0].arguments, "{\"q\":1}");
        assert!(messages[2].content.is_empty());
        assert_eq!(messages[3].role, Role::Tool);
        assert_eq!(messages[3].tool_call_id.as_deref(), Some("call_1"));
    }

    #[test]
    fn errors_name_the_message_and_the_problem() {
        assert!(matches!(parse_messages("{"), Err(WireError::Json(_))));
        assert_eq!(
            parse_messages(r#"{"role":"user"}"#),
            Err(WireError::NotAList("an object"))
        );
        let err =
            parse_messages(r#"[{"role":"user","content":"a"},{"role":"robot"}]"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "message 1: unknown role `robot` (expected system, user, assistant or tool)"
        );
        let err = parse_messages(r#"[{"content":"a"}]"#).unwrap_err();
        assert_eq!(err.to_string(), "message 0: missing `role`");
        let err = parse_messages(r#"[{"role":"user","content":5}]"#).unwrap_err();
        assert!(err.to_string().contains("found a number"), "{err}");
        let err =
            parse_messages(r#"[{"role":"user","content":[{"type":"hologram"}]}]"#).unwrap_err();
        assert!(err.to_string().contains("content part 0"), "{err}");
        let err =
            parse_messages(r#"[{"role":"assistant","tool_calls":[{"id":"x"}]}]"#).unwrap_err();
        assert!(err.to_string().contains("tool call 0"), "{err}");
    }

    #[test]
    fn object_arguments_are_kept_as_json_text() {
        let json = r#"[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":{"a":1}}}]}]"#;
        assert_eq!(
            parse_messages(json).unwrap()[0].tool_calls[0].arguments,
            r#"{"a":1}"#
        );
    }
}

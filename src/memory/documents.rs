//! The text a memory base embeds for a message, exactly as Langflow's
//! `build_documents_from_messages` builds it. Pure: both syncs split this text into chunks.

use serde_json::Value;

/// The text Langflow's `build_documents_from_messages` embeds for a message: its text stripped,
/// then the text, code (fenced) and JSON fragments of its content blocks, blank-line separated.
pub fn document_text(text: &str, content_blocks: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !text.trim().is_empty() {
        parts.push(text.trim().to_owned());
    }
    let blocks: Value = serde_json::from_str(content_blocks).unwrap_or(Value::Null);
    let mut fragments: Vec<String> = Vec::new();
    for block in blocks.as_array().into_iter().flatten() {
        let contents = block.get("contents").and_then(Value::as_array);
        for entry in contents.into_iter().flatten() {
            let text_of = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("").trim();
            let fragment = match entry.get("type").and_then(Value::as_str) {
                Some("text") => text_of("text").to_owned(),
                Some("code") => {
                    let language = entry.get("language").and_then(Value::as_str).unwrap_or("");
                    let code = text_of("code");
                    if code.is_empty() {
                        String::new()
                    } else {
                        format!("```{language}\n{code}\n```")
                    }
                }
                Some("json") => match entry.get("data") {
                    None | Some(Value::Null) => String::new(),
                    Some(data) => python_json(data),
                },
                _ => continue,
            };
            if !fragment.is_empty() {
                fragments.push(fragment);
            }
        }
    }
    if !fragments.is_empty() {
        parts.push(fragments.join("\n\n"));
    }
    parts.join("\n\n")
}

/// JSON as Python's `json.dumps(data, ensure_ascii=False)` writes it: `", "` and `": "`
/// separators (keys in the order serde_json keeps them).
fn python_json(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_langflows() {
        let blocks = r#"[{"title": "t", "contents": [
            {"type": "text", "text": " step one "},
            {"type": "code", "code": "print(1)\n", "language": "python"},
            {"type": "json", "data": {"a": [1, "é"]}},
            {"type": "media", "urls": ["x"]}
        ]}]"#;
        assert_eq!(
            document_text(" Hello ", blocks),
            "Hello\n\nstep one\n\n```python\nprint(1)\n```\n\n{\"a\": [1, \"é\"]}"
        );
        assert_eq!(document_text("Hello", "not json"), "Hello");
        assert_eq!(document_text(" ", "[]"), "");
    }
}

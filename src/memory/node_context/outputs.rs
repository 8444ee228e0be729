//! Design B and the prompts sent: an LLM execution's `outputs["context"]` with its reply, and
//! its `process_data["prompts"]`.

use serde::Serialize;
use serde_json::Value;

use super::items::{as_object, context_message, list_at, parse_items, parse_json, prompt_message};
use super::parsed::ParsedMessages;

/// Design B (reference §3.3, §3.4): the `context` list of an LLM execution's outputs, and the
/// reply (`text`) the node produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OutputsContext {
    pub reply: Option<String>,
    pub context: ParsedMessages,
}

/// Parses an execution's `outputs` column (or its offloaded full copy). `what` names it in
/// problems.
pub fn parse_outputs(bytes: &[u8], what: &str) -> OutputsContext {
    let value = match parse_json(bytes, what) {
        Ok(value) => value,
        Err(problem) => {
            return OutputsContext {
                reply: None,
                context: ParsedMessages::failed(problem),
            };
        }
    };
    let object = match as_object(&value, what) {
        Ok(object) => object,
        Err(problem) => {
            return OutputsContext {
                reply: None,
                context: ParsedMessages::failed(problem),
            };
        }
    };
    let reply = object
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let context = match list_at(object, "context", what) {
        Ok(Some(items)) => parse_items(items, what, context_message, |i| format!("context[{i}]")),
        Ok(None) => ParsedMessages::default(),
        Err(problem) => ParsedMessages::failed(problem),
    };
    OutputsContext { reply, context }
}

/// What the node sent: `process_data["prompts"]`, system prompt included.
pub fn parse_prompts(bytes: &[u8], what: &str) -> ParsedMessages {
    let value = match parse_json(bytes, what) {
        Ok(value) => value,
        Err(problem) => return ParsedMessages::failed(problem),
    };
    let object = match as_object(&value, what) {
        Ok(object) => object,
        Err(problem) => return ParsedMessages::failed(problem),
    };
    match list_at(object, "prompts", what) {
        Ok(Some(items)) => parse_items(items, what, prompt_message, |i| format!("prompts[{i}]")),
        Ok(None) => ParsedMessages::default(),
        Err(problem) => ParsedMessages::failed(problem),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::memory::model::{Content, ContentPart, PromptMessage, Role};
    use crate::memory::node_context::fixtures::{bytes, texts};
    use crate::memory::node_context::parsed::NodeProblem;

    #[test]
    fn design_b_context_reads_roles_parts_tool_calls_and_blanked_files() {
        let outputs = json!({
            "text": "done",
            "context": [
                {"role": "user", "content": [
                    {"type": "image", "base64_data": "", "url": "", "filename": "hotel.png",
                     "file_ref": "upload-1"},
                    {"type": "text", "data": "Plan Kyoto"},
                ], "name": null},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "web_search", "arguments": "{\"q\": \"x\"}"}},
                ]},
                {"role": "tool", "content": "{\"hits\": 3}", "tool_call_id": "call_1"},
                {"role": "assistant", "content": "done"},
            ],
        });
        let parsed = parse_outputs(&bytes(outputs), "outputs");
        assert_eq!(parsed.reply.as_deref(), Some("done"));
        assert!(parsed.context.found);
        assert!(
            parsed.context.problems.is_empty(),
            "{:?}",
            parsed.context.problems
        );
        let messages = &parsed.context.messages;
        assert_eq!(messages.len(), 4);
        assert_eq!(
            messages[0].message.content,
            Content::Parts(vec![
                ContentPart::Image {
                    source: "hotel.png".into()
                },
                ContentPart::Text {
                    text: "Plan Kyoto".into()
                },
            ])
        );
        assert_eq!(messages[1].message.tool_calls[0].name, "web_search");
        assert_eq!(
            messages[1].message.tool_calls[0].arguments,
            "{\"q\": \"x\"}"
        );
        assert_eq!(messages[2].message.tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(messages[3].source, "context[3]");
    }

    #[test]
    fn design_b_bad_items_are_reported_and_the_rest_still_shows() {
        let outputs = json!({"context": [
            {"role": "user", "content": "hello"},
            {"role": "wizard", "content": "abracadabra"},
            "just a string",
            {"role": "assistant", "content": 42},
            {"content": "no role"},
            {"role": "assistant", "content": "hi"},
        ]});
        let parsed = parse_outputs(&bytes(outputs), "outputs of e1");
        assert_eq!(
            texts(&parsed.context.messages),
            [(Role::User, "hello".into()), (Role::Assistant, "hi".into())]
        );
        let problems = &parsed.context.problems;
        assert_eq!(problems.len(), 4);
        assert_eq!(
            problems[0],
            NodeProblem::UnknownRole {
                what: "outputs of e1".into(),
                index: 1,
                role: "wizard".into()
            }
        );
        assert!(matches!(
            &problems[1],
            NodeProblem::BadItem { index: 2, .. }
        ));
        assert!(
            problems[2].to_string().contains("item 3"),
            "{}",
            problems[2]
        );
        assert!(
            problems[3].to_string().contains("no `role`"),
            "{}",
            problems[3]
        );
    }

    #[test]
    fn design_b_document_level_failures() {
        let not_json = parse_outputs(b"{\"text\": \"cut", "outputs");
        assert!(matches!(
            not_json.context.problems[..],
            [NodeProblem::NotJson { .. }]
        ));
        let not_object = parse_outputs(b"[1, 2]", "outputs");
        assert!(matches!(
            not_object.context.problems[..],
            [NodeProblem::NotAnObject { .. }]
        ));
        let not_list = parse_outputs(&bytes(json!({"context": "oops"})), "outputs");
        assert_eq!(
            not_list.context.problems[0].to_string(),
            "outputs: `context` is a string, not a list"
        );
        let main_branch = parse_outputs(&bytes(json!({"text": "hi", "usage": {}})), "outputs");
        assert!(!main_branch.context.found);
        assert!(main_branch.context.problems.is_empty());
        assert_eq!(main_branch.reply.as_deref(), Some("hi"));
    }

    #[test]
    fn prompts_keep_the_system_prompt_and_truncated_files() {
        let data = json!({"model_mode": "chat", "prompts": [
            {"role": "system", "text": "Be brief.", "files": []},
            {"role": "user", "text": "What is this?",
             "files": [{"type": "image", "data": "data:image...[TRUNCATED]...==", "detail": "high"}]},
            {"role": "assistant", "text": "", "files": [],
             "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
        ]});
        let parsed = parse_prompts(&bytes(data), "process_data");
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(
            parsed.messages[0].message,
            PromptMessage::text(Role::System, "Be brief.")
        );
        assert_eq!(
            parsed.messages[1].message.content,
            Content::Parts(vec![
                ContentPart::Image {
                    source: "image data (truncated)".into()
                },
                ContentPart::Text {
                    text: "What is this?".into()
                },
            ])
        );
        assert_eq!(
            parsed.messages[2].message.tool_calls[0].arguments,
            "{\"a\":1}"
        );
        let completion = parse_prompts(
            &bytes(json!({"prompts": [{"role": "user", "text": "hi"}]})),
            "p",
        );
        assert_eq!(texts(&completion.messages), [(Role::User, "hi".into())]);
        let broken = parse_prompts(&bytes(json!({"prompts": {"role": "user"}})), "p");
        assert!(matches!(
            broken.problems[..],
            [NodeProblem::NotAList { .. }]
        ));
    }
}

use serde_json::{Value as Json, json};

use super::*;
use crate::memory::model::{Content, Role};
use crate::memory::trim::MessageCount;
use crate::sources::langgraph::decode::budget::channel_budget;
use crate::sources::langgraph::decode::decode_typed;

/// The message of `class` with `kwargs`, as LangGraph stores it in a legacy JSON constructor.
fn stored(class: &str, kwargs: Json) -> LangChainMessage {
    let constructor = json!({
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", class],
        "kwargs": kwargs,
    });
    let decoded = decode_typed("json", constructor.to_string().as_bytes(), None).unwrap();
    LangChainMessage::from_value(&decoded.value)
        .expect("a LangChain message")
        .unwrap()
}

#[test]
fn a_human_message_is_labelled_by_its_type_and_class_and_seen_as_the_user() {
    let shown = checkpoint_message(&stored(
        "HumanMessage",
        json!({"content": "hello", "type": "human", "id": "human-1"}),
    ));
    assert_eq!(shown.label, "human (HumanMessage)");
    assert_eq!(shown.id.as_deref(), Some("human-1"));
    assert_eq!(shown.content, json!("hello"));
    let prompt = shown.prompt.expect("a model sees it");
    assert_eq!(prompt.role, Role::User);
    assert_eq!(prompt.content.text(), "hello");
}

#[test]
fn an_ai_message_keeps_its_tool_calls_arguments_as_json_and_its_usage() {
    let ai = stored(
        "AIMessage",
        json!({
            "content": "",
            "name": "agent",
            "tool_calls": [
                {"id": "call_1", "name": "lookup", "args": {"query": "hours", "limit": 3}},
                {"name": "noop"},
            ],
            "usage_metadata": {"input_tokens": 12, "output_tokens": 3},
        }),
    );
    let shown = checkpoint_message(&ai);
    assert_eq!(shown.label, "ai (AIMessage)");
    assert_eq!(shown.name.as_deref(), Some("agent"));
    assert_eq!(
        shown.tool_calls,
        [
            StoredToolCall {
                id: Some("call_1".into()),
                name: "lookup".into(),
                arguments: json!({"query": "hours", "limit": 3}),
            },
            StoredToolCall {
                id: None,
                name: "noop".into(),
                arguments: json!(null),
            },
        ]
    );
    assert_eq!(
        shown.usage,
        Some(json!({"input_tokens": 12, "output_tokens": 3}))
    );
    let prompt = shown.prompt.expect("a model sees it");
    assert_eq!(prompt.role, Role::Assistant);
    assert_eq!(prompt.tool_calls[0].name, "lookup");
    assert_eq!(prompt.tool_calls[0].id, "call_1");
}

#[test]
fn a_tool_result_names_the_call_it_answers_and_its_status() {
    let tool = stored(
        "ToolMessage",
        json!({"content": "9:00 to 19:00", "tool_call_id": "call_1", "status": "error"}),
    );
    let shown = checkpoint_message(&tool);
    assert_eq!(shown.label, "tool (ToolMessage)");
    assert_eq!(shown.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(shown.status.as_deref(), Some("error"));
    let prompt = shown.prompt.expect("a model sees it");
    assert_eq!(prompt.role, Role::Tool);
    assert_eq!(prompt.tool_call_id.as_deref(), Some("call_1"));
}

#[test]
fn a_system_message_and_a_chat_message_take_their_roles() {
    let system = checkpoint_message(&stored("SystemMessage", json!({"content": "be brief"})));
    assert_eq!(system.label, "system (SystemMessage)");
    assert_eq!(system.prompt.map(|p| p.role), Some(Role::System));

    let chat = checkpoint_message(&stored(
        "ChatMessage",
        json!({"content": "hi", "role": "assistant"}),
    ));
    assert_eq!(chat.label, "chat (ChatMessage)");
    assert_eq!(chat.prompt.map(|p| p.role), Some(Role::Assistant));
}

#[test]
fn content_blocks_stay_as_stored_while_a_model_sees_their_text() {
    let blocks = json!([{"type": "text", "text": "look"}, {"type": "image_url", "image_url": "u"}]);
    let shown = checkpoint_message(&stored("HumanMessage", json!({"content": blocks})));
    assert_eq!(shown.content, blocks);
    let prompt = shown.prompt.expect("a model sees it");
    assert!(matches!(prompt.content, Content::Parts(ref parts) if parts.len() == 2));
    assert_eq!(prompt.content.text(), "look");
}

#[test]
fn a_remove_message_is_shown_but_no_model_sees_it() {
    let shown = checkpoint_message(&stored(
        "RemoveMessage",
        json!({"content": "", "id": "remove-1"}),
    ));
    assert_eq!(shown.label, "remove (RemoveMessage)");
    assert_eq!(shown.id.as_deref(), Some("remove-1"));
    assert!(shown.prompt.is_none());
}

#[test]
fn the_budget_of_a_checkpoint_is_the_channel_s_under_the_recommended_trim() {
    let said = |class: &str, text: &str| stored(class, json!({"content": text}));
    let messages = [
        said("SystemMessage", "be brief"),
        said("HumanMessage", "one"),
        said("RemoveMessage", ""),
        said("AIMessage", "1"),
        said("HumanMessage", "two"),
        said("AIMessage", "2"),
    ];
    let checkpoint = CheckpointState {
        namespace: String::new(),
        checkpoint_id: "1-a".into(),
        ts: "2026-03-02T10:15:00+00:00".into(),
        messages: messages.iter().map(checkpoint_message).collect(),
        warnings: Vec::new(),
        writes: Vec::new(),
    };
    let budget = ThreadHistories
        .budget(&checkpoint, &MessageCount, 3)
        .unwrap();
    assert_eq!(budget, channel_budget(&messages, &MessageCount, 3).unwrap());
    // The removal is left out: five messages are counted, and the cut starts on a human one.
    assert_eq!(budget.kept, [true, false, false, true, true]);
}

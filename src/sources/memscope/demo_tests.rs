use super::*;
use crate::demo::tests::small;
use crate::memory::model::Content;

#[test]
fn policies_cover_every_knob() {
    let demo = small();
    let policies: Vec<Value> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.chat_memories)
        .map(|memory| serde_json::from_str(&memory.policy).expect("policy JSON"))
        .collect();
    let values = |key: &str| -> Vec<Value> {
        policies
            .iter()
            .filter_map(|policy| policy.get(key).cloned())
            .collect()
    };
    for (key, expected) in [
        ("limit_type", json!("messages")),
        ("limit_type", json!("tokens")),
        ("trim_mode", json!("continuous")),
        ("trim_mode", json!("threshold")),
        ("strategy", json!("drop_oldest")),
        ("strategy", json!("drop_middle")),
        ("keep_first", json!(2)),
        ("min_messages", json!(4)),
        ("clear_tool_results", json!(true)),
        ("trigger", json!(500)),
        ("target", json!(100)),
        ("max_images", json!(1)),
    ] {
        assert!(values(key).contains(&expected), "{key} = {expected}");
    }
    assert!(
        values("predefined_messages")
            .iter()
            .any(|list| list.as_array().is_some_and(|l| !l.is_empty()))
    );
    let summarizations = values("summarization");
    assert!(
        summarizations
            .iter()
            .any(|s| s["enabled"] == true && s["prompt"].is_string())
    );
    assert!(summarizations.iter().any(|s| s["enabled"] == false));
}

#[test]
fn tool_calls_pair_with_results_and_one_summary_exists() {
    let demo = small();
    let messages: Vec<&ChatMemoryMessageRow> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.chat_memory_messages)
        .collect();
    let call_ids: Vec<String> = messages
        .iter()
        .filter_map(|message| message.tool_calls.as_deref())
        .flat_map(|calls| serde_json::from_str::<Vec<ToolCall>>(calls).expect("tool calls JSON"))
        .map(|call| call.id)
        .collect();
    let result_ids: Vec<&str> = messages
        .iter()
        .filter(|message| message.role == "tool")
        .filter_map(|message| message.tool_call_id.as_deref())
        .collect();
    assert_eq!(call_ids.len(), 3);
    assert_eq!(call_ids, result_ids);
    assert_eq!(
        messages.iter().filter(|message| message.is_summary).count(),
        1
    );
    for message in &messages {
        let content: Content =
            serde_json::from_str(&message.content).expect("content is Content JSON");
        assert!(message.role == "assistant" || !content.is_empty());
    }
    let images = messages
        .iter()
        .filter_map(|message| message.files.as_deref())
        .filter(|files| files.contains("image/png"))
        .count();
    assert_eq!(images, 3);
}

#[test]
fn seqs_are_dense_per_memory() {
    let demo = small();
    for memory in demo.batches.iter().flat_map(|batch| &batch.chat_memories) {
        let seqs: Vec<i64> = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.chat_memory_messages)
            .filter(|message| message.chat_memory_id == memory.id)
            .map(|message| message.seq)
            .collect();
        assert_eq!(seqs, (0..seqs.len() as i64).collect::<Vec<_>>());
    }
}

use serde_json::Value;

use super::graph::{ANSWER, Node, RESEARCHER, START, WRITER};
use super::llm::TRUNCATED_TEXT_CHARS;
use super::*;
use crate::demo::tests::{SmallDemo, small};
use crate::store::rows::{NodeExecutionRow, WorkflowRunRow};

fn executions<'a>(demo: &'a SmallDemo, node: &Node) -> Vec<&'a NodeExecutionRow> {
    demo.batches
        .iter()
        .flat_map(|batch| &batch.node_executions)
        .filter(|execution| execution.node_id == node.id)
        .collect()
}

fn parse(text: Option<&str>) -> Value {
    serde_json::from_str(text.expect("column set")).expect("valid JSON")
}

/// The full outputs of an execution, following the offload link when there is one.
fn full_outputs(demo: &SmallDemo, execution: &NodeExecutionRow) -> Value {
    let offload = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.node_execution_offloads)
        .find(|offload| offload.node_execution_id == execution.id);
    match offload {
        None => parse(execution.outputs.as_deref()),
        Some(offload) => {
            let upload = demo
                .batches
                .iter()
                .flat_map(|batch| &batch.upload_files)
                .find(|upload| upload.id == offload.file_id)
                .expect("offloaded upload");
            let bytes = std::fs::read(demo.storage.path().join(&upload.key)).expect("file");
            assert_eq!(bytes.len() as i64, upload.size);
            serde_json::from_slice(&bytes).expect("full outputs JSON")
        }
    }
}

fn node_memory(demo: &SmallDemo, conversation_id: &str, node: &Node) -> Value {
    let app_id = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.conversations)
        .find(|conversation| conversation.id == conversation_id)
        .map(|conversation| conversation.app_id.clone())
        .expect("conversation");
    let path = demo.storage.path().join(format!(
        "node_memory/{app_id}/{conversation_id}/{}.json",
        node.id
    ));
    serde_json::from_str(&std::fs::read_to_string(path).expect("node memory file"))
        .expect("node memory JSON")
}

#[test]
fn llm_nodes_store_prompts_with_system_and_context_without() {
    let demo = small();
    let cut_off = &demo.story("Invalid outputs JSON").id;
    for node in [&RESEARCHER, &WRITER] {
        let rows = executions(&demo, node);
        assert_eq!(rows.len(), 6, "5 Kyoto runs and 1 packing run");
        for execution in rows {
            let data = parse(execution.process_data.as_deref());
            assert_eq!(data["model_mode"], "chat");
            let prompts = data["prompts"].as_array().expect("prompts");
            assert_eq!(prompts[0]["role"], "system");
            assert!(prompts[1..].iter().all(|prompt| prompt["role"] != "system"));
            if &execution.id == cut_off {
                continue;
            }
            let outputs = full_outputs(&demo, execution);
            for key in ["text", "usage", "finish_reason", "context"] {
                assert!(outputs.get(key).is_some(), "{key} in {}", node.title);
            }
            let context = outputs["context"].as_array().expect("context list");
            assert!(context.iter().all(|item| item["role"] != "system"));
            assert_eq!(
                context.last().map(|item| &item["content"]),
                Some(&outputs["text"])
            );
        }
    }
    let answers = executions(&demo, &ANSWER);
    let starts = executions(&demo, &START);
    assert_eq!((answers.len(), starts.len()), (6, 6));
}

#[test]
fn regenerated_turn_leaves_the_thread_and_its_context() {
    let demo = small();
    let (_, rows) = demo.conversation("Chatflow node memory");
    assert_eq!(rows.len(), KYOTO_TURNS);
    assert_eq!(rows[2].parent_message_id, rows[3].parent_message_id);
    let checklist = executions(&demo, &RESEARCHER)
        .into_iter()
        .find(|execution| execution.workflow_run_id == rows[4].workflow_run_id)
        .expect("checklist execution");
    let context = full_outputs(&demo, checklist)["context"].to_string();
    assert!(context.contains("Veg Out") && !context.contains("Shigetsu"));
    assert!(context.contains("tool_call_id") && context.contains("file_ref"));
    let start = executions(&demo, &START)
        .into_iter()
        .find(|execution| execution.workflow_run_id == rows[4].workflow_run_id)
        .expect("start execution");
    assert_eq!(parse(start.outputs.as_deref())["sys.dialogue_count"], 4);
}

#[test]
fn design_a_file_disagrees_with_the_context_on_one_turn() {
    let demo = small();
    let (conversation, rows) = demo.conversation("Chatflow node memory");
    let file = node_memory(&demo, &conversation.id, &RESEARCHER);
    assert_eq!(file["version"], 1);
    let turns = file["turns"].as_object().expect("turns map");
    assert_eq!(turns.len(), KYOTO_TURNS);
    let disagreeing: Vec<&str> = executions(&demo, &RESEARCHER)
        .into_iter()
        .filter_map(|execution| {
            let run = execution.workflow_run_id.as_deref()?;
            let turn = turns.get(run)?;
            let text = full_outputs(&demo, execution)["text"].clone();
            (turn["assistant_content"] != text).then_some(run)
        })
        .collect();
    assert_eq!(
        disagreeing,
        [rows[1].workflow_run_id.as_deref().expect("run")]
    );
    let story = demo.story("Node memory disagreement");
    let execution = executions(&demo, &RESEARCHER)
        .into_iter()
        .find(|execution| execution.id == story.id)
        .expect("story execution");
    assert_eq!(execution.workflow_run_id, rows[1].workflow_run_id);
    let first = &turns[rows[0].workflow_run_id.as_deref().expect("run")];
    assert_eq!(first["user_files"][0]["transfer_method"], "local_file");
}

#[test]
fn seed_shaped_file_links_entries_into_a_tree() {
    let demo = small();
    let (conversation, rows) = demo.conversation("Chatflow node memory");
    let file = node_memory(&demo, &conversation.id, &WRITER);
    let entries = file["messages"].as_array().expect("messages list");
    assert_eq!(entries.len(), 2 * KYOTO_TURNS);
    let users: Vec<&Value> = entries.iter().filter(|e| e["role"] == "user").collect();
    let ids: Vec<&str> = users
        .iter()
        .filter_map(|e| e["message_id"].as_str())
        .collect();
    let row_ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, row_ids, "user entries carry the Dify message ids");
    assert!(users[0]["parent_message_id"].is_null());
    assert_eq!(users[2]["parent_message_id"], users[3]["parent_message_id"]);
    for pair in entries.chunks(2) {
        assert_eq!(pair[1]["parent_message_id"], pair[0]["message_id"]);
        assert!(pair[0]["token_count"].as_i64() > Some(0));
    }
}

#[test]
fn offloaded_row_keeps_a_truncated_copy() {
    let demo = small();
    let story = demo.story("Offloaded node outputs");
    let execution = executions(&demo, &RESEARCHER)
        .into_iter()
        .find(|execution| execution.id == story.id)
        .expect("execution");
    let row = parse(execution.outputs.as_deref());
    let full = full_outputs(&demo, execution);
    assert!(row["text"].as_str().expect("text").ends_with("..."));
    assert!(full["text"].as_str().expect("text").len() > TRUNCATED_TEXT_CHARS);
    let length = |outputs: &Value| outputs["context"].as_array().map(Vec::len);
    assert_eq!(length(&row), Some(2));
    assert!(length(&full) > Some(8));
    let offloads = demo
        .batches
        .iter()
        .map(|b| b.node_execution_offloads.len())
        .sum::<usize>();
    assert_eq!(offloads, 1);
}

#[test]
fn exactly_one_execution_has_invalid_outputs() {
    let demo = small();
    let invalid: Vec<&str> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.node_executions)
        .filter(|execution| {
            let outputs = execution.outputs.as_deref().unwrap_or_default();
            serde_json::from_str::<Value>(outputs).is_err()
        })
        .map(|execution| execution.id.as_str())
        .collect();
    let story = demo.story("Invalid outputs JSON");
    assert_eq!(invalid, [story.id.as_str()]);
}

#[test]
fn orphaned_message_has_a_file_and_no_run() {
    let demo = small();
    let story = demo.story("Orphaned workflow run");
    let message = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.messages)
        .find(|row| row.message.id == story.id)
        .expect("message");
    let run = message.message.workflow_run_id.as_deref().expect("run id");
    let runs: Vec<&WorkflowRunRow> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.workflow_runs)
        .collect();
    assert!(runs.iter().all(|row| row.id != run));
    assert_eq!(runs.len(), 6);
    assert!(
        demo.batches
            .iter()
            .flat_map(|batch| &batch.message_files)
            .any(|file| file.message_id == story.id)
    );
}

//! Threads, executions and memory files the node inspection tests share.

use chrono::NaiveDateTime;
use serde_json::json;

use super::sources::{MemoryFileRead, NodeSources};
use super::thread::{CHATFLOW_MODE, NodeThread};
use crate::memory::node_context::ThreadTurn;
use crate::sources::dify::executions::{ExecutionDocs, FullColumn};
use crate::sources::dify::queries::ConversationInfo;

pub(crate) fn info(app_mode: &str) -> ConversationInfo {
    ConversationInfo {
        id: "c".into(),
        name: "conversation".into(),
        mode: app_mode.into(),
        status: "normal".into(),
        from_source: "api".into(),
        dialogue_count: 0,
        app_id: "a".into(),
        app_name: None,
        app_mode: Some(app_mode.into()),
        memory_window: None,
        created_at: NaiveDateTime::default(),
        updated_at: NaiveDateTime::default(),
        is_deleted: false,
        answered_rows_only: false,
    }
}

pub(crate) fn turn(n: usize) -> ThreadTurn {
    ThreadTurn {
        message_id: format!("m{n}"),
        workflow_run_id: format!("run-{n}"),
        app_mode: None,
    }
}

pub(crate) fn thread(turns: usize) -> NodeThread {
    NodeThread {
        info: info(CHATFLOW_MODE),
        leaf: None,
        turns: (1..=turns).map(turn).collect(),
        dangling: Vec::new(),
        archived: Vec::new(),
    }
}

pub(crate) fn docs(run: usize, status: &str, outputs: serde_json::Value) -> ExecutionDocs {
    ExecutionDocs {
        id: format!("e{run}-{status}"),
        workflow_run_id: format!("run-{run}"),
        status: status.into(),
        outputs: FullColumn {
            text: Some(outputs.to_string()),
            ..FullColumn::default()
        },
        process_data: FullColumn {
            text: Some(
                json!({"prompts": [{"role": "system", "text": "s"}, {"role": "user", "text": "q"}]})
                    .to_string(),
            ),
            ..FullColumn::default()
        },
    }
}

pub(crate) fn outputs(user: &str, reply: &str) -> serde_json::Value {
    json!({"text": reply, "context": [
        {"role": "user", "content": user},
        {"role": "assistant", "content": reply},
    ]})
}

pub(crate) fn sources(memory_file: MemoryFileRead, last_run: Vec<ExecutionDocs>) -> NodeSources {
    NodeSources {
        node_id: "llm".into(),
        memory_file,
        last_run,
    }
}

pub(crate) fn missing_file() -> MemoryFileRead {
    MemoryFileRead::Missing {
        path: "node_memory/a/c/llm.json".into(),
    }
}

pub(crate) fn file(value: serde_json::Value) -> MemoryFileRead {
    MemoryFileRead::Read {
        path: "llm.json".into(),
        bytes: value.to_string().into_bytes(),
    }
}

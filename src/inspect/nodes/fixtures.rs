//! Threads, executions and memory files the node inspection tests share.

use serde_json::json;

use super::sources::{MemoryFileRead, NodeSources};
use crate::memory::node_context::ThreadTurn;
use crate::sources::node_context::{
    CHATFLOW_MODE, ExecutionDocs, FullColumn, NodeConversation, NodeThread,
};

pub(crate) fn info(app_mode: &str) -> NodeConversation {
    NodeConversation {
        id: "c".into(),
        name: "conversation".into(),
        app_id: "a".into(),
        app_mode: Some(app_mode.into()),
        is_deleted: false,
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

//! `i` on a LangGraph thread: the shown checkpoint's messages whole (tool calls with their
//! arguments, tool results with the call they answer), or its node writes whole.

use crate::sources::checkpoint_history::{
    CheckpointMessage, CheckpointState, NodeWrite, ROOT_NAMESPACE,
};
use crate::tui::state::Detail;
use crate::tui::state::checkpoints::{CheckpointPane, CheckpointsState};

/// The detail of what the pane beside the tree shows; `None` before a checkpoint is read.
pub(super) fn detail(thread: &CheckpointsState) -> Option<Detail> {
    let shown = thread.shown.as_ref()?;
    let checkpoint = &shown.state;
    Some(match thread.pane {
        CheckpointPane::Messages => Detail::new(
            format!(
                " Messages at checkpoint {} ({}) ",
                checkpoint.checkpoint_id,
                checkpoint.messages.len()
            ),
            messages_whole(checkpoint),
        ),
        CheckpointPane::Writes => Detail::new(
            format!(
                " Node writes from checkpoint {} ({}) ",
                checkpoint.checkpoint_id,
                checkpoint.writes.len()
            ),
            writes_whole(&checkpoint.writes),
        ),
    })
}

fn messages_whole(checkpoint: &CheckpointState) -> String {
    let graph = match checkpoint.namespace.as_str() {
        ROOT_NAMESPACE => "the root graph".to_owned(),
        namespace => format!("subgraph {namespace}"),
    };
    let mut text = format!(
        "checkpoint {} of {graph}, at {}\n",
        checkpoint.checkpoint_id, checkpoint.ts
    );
    for warning in &checkpoint.warnings {
        text += &format!("⚠ {warning}\n");
    }
    if checkpoint.messages.is_empty() {
        text += "\nNo messages in this state.\n";
    }
    for (index, message) in checkpoint.messages.iter().enumerate() {
        text += &format!("\n#{index} {}", message_whole(message));
    }
    text
}

/// One message with every field an operator reads: who, its id, its content as stored (a list
/// of blocks pretty-printed), its tool calls with their arguments, the call a tool result
/// answers, and its usage.
fn message_whole(message: &CheckpointMessage) -> String {
    let mut text = message.label.clone();
    if let Some(name) = &message.name {
        text += &format!(" · {name}");
    }
    text.push('\n');
    if let Some(id) = &message.id {
        text += &format!("id {id}\n");
    }
    if let Some(call) = &message.tool_call_id {
        text += &format!(
            "result of tool call {call}{}\n",
            message
                .status
                .as_deref()
                .map_or(String::new(), |s| format!(" ({s})"))
        );
    }
    text += &match &message.content {
        serde_json::Value::String(content) => content.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    text.push('\n');
    for call in &message.tool_calls {
        text += &format!(
            "tool call {} {}:\n{}\n",
            call.name,
            call.id.as_deref().unwrap_or("(no id)"),
            serde_json::to_string_pretty(&call.arguments).unwrap_or_default()
        );
    }
    if let Some(usage) = &message.usage {
        text += &format!("usage {usage}\n");
    }
    text
}

fn writes_whole(writes: &[NodeWrite]) -> String {
    if writes.is_empty() {
        return "No task that started from this checkpoint wrote anything.".to_owned();
    }
    writes
        .iter()
        .map(|write| {
            let value = match &write.value {
                Ok(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
                Err(error) => format!("unreadable: {error}"),
            };
            format!(
                "{} → {} (task {}, path {:?}, idx {})\n{value}\n",
                write.node.as_deref().unwrap_or("update_state"),
                write.channel,
                write.task_id,
                write.task_path,
                write.idx,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

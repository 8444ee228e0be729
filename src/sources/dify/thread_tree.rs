//! A Dify conversation's regeneration tree for `thread`: every row a node under its parent
//! message, the thread the chosen mode marks (Dify's extraction, with the parent fix, or the
//! true path), and where Dify's extraction and the tree path part ways.

use std::collections::HashSet;

use serde_json::json;

use super::window::{DELETED_NOTE, load_conversation};
use crate::format::{count, one_line};
use crate::memory::history::PAUSED_STATUS;
use crate::memory::model::StoredMessage;
use crate::memory::thread_view::{ThreadMode, ThreadView, thread_view};
use crate::memory::tree::MessageTree;
use crate::sources::conversation::{
    Extra, SourceError, SourceOptions, SourceTree, TreeNode, TreeRequest, extra,
};
use crate::sources::turn_trees::TurnConversation;
use crate::store::Store;

fn mode(options: &SourceOptions) -> Result<ThreadMode, SourceError> {
    match options.get("mode") {
        None | Some("dify") => Ok(ThreadMode::Dify),
        Some("fixed") => Ok(ThreadMode::Fixed),
        Some("tree") => Ok(ThreadMode::Tree),
        Some(other) => Err(SourceError::usage(format!(
            "--mode takes dify, fixed or tree, not `{other}`"
        ))),
    }
}

/// The conversation's tree with the thread `request` asks for marked.
pub(super) async fn tree(store: &Store, request: &TreeRequest) -> Result<SourceTree, SourceError> {
    let options = &request.options;
    let mode = mode(options)?;
    let requested = request.number::<i64>("message-limit")?;
    let conversation = load_conversation(store, &request.id, requested).await?;
    let tree = conversation.tree();
    let leaf = options
        .get("leaf")
        .map(|leaf| conversation.find(&tree, leaf))
        .transpose()?;
    let view = thread_view(
        &conversation.rows,
        conversation.info.answered_rows_only,
        &tree,
        leaf,
        mode,
        conversation.windows.rows(true),
    );
    Ok(source_tree(&conversation, &tree, view, request))
}

fn source_tree(
    conversation: &TurnConversation,
    tree: &MessageTree,
    view: ThreadView,
    details: &TreeRequest,
) -> SourceTree {
    let info = &conversation.info;
    let mut header = Vec::new();
    if info.is_deleted {
        header.push(DELETED_NOTE.to_owned());
    }
    header.push(format!("conversation {} \"{}\"", info.id, info.name));
    header.push(format!(
        "thread ({}, window {}): {}, oldest first; ● on the thread, ○ off it",
        view.mode.describe(),
        view.window,
        count(view.thread.len() as u64, "message")
    ));
    let footer = std::iter::once(view.comparison_text.clone())
        .chain(view.anomalies.iter().map(|a| format!("anomaly: {a}")))
        .collect();
    let on_thread: HashSet<&str> = view.thread.iter().map(String::as_str).collect();
    let nodes = tree
        .visible(|_| false)
        .map(|visible| {
            let row = &conversation.rows[tree.row(visible.node)];
            let sibling = tree.sibling_position(visible.node);
            let sibling = (sibling.0 + 1, sibling.1);
            TreeNode {
                id: row.id.clone(),
                parent: tree.parent(visible.node).map(|p| tree.id(p).to_owned()),
                depth: visible.branch_depth,
                on_thread: on_thread.contains(row.id.as_str()),
                line: line(row, sibling, &info.mode),
                group: None,
                extra: details.details(|| node_extra(row, sibling)),
            }
        })
        .collect();
    SourceTree {
        id: info.id.clone(),
        title: Some(info.name.clone()),
        header,
        nodes,
        thread: view.thread.clone(),
        footer,
        extra: tree_extra(conversation, view),
    }
}

/// A row in a line: its id's start, its place among its regenerations, the question and the
/// answer (or what stands for a missing one), and the mode it was answered in when it differs.
fn line(row: &StoredMessage, sibling: (usize, usize), conversation_mode: &str) -> String {
    let siblings = if sibling.1 > 1 {
        format!(" [{}/{}]", sibling.0, sibling.1)
    } else {
        String::new()
    };
    let answer = match (row.answer.is_empty(), row.status.as_str()) {
        (_, "error") => "(error)".to_owned(),
        (true, PAUSED_STATUS) => "(paused for human input, nothing answered yet)".to_owned(),
        (false, PAUSED_STATUS) => format!("{} (paused for human input)", one_line(&row.answer, 40)),
        (true, _) => "(empty answer)".to_owned(),
        (false, _) => one_line(&row.answer, 40),
    };
    let mode = match &row.app_mode {
        Some(mode) if mode != conversation_mode => format!("  [answered as {mode}]"),
        _ => String::new(),
    };
    format!(
        "{}{siblings}  Q: {}  A: {answer}{mode}",
        &row.id[..row.id.len().min(8)],
        one_line(&row.query, 40),
    )
}

fn node_extra(row: &StoredMessage, sibling: (usize, usize)) -> serde_json::Value {
    json!({
        "sibling": [sibling.0, sibling.1],
        "status": row.status,
        "app_mode": row.app_mode,
        "query": row.query,
        "answer": row.answer,
    })
}

/// What the view says beyond the marked thread: the extraction and the tree path, how they
/// compare, and the conversation's mode and deletion.
fn tree_extra(conversation: &TurnConversation, view: ThreadView) -> Extra {
    let mut fields = extra(json!({
        "conversation_mode": conversation.info.mode,
        "deleted": conversation.info.is_deleted,
    }));
    fields.extend(
        extra(json!(view))
            .into_iter()
            .filter(|(key, _)| key != "thread"),
    );
    fields
}

#[cfg(test)]
#[path = "thread_tree_tests.rs"]
mod tests;

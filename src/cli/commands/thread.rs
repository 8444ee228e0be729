//! `thread`: the message tree with a thread marked, and where Dify's extraction and the tree
//! path part ways.

use serde::Serialize;

use crate::cli::Context;
use crate::cli::args::{ThreadArgs, ThreadMode as ModeArg};
use crate::cli::output::{CliResult, ExitCode, cell, deleted_banner, emit};
use crate::inspect::conversation::{
    LoadedConversation, ThreadMode, ThreadView, effective_window, load_conversation, thread_view,
};
use crate::memory::tree::MessageTree;
use crate::store::Part;

#[derive(Serialize)]
struct Node {
    id: String,
    parent: Option<String>,
    depth: usize,
    /// Position among its siblings (regenerations), 1-based, and how many there are.
    sibling: (usize, usize),
    on_thread: bool,
    status: String,
    query: String,
    answer: String,
}

#[derive(Serialize)]
struct Report {
    conversation_id: String,
    conversation_name: String,
    /// Deleted in Dify (hidden there); shown as stored.
    deleted: bool,
    #[serde(flatten)]
    view: ThreadView,
    nodes: Vec<Node>,
}

fn nodes(conversation: &LoadedConversation, tree: &MessageTree, view: &ThreadView) -> Vec<Node> {
    let on_thread: std::collections::HashSet<&str> =
        view.thread.iter().map(String::as_str).collect();
    tree.visible(|_| false)
        .map(|visible| {
            let row = &conversation.rows[tree.row(visible.node)];
            let (position, count) = tree.sibling_position(visible.node);
            Node {
                id: row.id.clone(),
                parent: tree.parent(visible.node).map(|p| tree.id(p).to_owned()),
                depth: visible.branch_depth,
                sibling: (position + 1, count),
                on_thread: on_thread.contains(row.id.as_str()),
                status: row.status.clone(),
                query: row.query.clone(),
                answer: row.answer.clone(),
            }
        })
        .collect()
}

fn render(report: &Report) -> String {
    let view = &report.view;
    let mut out = deleted_banner(report.deleted).to_owned();
    out += &format!(
        "conversation {} \"{}\"\nthread ({}, window {}): {} messages, oldest first; ● on the thread, ○ off it\n\n",
        report.conversation_id,
        report.conversation_name,
        view.mode.describe(),
        view.window,
        view.thread.len()
    );
    for node in &report.nodes {
        let marker = if node.on_thread { '●' } else { '○' };
        let siblings = if node.sibling.1 > 1 {
            format!(" [{}/{}]", node.sibling.0, node.sibling.1)
        } else {
            String::new()
        };
        let answer = match (node.answer.is_empty(), node.status.as_str()) {
            (_, "error") => "(error)".to_owned(),
            (true, _) => "(empty answer)".to_owned(),
            (false, _) => cell(&node.answer, 40),
        };
        out.push_str(&format!(
            "{}{marker} {}{siblings}  Q: {}  A: {}\n",
            "  ".repeat(node.depth),
            &node.id[..node.id.len().min(8)],
            cell(&node.query, 40),
            answer,
        ));
    }
    out.push_str(&format!("\n{}\n", view.comparison_text));
    for anomaly in &view.anomalies {
        out.push_str(&format!("anomaly: {anomaly}\n"));
    }
    out
}

pub async fn run(context: &Context, args: &ThreadArgs) -> CliResult {
    let store = context.open_for(Part::Conversations).await?;
    let conversation = load_conversation(&store, &args.conversation).await?;
    let tree = conversation.tree();
    let leaf = args
        .leaf
        .as_deref()
        .map(|id| conversation.find(&tree, id))
        .transpose()?;
    let (window, _) = effective_window(
        Some(context.resolved.config.history.message_limit),
        conversation.info.memory_window,
    );
    let mode = match args.mode {
        ModeArg::Dify => ThreadMode::Dify,
        ModeArg::Fixed => ThreadMode::Fixed,
        ModeArg::Tree => ThreadMode::Tree,
    };
    let view = thread_view(&conversation, &tree, leaf, mode, window);
    let report = Report {
        conversation_id: conversation.info.id.clone(),
        conversation_name: conversation.info.name.clone(),
        deleted: conversation.info.is_deleted,
        nodes: nodes(&conversation, &tree, &view),
        view,
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

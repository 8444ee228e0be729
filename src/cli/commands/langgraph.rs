//! `conversations`, `thread` and `history` on a LangGraph checkpoint database: one conversation
//! per thread, the thread's checkpoint tree (read without decoding a checkpoint), and the
//! `messages` channel at a checkpoint with its token budget and the cut of the trim LangGraph's
//! documentation recommends.

use crate::cli::args::{ThreadArgs, ThreadMode};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, emit};
use crate::format::{count, thousands};
use crate::sources::langgraph::checkpoint_tree::{CheckpointLine, ThreadTree};
use crate::sources::langgraph::decode::tree::CheckpointTree;
use crate::sources::langgraph::saver::{LangGraphDb, LangGraphError};
use crate::store::Store;

fn node_line(node: &CheckpointLine) -> String {
    format!(
        "{}{} {} step {} {}{}{}",
        "  ".repeat(node.depth),
        if node.on_thread { "*" } else { "-" },
        node.id,
        node.step.map_or("?".to_owned(), |s| s.to_string()),
        node.source.as_deref().unwrap_or("?"),
        if node.nodes.is_empty() {
            String::new()
        } else {
            format!(" by {}", node.nodes.join(", "))
        },
        if node.latest { "  (latest)" } else { "" },
    )
}

fn render_thread(report: &ThreadTree) -> String {
    let mut out = format!(
        "thread {}: {}, {} on the path to {}\n* marks the path\n\n",
        report.thread_id,
        count(report.nodes.len() as u64, "checkpoint"),
        thousands(report.thread.len() as u64),
        report.leaf.as_deref().unwrap_or("(none)"),
    );
    for node in &report.nodes {
        out += &node_line(node);
        out.push('\n');
    }
    for subgraph in &report.subgraphs {
        out += &format!(
            "\nsubgraph {} (node {}, from {}):\n",
            subgraph.namespace,
            subgraph.node,
            subgraph.root_checkpoint.as_deref().unwrap_or("?")
        );
        for node in &subgraph.nodes {
            out += &node_line(node);
            out.push('\n');
        }
    }
    out
}

fn thread_report(
    thread_id: &str,
    tree: &CheckpointTree,
    leaf: Option<&str>,
) -> CliResult<ThreadTree> {
    ThreadTree::of(thread_id, tree, leaf).map_err(|error| {
        LangGraphError::UnknownCheckpoint {
            thread: thread_id.to_owned(),
            error,
        }
        .into()
    })
}

pub async fn thread(context: &Context, store: &Store, args: &ThreadArgs) -> CliResult {
    if args.mode != ThreadMode::Dify {
        return Err(CliError::usage(
            "--mode is Dify's: a LangGraph thread's path is its parent links",
        ));
    }
    let report = tree_report(store, &args.conversation, args.leaf.as_deref()).await?;
    emit(context.global.json, &report, render_thread)?;
    Ok(ExitCode::Ok)
}

/// A thread's checkpoint tree with the path to `leaf` (to the latest without one), as `thread`
/// prints it (`export` bundles it too).
pub(super) async fn tree_report(
    store: &Store,
    thread_id: &str,
    leaf: Option<&str>,
) -> CliResult<ThreadTree> {
    let db = LangGraphDb::open(store)?;
    let tree = db.tree(thread_id).await?;
    thread_report(thread_id, &tree, leaf)
}

//! A LangGraph thread's checkpoint tree, computed from the rows alone (no checkpoint decoded),
//! as the neutral [`ThreadTree`] both front ends show: `thread` prints it, the TUI draws it.
//!
//! The tree is the root namespace's: branches (time travel, `update_state`, forks) are siblings,
//! as regenerations are for Dify. A subgraph's checkpoints are listed under the root checkpoint
//! whose task ran them.

use serde_json::{Value as Json, json};

use super::decode::tree::{
    CheckpointTree, Namespace, ROOT_NAMESPACE, UnknownCheckpoint, namespace_node,
};
use super::saver::{LangGraphDb, LangGraphError};
use crate::sources::checkpoint_history::{CheckpointLine, SubgraphLines, ThreadTree};
use crate::sources::conversation::{SourceError, SourceTree, TreeNode, TreeRequest, extra};
use crate::store::Store;

/// The rows of `tree` with the path to `leaf` marked (to the latest without one).
pub fn thread_tree(
    thread_id: &str,
    tree: &CheckpointTree,
    leaf: Option<&str>,
) -> Result<ThreadTree, UnknownCheckpoint> {
    let path: Vec<String> = tree.thread(leaf)?.into_iter().map(str::to_owned).collect();
    let subgraphs = tree
        .subgraphs
        .iter()
        .map(|namespace| SubgraphLines {
            namespace: namespace.name.clone(),
            node: namespace_node(&namespace.name).to_owned(),
            root_checkpoint: namespace.root_checkpoint.clone(),
            nodes: namespace_lines(namespace, &[]),
        })
        .collect();
    Ok(ThreadTree {
        thread_id: thread_id.to_owned(),
        latest: tree.latest().map(|c| c.id.clone()),
        leaf: path.last().cloned(),
        nodes: namespace_lines(&tree.root, &path),
        thread: path,
        subgraphs,
    })
}

fn namespace_lines(namespace: &Namespace, on_thread: &[String]) -> Vec<CheckpointLine> {
    let tree = &namespace.tree;
    let latest = namespace.latest().map(|c| c.id.as_str());
    tree.visible(|_| false)
        .map(|visible| {
            let checkpoint = &namespace.checkpoints[tree.row(visible.node)];
            let (position, count) = tree.sibling_position(visible.node);
            CheckpointLine {
                id: checkpoint.id.clone(),
                parent: checkpoint.parent.clone(),
                depth: visible.branch_depth,
                sibling: (position + 1, count),
                on_thread: on_thread.contains(&checkpoint.id),
                latest: latest == Some(checkpoint.id.as_str()),
                source: checkpoint.source.clone(),
                step: checkpoint.step,
                nodes: checkpoint.nodes.clone(),
            }
        })
        .collect()
}

/// The thread's checkpoint tree for `thread`, with the path to the `leaf` option (to the
/// latest without one) marked: the root graph's checkpoints, each subgraph's under its heading
/// right after the root checkpoint whose task ran it.
pub(super) async fn tree(store: &Store, request: &TreeRequest) -> Result<SourceTree, SourceError> {
    let db = LangGraphDb::open(store)?;
    let thread_id = &request.id;
    let checkpoints = db.tree(thread_id).await?;
    let leaf = request.options.get("leaf");
    let tree = thread_tree(thread_id, &checkpoints, leaf).map_err(|error| {
        LangGraphError::UnknownCheckpoint {
            thread: thread_id.clone(),
            error,
        }
    })?;
    let header = vec![
        format!(
            "thread {thread_id}: {}, {} on the path to {}",
            tree.checkpoints_described(),
            crate::format::thousands(tree.thread.len() as u64),
            tree.leaf.as_deref().unwrap_or("(none)"),
        ),
        "● on the path, ○ off it".to_owned(),
    ];
    // As the TUI draws it: a subgraph's checkpoints under the root checkpoint that ran it.
    let headings: Vec<String> = tree
        .subgraphs
        .iter()
        .map(|subgraph| {
            format!(
                "subgraph {} (node {}, from {})",
                subgraph.namespace,
                subgraph.node,
                subgraph.root_checkpoint.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let nodes = tree
        .rows()
        .into_iter()
        .map(|row| {
            let (_, line) = tree.line(row);
            let group = row
                .subgraph
                .map(|index| (&tree.subgraphs[index].namespace, &headings[index]));
            tree_node(line, group, request)
        })
        .collect();
    let subgraphs: Vec<Json> = tree
        .subgraphs
        .iter()
        .map(|s| json!({"namespace": s.namespace, "node": s.node, "root_checkpoint": s.root_checkpoint}))
        .collect();
    Ok(SourceTree {
        id: thread_id.clone(),
        title: None,
        header,
        nodes,
        thread: tree.thread,
        footer: Vec::new(),
        extra: extra(json!({
            "latest": tree.latest,
            "leaf": tree.leaf,
            "subgraphs": subgraphs,
        })),
    })
}

/// A checkpoint as a node: `id step N source by nodes`, the latest marked. A subgraph's
/// checkpoint is drawn under its namespace's heading.
fn tree_node(
    line: &CheckpointLine,
    subgraph: Option<(&String, &String)>,
    details: &TreeRequest,
) -> TreeNode {
    let text = format!(
        "{} step {} {}{}{}",
        line.id,
        line.step.map_or("?".to_owned(), |s| s.to_string()),
        line.source.as_deref().unwrap_or("?"),
        if line.nodes.is_empty() {
            String::new()
        } else {
            format!(" by {}", line.nodes.join(", "))
        },
        if line.latest { "  (latest)" } else { "" },
    );
    TreeNode {
        id: line.id.clone(),
        parent: line.parent.clone(),
        depth: line.depth,
        on_thread: line.on_thread,
        line: text,
        group: subgraph.map(|(_, heading)| heading.clone()),
        extra: details.details(|| {
            json!({
                "namespace": subgraph.map_or(ROOT_NAMESPACE, |(namespace, _)| namespace.as_str()),
                "sibling": [line.sibling.0, line.sibling.1],
                "latest": line.latest,
                "source": line.source,
                "step": line.step,
                "nodes": line.nodes,
            })
        }),
    }
}

#[cfg(test)]
#[path = "checkpoint_tree_tests.rs"]
mod tests;

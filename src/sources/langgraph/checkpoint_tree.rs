//! A LangGraph thread as both front ends show it: the rows of its checkpoint tree (computed from
//! the rows alone, no checkpoint decoded) and one checkpoint read whole when it is shown (its
//! `messages` channel and the writes its tasks made).
//!
//! The tree is the root namespace's: branches (time travel, `update_state`, forks) are siblings,
//! as regenerations are for Dify. A subgraph's checkpoints are listed under the root checkpoint
//! whose task ran them.

use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::format::count;
use crate::sources::conversation::{SourceError, SourceTree, TreeNode, TreeRequest, extra};
use crate::sources::langgraph::decode::checkpoint::UnreadMessage;
use crate::sources::langgraph::decode::message::LangChainMessage;
use crate::sources::langgraph::decode::tree::{
    CheckpointTree, Namespace, ROOT_NAMESPACE, UnknownCheckpoint, namespace_node, node_of_task,
};
use crate::sources::langgraph::saver::{LangGraphDb, LangGraphError};
use crate::store::Store;

/// A checkpoint as the tree lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointLine {
    pub id: String,
    pub parent: Option<String>,
    /// Branch depth: 0 on the first line of the tree, one more for each branch taken.
    pub depth: usize,
    /// Position among its siblings (branches), 1-based, and how many there are.
    pub sibling: (usize, usize),
    pub on_thread: bool,
    pub latest: bool,
    /// `input`, `loop`, `update` or `fork`.
    pub source: Option<String>,
    pub step: Option<i64>,
    /// The nodes whose outputs made it.
    pub nodes: Vec<String>,
}

/// A subgraph namespace's checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubgraphLines {
    pub namespace: String,
    /// The node of the root graph that ran it.
    pub node: String,
    /// The root graph's checkpoint whose task ran it.
    pub root_checkpoint: Option<String>,
    pub nodes: Vec<CheckpointLine>,
}

/// A thread's checkpoint tree: `thread` runs from the first checkpoint to the leaf (the latest
/// without one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadTree {
    pub thread_id: String,
    pub latest: Option<String>,
    pub leaf: Option<String>,
    /// The root graph's checkpoints from the first to the leaf.
    pub thread: Vec<String>,
    pub nodes: Vec<CheckpointLine>,
    pub subgraphs: Vec<SubgraphLines>,
}

/// One line of the tree as a pane draws it: a root checkpoint, or a subgraph's checkpoint
/// placed under the root checkpoint its task started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeRow {
    /// The subgraph (an index of [`ThreadTree::subgraphs`]), `None` on the root graph.
    pub subgraph: Option<usize>,
    /// The line's index in its namespace's `nodes`.
    pub line: usize,
}

impl ThreadTree {
    /// The rows of `tree` with the path to `leaf` marked (to the latest without one).
    pub fn of(
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

    /// Every line in drawing order: each root checkpoint followed by the checkpoints of the
    /// subgraphs its tasks ran; a subgraph whose root checkpoint is not in the tree comes last.
    pub fn rows(&self) -> Vec<TreeRow> {
        let mut rows = Vec::with_capacity(self.checkpoint_count());
        let subgraph_rows = |index: usize| {
            (0..self.subgraphs[index].nodes.len()).map(move |line| TreeRow {
                subgraph: Some(index),
                line,
            })
        };
        for (line, checkpoint) in self.nodes.iter().enumerate() {
            rows.push(TreeRow {
                subgraph: None,
                line,
            });
            for (index, _) in self
                .subgraphs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.root_checkpoint.as_deref() == Some(&checkpoint.id))
            {
                rows.extend(subgraph_rows(index));
            }
        }
        for (index, subgraph) in self.subgraphs.iter().enumerate() {
            let attached = subgraph
                .root_checkpoint
                .as_deref()
                .is_some_and(|root| self.nodes.iter().any(|n| n.id == root));
            if !attached {
                rows.extend(subgraph_rows(index));
            }
        }
        rows
    }

    /// The thread's checkpoints in every namespace, as the list of threads counts them.
    pub fn checkpoint_count(&self) -> usize {
        self.nodes.len() + self.subgraphs.iter().map(|s| s.nodes.len()).sum::<usize>()
    }

    /// `12 checkpoints (3 in 1 subgraph)`: the list's count, with the part subgraphs hold.
    pub fn checkpoints_described(&self) -> String {
        let all = count(self.checkpoint_count() as u64, "checkpoint");
        match self.checkpoint_count() - self.nodes.len() {
            0 => all,
            inner => format!(
                "{all} ({} in {})",
                crate::format::thousands(inner as u64),
                count(self.subgraphs.len() as u64, "subgraph")
            ),
        }
    }

    /// The checkpoint a row names, with its namespace.
    pub fn line(&self, row: TreeRow) -> (&str, &CheckpointLine) {
        match row.subgraph {
            None => (ROOT_NAMESPACE, &self.nodes[row.line]),
            Some(index) => {
                let subgraph = &self.subgraphs[index];
                (&subgraph.namespace, &subgraph.nodes[row.line])
            }
        }
    }
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
    let tree = ThreadTree::of(thread_id, &checkpoints, leaf).map_err(|error| {
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

/// One value a task wrote, keyed to the checkpoint it started from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeWrite {
    /// The node that ran the task; `None` for an `update_state` write.
    pub node: Option<String>,
    pub task_path: String,
    pub task_id: String,
    /// Negative for LangGraph's special writes (`__error__`, `__interrupt__`, ...).
    pub idx: i64,
    pub channel: String,
    /// The value as LangGraph's JSON view shows it, or why it cannot be read.
    pub value: Result<Json, String>,
}

/// One checkpoint read whole: its `messages` channel and the writes of the tasks that started
/// from it.
#[derive(Debug, Clone)]
pub struct CheckpointState {
    pub namespace: String,
    pub checkpoint_id: String,
    pub ts: String,
    pub messages: Vec<LangChainMessage>,
    pub unread: Vec<UnreadMessage>,
    /// What was read but not understood.
    pub warnings: Vec<String>,
    pub writes: Vec<NodeWrite>,
}

/// Reads one checkpoint of `thread` in `namespace`: the only checkpoint decoded.
pub async fn load_checkpoint(
    db: &LangGraphDb,
    thread: &str,
    namespace: &str,
    checkpoint: &str,
) -> Result<CheckpointState, LangGraphError> {
    let stored = db
        .pool
        .checkpoint(thread, namespace, checkpoint)
        .await
        .map_err(|e| db.failed(e))?
        .ok_or_else(|| LangGraphError::UnknownCheckpoint {
            thread: thread.to_owned(),
            error: UnknownCheckpoint::new(checkpoint),
        })?;
    let (body, warnings) = db.decode(&stored)?;
    let (messages, unread) = body.messages();
    let writes = stored
        .writes
        .iter()
        .map(|write| NodeWrite {
            node: node_of_task(&write.task_path),
            task_path: write.task_path.clone(),
            task_id: write.task_id.clone(),
            idx: write.idx,
            channel: write.channel.clone(),
            value: db
                .decode_write(write)
                .map(|decoded| decoded.value.to_json())
                .map_err(|error| error.to_string()),
        })
        .collect();
    Ok(CheckpointState {
        namespace: namespace.to_owned(),
        checkpoint_id: body.id,
        ts: body.ts,
        messages,
        unread,
        warnings: warnings.iter().map(ToString::to_string).collect(),
        writes,
    })
}

#[cfg(test)]
#[path = "checkpoint_tree_tests.rs"]
mod tests;

//! A thread's checkpoint tree from its rows, without decoding a checkpoint: each namespace's
//! checkpoints linked by `parent_checkpoint_id` (several children of one checkpoint are branches:
//! time travel, `update_state`, forks), the latest checkpoint (the greatest id of namespace `''`,
//! as LangGraph's `get_state` takes it), and each subgraph's namespace attached to the root
//! checkpoint its task started from (`metadata.parents['']`).
//!
//! A checkpoint's writes are keyed to the checkpoint its tasks started from, so the node that
//! wrote a `loop` checkpoint is named by the `task_path` of its parent's writes
//! (`~__pregel_pull, agent`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::memory::model::ThreadNode;
use crate::memory::tree::{MessageTree, NodeIndex, TreeAnomaly};

/// The root graph's namespace.
pub const ROOT_NAMESPACE: &str = "";

const PULL_TASK_PREFIX: &str = "~__pregel_pull, ";

/// One row of `checkpoints`, without its body.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointRow {
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub parent_checkpoint_id: Option<String>,
    /// The metadata JSON (`source`, `step`, `parents`, the run's configurable keys).
    pub metadata: Json,
}

/// A task that wrote to the checkpoint it started from (one per distinct `task_path`).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub task_path: String,
}

/// A checkpoint as the tree shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointNode {
    pub id: String,
    pub parent: Option<String>,
    /// `input`, `loop`, `update` or `fork`.
    pub source: Option<String>,
    pub step: Option<i64>,
    /// The nodes whose outputs made this checkpoint (for a `loop` checkpoint).
    pub nodes: Vec<String>,
}

impl ThreadNode for CheckpointNode {
    fn node_id(&self) -> &str {
        &self.id
    }

    fn parent_id(&self) -> Option<&str> {
        self.parent.as_deref()
    }
}

/// The checkpoints of one namespace, oldest first, and their tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Namespace {
    pub name: String,
    pub checkpoints: Vec<CheckpointNode>,
    pub tree: MessageTree,
    /// For a subgraph: the root graph's checkpoint whose task ran it.
    pub root_checkpoint: Option<String>,
}

impl Namespace {
    fn build(name: String, rows: Vec<&CheckpointRow>, tasks: &BTreeMap<&str, Vec<&str>>) -> Self {
        let root_checkpoint = rows.iter().find_map(|row| {
            row.metadata
                .get("parents")?
                .get(ROOT_NAMESPACE)?
                .as_str()
                .map(str::to_owned)
        });
        let checkpoints: Vec<CheckpointNode> = rows
            .iter()
            .map(|row| {
                let source = row.metadata.get("source").and_then(Json::as_str);
                let nodes = match (source, row.parent_checkpoint_id.as_deref()) {
                    (Some("loop"), Some(parent)) => tasks
                        .get(parent)
                        .map(|paths| paths.iter().filter_map(|p| node_of_task(p)).collect())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                CheckpointNode {
                    id: row.checkpoint_id.clone(),
                    parent: row.parent_checkpoint_id.clone(),
                    source: source.map(str::to_owned),
                    step: row.metadata.get("step").and_then(Json::as_i64),
                    nodes,
                }
            })
            .collect();
        let tree = MessageTree::build(&checkpoints);
        Namespace {
            name,
            checkpoints,
            tree,
            root_checkpoint,
        }
    }

    /// The newest checkpoint: the greatest id (LangGraph's ids sort chronologically).
    pub fn latest(&self) -> Option<&CheckpointNode> {
        self.checkpoints.iter().max_by(|a, b| a.id.cmp(&b.id))
    }

    pub fn find(&self, id: &str) -> Option<&CheckpointNode> {
        Some(&self.checkpoints[self.tree.row(self.tree.find(id)?)])
    }

    /// The id of the checkpoint `typed` names, as ids are shown and typed back: the whole id,
    /// a unique start or end of it (a thread's ids share their first characters, so a tail is
    /// usually what tells them apart), or the `1f1ea8…43e9d8` form a tree shows (`...` for
    /// `…`), in any case.
    pub fn resolve(&self, typed: &str) -> Result<&str, UnknownCheckpoint> {
        if let Some(checkpoint) = self.find(typed) {
            return Ok(&checkpoint.id);
        }
        let wanted = typed.trim().to_lowercase();
        let (head, tail) = match wanted.split_once('…').or_else(|| wanted.split_once("...")) {
            Some((head, tail)) => (head, Some(tail)),
            None => (wanted.as_str(), None),
        };
        let fits = |id: &str| {
            let id = id.to_lowercase();
            match tail {
                Some(tail) => {
                    id.len() >= head.len() + tail.len()
                        && id.starts_with(head)
                        && id.ends_with(tail)
                }
                None => !head.is_empty() && (id.starts_with(head) || id.ends_with(head)),
            }
        };
        // Newest first (ids sort by time), as the ones most likely meant.
        let candidates: Vec<&str> = self
            .checkpoints
            .iter()
            .rev()
            .map(|c| c.id.as_str())
            .filter(|id| fits(id))
            .collect();
        match candidates.as_slice() {
            [one] => Ok(one),
            _ => Err(UnknownCheckpoint {
                id: typed.to_owned(),
                candidates: candidates.iter().map(|id| (*id).to_owned()).collect(),
            }),
        }
    }

    /// The ids from the first checkpoint down to `leaf` (to the latest without one); `leaf`
    /// as [`Namespace::resolve`] takes it.
    pub fn path(&self, leaf: Option<&str>) -> Result<Vec<&str>, UnknownCheckpoint> {
        let leaf = match leaf {
            Some(typed) => self.resolve(typed)?,
            None => match self.latest() {
                Some(latest) => &latest.id,
                None => return Ok(Vec::new()),
            },
        };
        let node: NodeIndex = self
            .tree
            .find(leaf)
            .ok_or_else(|| UnknownCheckpoint::new(leaf))?;
        Ok(self
            .tree
            .path_to_root(node)
            .nodes
            .into_iter()
            .map(|n| self.tree.id(n))
            .collect())
    }

    /// Duplicate ids, missing parents and cycles found while linking.
    pub fn anomalies(&self) -> &[TreeAnomaly] {
        self.tree.anomalies()
    }
}

/// A checkpoint id the thread does not have, or typed so that several of its ids fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_unknown(id, candidates))]
pub struct UnknownCheckpoint {
    pub id: String,
    /// The ids it fits, newest first, when it fits several (empty: none).
    pub candidates: Vec<String>,
}

impl UnknownCheckpoint {
    /// An id that fits no checkpoint.
    pub fn new(id: &str) -> UnknownCheckpoint {
        UnknownCheckpoint {
            id: id.to_owned(),
            candidates: Vec::new(),
        }
    }
}

/// The candidates an ambiguous id lists at most.
const CANDIDATES_SHOWN: usize = 10;

fn describe_unknown(id: &str, candidates: &[String]) -> String {
    if candidates.is_empty() {
        return format!("no checkpoint {id} in this thread");
    }
    let mut listed = candidates
        .iter()
        .take(CANDIDATES_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if candidates.len() > CANDIDATES_SHOWN {
        listed.push_str(&format!(
            " and {} more",
            crate::format::thousands((candidates.len() - CANDIDATES_SHOWN) as u64)
        ));
    }
    format!(
        "{id} fits {} checkpoints of this thread: {listed}",
        crate::format::thousands(candidates.len() as u64)
    )
}

/// A thread's checkpoints: the root graph's tree and each subgraph namespace's.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointTree {
    pub root: Namespace,
    /// Subgraph namespaces, by name.
    pub subgraphs: Vec<Namespace>,
}

impl CheckpointTree {
    /// Builds the tree of one thread's rows (any order) and its writes' task paths.
    pub fn build(rows: &[CheckpointRow], tasks: &[TaskRow]) -> CheckpointTree {
        let mut by_namespace: BTreeMap<&str, Vec<&CheckpointRow>> = BTreeMap::new();
        for row in rows {
            by_namespace
                .entry(&row.checkpoint_ns)
                .or_default()
                .push(row);
        }
        let mut tasks_by_namespace: BTreeMap<&str, BTreeMap<&str, BTreeSet<&str>>> =
            BTreeMap::new();
        for task in tasks {
            tasks_by_namespace
                .entry(&task.checkpoint_ns)
                .or_default()
                .entry(&task.checkpoint_id)
                .or_default()
                .insert(&task.task_path);
        }
        let mut namespaces = by_namespace.into_iter().map(|(name, mut rows)| {
            rows.sort_by(|a, b| a.checkpoint_id.cmp(&b.checkpoint_id));
            let tasks: BTreeMap<&str, Vec<&str>> = tasks_by_namespace
                .get(name)
                .map(|by_id| {
                    by_id
                        .iter()
                        .map(|(id, paths)| (*id, paths.iter().copied().collect()))
                        .collect()
                })
                .unwrap_or_default();
            Namespace::build(name.to_owned(), rows, &tasks)
        });
        let mut root = None;
        let mut subgraphs = Vec::new();
        for namespace in namespaces.by_ref() {
            if namespace.name == ROOT_NAMESPACE {
                root = Some(namespace);
            } else {
                subgraphs.push(namespace);
            }
        }
        let root =
            root.unwrap_or_else(|| Namespace::build(String::new(), Vec::new(), &BTreeMap::new()));
        CheckpointTree { root, subgraphs }
    }

    /// The latest checkpoint of the root graph: what `get_state` reads.
    pub fn latest(&self) -> Option<&CheckpointNode> {
        self.root.latest()
    }

    /// The root graph's checkpoint `typed` names ([`Namespace::resolve`]).
    pub fn resolve(&self, typed: &str) -> Result<&str, UnknownCheckpoint> {
        self.root.resolve(typed)
    }

    /// The root graph's ids from the first checkpoint to `leaf` (to the latest without one).
    pub fn thread(&self, leaf: Option<&str>) -> Result<Vec<&str>, UnknownCheckpoint> {
        self.root.path(leaf)
    }

    /// The subgraph namespaces whose task started from a root checkpoint.
    pub fn subgraphs_of<'t>(
        &'t self,
        checkpoint_id: &'t str,
    ) -> impl Iterator<Item = &'t Namespace> {
        self.subgraphs
            .iter()
            .filter(move |ns| ns.root_checkpoint.as_deref() == Some(checkpoint_id))
    }
}

/// The node a task ran: the name in a pull task's path (`~__pregel_pull, agent`, and
/// `__start__` for the input); a pushed task (`Send`) shows its whole path; an `update_state`
/// write (`~__interrupt__, …`) names no node.
pub fn node_of_task(task_path: &str) -> Option<String> {
    if let Some(name) = task_path.strip_prefix(PULL_TASK_PREFIX) {
        return Some(name.to_owned());
    }
    if task_path.starts_with("~__interrupt__") || task_path.is_empty() {
        return None;
    }
    Some(task_path.to_owned())
}

/// The node of a subgraph namespace (`worker:3f2a…`, nested ones joined with `|`): its last
/// segment's name.
pub fn namespace_node(namespace: &str) -> &str {
    let last = namespace.rsplit('|').next().unwrap_or(namespace);
    last.split(':').next().unwrap_or(last)
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;

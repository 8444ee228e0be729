//! The message tree: children, siblings (regenerations), leaves and anomalies.
//!
//! Built from one conversation's rows oldest first. Every node's parent is its declared parent,
//! except rows whose parent is `UUID_NIL` (legacy and service-API rows): their tree parent is
//! the chronologically previous row, because that is the row Dify's walk takes after `UUID_NIL`.
//!
//! Bad data never makes a method loop: duplicate ids keep their first row, dangling parents make
//! roots, and cycles are cut at their oldest member. Each case is reported as a [`TreeAnomaly`].
//! Storage is index based and every operation is linear or better.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::model::{ThreadNode, UUID_NIL, declared_parent};

/// A node of a [`MessageTree`]: nodes are numbered in chronological order, duplicates left out.
/// Methods taking a `NodeIndex` panic if it is not below [`MessageTree::len`], like slices do.
pub type NodeIndex = usize;

/// Why a node is a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootKind {
    /// Declared without a parent (`None` or `""`): a first turn or a regenerated first turn.
    NoParent,
    /// Parent `UUID_NIL` on the oldest row: the start of a legacy or service-API chain.
    NilWithoutPredecessor,
    /// The declared parent is not among the rows.
    DanglingParent,
    /// Its parent link closed a cycle and was cut here.
    CycleBroken,
}

/// How a node hangs from its tree parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "link", content = "root", rename_all = "snake_case")]
pub enum ParentLink {
    /// Through its declared `parent_message_id`.
    Declared,
    /// Declared parent `UUID_NIL`: linked to the chronologically previous row.
    PreviousAfterNil,
    Root(RootKind),
}

/// Bad data found while building, in the order it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TreeAnomaly {
    /// A later row repeats an id: it is left out of the tree.
    DuplicateId {
        id: String,
        row: usize,
        first_row: usize,
    },
    /// The node becomes a root.
    DanglingParent { id: String, missing_parent: String },
    /// Nodes whose parent links go round, starting at the one cut into a root and following
    /// parent links.
    Cycle { members: Vec<String> },
}

impl std::fmt::Display for TreeAnomaly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TreeAnomaly::DuplicateId { id, row, first_row } => {
                write!(
                    f,
                    "row {row} repeats id {id} of row {first_row}; it is left out"
                )
            }
            TreeAnomaly::DanglingParent { id, missing_parent } => write!(
                f,
                "{id} names parent {missing_parent}, which does not exist; shown as a root"
            ),
            TreeAnomaly::Cycle { members } => write!(
                f,
                "parent links go round through {}; cut at {}",
                members.join(" -> "),
                members.first().map_or("", String::as_str)
            ),
        }
    }
}

/// A node's path up to its root, root first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreePath {
    pub nodes: Vec<NodeIndex>,
    /// Why the path ends where it does.
    pub root: RootKind,
}

/// One line of a tree view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisibleNode {
    pub node: NodeIndex,
    pub depth: usize,
    /// Ancestors with more than one child: an indentation that does not grow along a chain.
    pub branch_depth: usize,
    pub is_last_sibling: bool,
    pub has_children: bool,
    pub collapsed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageTree {
    ids: Vec<String>,
    rows: Vec<usize>,
    index: FxHashMap<String, NodeIndex>,
    parents: Vec<Option<NodeIndex>>,
    links: Vec<ParentLink>,
    /// Children of node `n` are `child_list[child_start[n]..child_start[n + 1]]`, oldest first.
    child_start: Vec<usize>,
    child_list: Vec<NodeIndex>,
    roots: Vec<NodeIndex>,
    depths: Vec<usize>,
    anomalies: Vec<TreeAnomaly>,
}

impl MessageTree {
    /// Builds the tree of one conversation's rows, oldest first.
    pub fn build<N: ThreadNode>(rows_oldest_first: &[N]) -> Self {
        let mut anomalies = Vec::new();
        let mut index =
            FxHashMap::with_capacity_and_hasher(rows_oldest_first.len(), Default::default());
        let mut ids = Vec::with_capacity(rows_oldest_first.len());
        let mut rows = Vec::with_capacity(rows_oldest_first.len());
        let mut declared = Vec::with_capacity(rows_oldest_first.len());
        for (row, record) in rows_oldest_first.iter().enumerate() {
            let id = record.node_id();
            if let Some(&first) = index.get(id) {
                anomalies.push(TreeAnomaly::DuplicateId {
                    id: id.to_owned(),
                    row,
                    first_row: rows[first],
                });
                continue;
            }
            index.insert(id.to_owned(), ids.len());
            ids.push(id.to_owned());
            rows.push(row);
            declared.push(declared_parent(record));
        }

        let mut parents = Vec::with_capacity(ids.len());
        let mut links = Vec::with_capacity(ids.len());
        for (node, parent) in declared.iter().enumerate() {
            let (parent, link) = match *parent {
                None => (None, ParentLink::Root(RootKind::NoParent)),
                Some(UUID_NIL) if node == 0 => {
                    (None, ParentLink::Root(RootKind::NilWithoutPredecessor))
                }
                Some(UUID_NIL) => (Some(node - 1), ParentLink::PreviousAfterNil),
                Some(parent) => match index.get(parent) {
                    Some(&found) => (Some(found), ParentLink::Declared),
                    None => {
                        anomalies.push(TreeAnomaly::DanglingParent {
                            id: ids[node].clone(),
                            missing_parent: parent.to_owned(),
                        });
                        (None, ParentLink::Root(RootKind::DanglingParent))
                    }
                },
            };
            parents.push(parent);
            links.push(link);
        }

        for cycle in break_cycles(&mut parents) {
            links[cycle[0]] = ParentLink::Root(RootKind::CycleBroken);
            anomalies.push(TreeAnomaly::Cycle {
                members: cycle.iter().map(|&node| ids[node].clone()).collect(),
            });
        }

        let (child_start, child_list) = children_lists(&parents);
        let roots: Vec<NodeIndex> = (0..ids.len()).filter(|&n| parents[n].is_none()).collect();
        let mut tree = MessageTree {
            ids,
            rows,
            index,
            parents,
            links,
            child_start,
            child_list,
            roots,
            depths: Vec::new(),
            anomalies,
        };
        tree.depths = tree.compute_depths();
        tree
    }

    fn compute_depths(&self) -> Vec<usize> {
        let mut depths = vec![0; self.len()];
        let mut stack = self.roots.clone();
        while let Some(node) = stack.pop() {
            for &child in self.children(node) {
                depths[child] = depths[node] + 1;
                stack.push(child);
            }
        }
        depths
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn id(&self, node: NodeIndex) -> &str {
        &self.ids[node]
    }

    /// The node's index in the rows the tree was built from.
    pub fn row(&self, node: NodeIndex) -> usize {
        self.rows[node]
    }

    pub fn find(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(id).copied()
    }

    pub fn parent(&self, node: NodeIndex) -> Option<NodeIndex> {
        self.parents[node]
    }

    pub fn parent_link(&self, node: NodeIndex) -> ParentLink {
        self.links[node]
    }

    /// Children, oldest first: several children are regenerations of the same turn.
    pub fn children(&self, node: NodeIndex) -> &[NodeIndex] {
        &self.child_list[self.child_start[node]..self.child_start[node + 1]]
    }

    /// Roots, oldest first.
    pub fn roots(&self) -> &[NodeIndex] {
        &self.roots
    }

    /// The node and its siblings, oldest first: its parent's children, or the roots.
    pub fn sibling_group(&self, node: NodeIndex) -> &[NodeIndex] {
        match self.parents[node] {
            Some(parent) => self.children(parent),
            None => &self.roots,
        }
    }

    /// The other nodes of [`Self::sibling_group`].
    pub fn siblings(&self, node: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.sibling_group(node)
            .iter()
            .copied()
            .filter(move |&sibling| sibling != node)
    }

    /// Zero-based position of the node among its siblings, and their number ("2 of 3").
    pub fn sibling_position(&self, node: NodeIndex) -> (usize, usize) {
        let group = self.sibling_group(node);
        // Groups are in node order, so a binary search finds the node.
        (group.binary_search(&node).unwrap_or(0), group.len())
    }

    pub fn is_leaf(&self, node: NodeIndex) -> bool {
        self.children(node).is_empty()
    }

    /// Leaves, oldest first.
    pub fn leaves(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        (0..self.len()).filter(|&node| self.is_leaf(node))
    }

    /// The newest leaf: where the conversation's latest branch ends.
    pub fn latest_leaf(&self) -> Option<NodeIndex> {
        (0..self.len()).rev().find(|&node| self.is_leaf(node))
    }

    /// Number of ancestors: 0 for a root.
    pub fn depth(&self, node: NodeIndex) -> usize {
        self.depths[node]
    }

    /// The path from the node's root down to the node.
    pub fn path_to_root(&self, node: NodeIndex) -> TreePath {
        let mut nodes = Vec::with_capacity(self.depths[node] + 1);
        let mut current = node;
        nodes.push(current);
        // Cycles were cut while building; the bound keeps this finite regardless.
        while let Some(parent) = self.parents[current] {
            if nodes.len() > self.len() {
                break;
            }
            nodes.push(parent);
            current = parent;
        }
        nodes.reverse();
        let root = match self.links[nodes[0]] {
            ParentLink::Root(kind) => kind,
            ParentLink::Declared | ParentLink::PreviousAfterNil => RootKind::CycleBroken,
        };
        TreePath { nodes, root }
    }

    pub fn anomalies(&self) -> &[TreeAnomaly] {
        &self.anomalies
    }

    /// The nodes a tree view shows, depth first and oldest first, lazily: the descendants of
    /// nodes for which `is_collapsed` is true are not visited.
    pub fn visible<C: Fn(NodeIndex) -> bool>(&self, is_collapsed: C) -> VisibleNodes<'_, C> {
        VisibleNodes {
            tree: self,
            is_collapsed,
            stack: vec![Frame {
                siblings: &self.roots,
                next: 0,
                depth: 0,
                branch_depth: 0,
            }],
        }
    }
}

/// Cuts every cycle of the parent links at its oldest member and returns the cycles, each
/// starting at the member cut into a root and following parent links. Linear time.
fn break_cycles(parents: &mut [Option<NodeIndex>]) -> Vec<Vec<NodeIndex>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnPath,
        Done,
    }
    let mut state = vec![State::New; parents.len()];
    let mut cycles = Vec::new();
    let mut path = Vec::new();
    for start in 0..parents.len() {
        let mut current = Some(start);
        while let Some(node) = current {
            match state[node] {
                State::New => {
                    state[node] = State::OnPath;
                    path.push(node);
                    current = parents[node];
                }
                State::OnPath => {
                    let from = path.iter().rposition(|&n| n == node).unwrap_or(0);
                    let members = &path[from..];
                    let oldest = members.iter().copied().min().unwrap_or(node);
                    let at = members.iter().position(|&n| n == oldest).unwrap_or(0);
                    let mut cycle = members[at..].to_vec();
                    cycle.extend_from_slice(&members[..at]);
                    parents[oldest] = None;
                    cycles.push(cycle);
                    break;
                }
                State::Done => break,
            }
        }
        for node in path.drain(..) {
            state[node] = State::Done;
        }
    }
    cycles
}

/// Children lists in compressed form, each in node (chronological) order.
fn children_lists(parents: &[Option<NodeIndex>]) -> (Vec<usize>, Vec<NodeIndex>) {
    let mut child_start = vec![0; parents.len() + 1];
    for &parent in parents.iter().flatten() {
        child_start[parent + 1] += 1;
    }
    for n in 0..parents.len() {
        child_start[n + 1] += child_start[n];
    }
    let mut fill = child_start.clone();
    let mut child_list = vec![0; child_start[parents.len()]];
    for (node, parent) in parents.iter().enumerate() {
        if let Some(parent) = *parent {
            child_list[fill[parent]] = node;
            fill[parent] += 1;
        }
    }
    (child_start, child_list)
}

struct Frame<'t> {
    siblings: &'t [NodeIndex],
    next: usize,
    depth: usize,
    branch_depth: usize,
}

/// Iterator returned by [`MessageTree::visible`].
pub struct VisibleNodes<'t, C> {
    tree: &'t MessageTree,
    is_collapsed: C,
    stack: Vec<Frame<'t>>,
}

impl<C: Fn(NodeIndex) -> bool> Iterator for VisibleNodes<'_, C> {
    type Item = VisibleNode;

    fn next(&mut self) -> Option<VisibleNode> {
        loop {
            let frame = self.stack.last_mut()?;
            let Some(&node) = frame.siblings.get(frame.next) else {
                self.stack.pop();
                continue;
            };
            frame.next += 1;
            let is_last_sibling = frame.next == frame.siblings.len();
            let (depth, branch_depth) = (frame.depth, frame.branch_depth);
            let children = self.tree.children(node);
            let collapsed = !children.is_empty() && (self.is_collapsed)(node);
            if !children.is_empty() && !collapsed {
                self.stack.push(Frame {
                    siblings: children,
                    next: 0,
                    depth: depth + 1,
                    branch_depth: branch_depth + usize::from(children.len() > 1),
                });
            }
            return Some(VisibleNode {
                node,
                depth,
                branch_depth,
                is_last_sibling,
                has_children: !children.is_empty(),
                collapsed,
            });
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;

//! A conversation's thread seen both ways: Dify's extraction over the row window its memory
//! reads, the true tree path, and where the two differ, for any conversation of
//! question-and-answer rows whose parent links form regeneration trees.

use serde::Serialize;

use super::model::{StoredMessage, ThreadNode};
use super::thread::{ExtractionMode, ThreadComparison, compare_with_tree, extract_thread};
use super::tree::{MessageTree, NodeIndex};

/// The newest `window` rows memory reads, as references into `rows_oldest_first`: every row, or
/// only the answered ones where the history query filtered `answer != ''`.
fn memory_row_refs_newest_first(
    rows_oldest_first: &[StoredMessage],
    answered_only: bool,
    window: usize,
) -> Vec<&StoredMessage> {
    rows_oldest_first
        .iter()
        .rev()
        .filter(|row| !answered_only || !row.answer.is_empty())
        .take(window)
        .collect()
}

/// [`memory_row_refs_newest_first`], copied: the rows memory reads, newest first.
pub fn memory_rows_newest_first(
    rows_oldest_first: &[StoredMessage],
    answered_only: bool,
    window: usize,
) -> Vec<StoredMessage> {
    memory_row_refs_newest_first(rows_oldest_first, answered_only, window)
        .into_iter()
        .cloned()
        .collect()
}

/// Dify's thread (`extracted`, indices into `window_newest_first`) against the tree path from
/// `leaf`. Where memory reads only answered rows (before regeneration threads) the rows its
/// query skipped for an empty answer are no divergence: the thread is the path's answered rows.
pub fn compare_thread<N: ThreadNode>(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    window_newest_first: &[N],
    extracted: &[usize],
    tree: &MessageTree,
    leaf: NodeIndex,
) -> ThreadComparison {
    if answered_rows_only {
        let path = tree.path_to_root(leaf);
        let answered_path = path
            .nodes
            .iter()
            .map(|&node| &rows_oldest_first[tree.row(node)])
            .filter(|row| !row.answer.is_empty())
            .map(|row| row.id.as_str());
        let thread = extracted
            .iter()
            .rev()
            .map(|&row| window_newest_first[row].node_id());
        if answered_path.eq(thread) {
            return ThreadComparison::Same;
        }
    }
    compare_with_tree(window_newest_first, extracted, tree, leaf)
}

/// Which thread a view marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadMode {
    /// Dify's extraction as main does it (bug #39031 included).
    Dify,
    /// Dify's extraction with PR #39032's fix.
    Fixed,
    /// The true path from the chosen leaf up to its root.
    Tree,
}

impl ThreadMode {
    /// What the thread is, in the words the CLI and the TUI show.
    pub fn describe(self) -> &'static str {
        match self {
            ThreadMode::Dify => "Dify's extraction",
            ThreadMode::Fixed => "Dify's extraction with the parent fix",
            ThreadMode::Tree => "true tree path",
        }
    }
}

/// A conversation's thread seen both ways.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadView {
    pub mode: ThreadMode,
    /// The message the tree path ends at: the chosen leaf, else the newest message.
    pub leaf: Option<String>,
    pub window: usize,
    /// The marked thread, oldest first.
    pub thread: Vec<String>,
    /// Dify's extraction over the window (in the mode's flavour: Fixed for `fixed`), oldest first.
    pub extracted: Vec<String>,
    /// The tree path from the root to the leaf.
    pub tree_path: Vec<String>,
    pub comparison: ThreadComparison,
    pub comparison_text: String,
    pub anomalies: Vec<String>,
}

/// A conversation's thread as tree nodes: what [`ThreadView`] says, without a string per node,
/// so a view can recompute it on every key of a 50,000-message conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadNodes {
    pub mode: ThreadMode,
    /// The node the tree path ends at: the chosen leaf, else the newest row's.
    pub leaf: Option<NodeIndex>,
    pub window: usize,
    /// Dify's extraction over the window (in the mode's flavour), oldest first.
    pub extracted: Vec<NodeIndex>,
    /// The tree path from the root to the leaf.
    pub tree_path: Vec<NodeIndex>,
    pub comparison: ThreadComparison,
}

impl ThreadNodes {
    /// The marked thread, oldest first.
    pub fn thread(&self) -> &[NodeIndex] {
        match self.mode {
            ThreadMode::Tree => &self.tree_path,
            ThreadMode::Dify | ThreadMode::Fixed => &self.extracted,
        }
    }
}

/// Derives the thread's nodes over every row (`tree` built from them), where memory reads only
/// the answered ones if `answered_rows_only`. `leaf` defaults to the newest row: the message
/// Dify starts from.
pub fn thread_nodes(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    tree: &MessageTree,
    leaf: Option<NodeIndex>,
    mode: ThreadMode,
    window: usize,
) -> ThreadNodes {
    let window_rows = memory_row_refs_newest_first(rows_oldest_first, answered_rows_only, window);
    let extraction = match mode {
        ThreadMode::Fixed => ExtractionMode::Fixed,
        ThreadMode::Dify | ThreadMode::Tree => ExtractionMode::Dify,
    };
    let extracted_rows = extract_thread(&window_rows, extraction);
    let extracted = extracted_rows
        .iter()
        .rev()
        .filter_map(|&row| tree.find(&window_rows[row].id))
        .collect();
    let leaf = leaf.or_else(|| tree.find(&window_rows.first()?.id));
    let tree_path = leaf
        .map(|leaf| tree.path_to_root(leaf).nodes)
        .unwrap_or_default();
    let comparison = match leaf {
        Some(leaf) => compare_thread(
            rows_oldest_first,
            answered_rows_only,
            &window_rows,
            &extracted_rows,
            tree,
            leaf,
        ),
        None => ThreadComparison::Same,
    };
    ThreadNodes {
        mode,
        leaf,
        window,
        extracted,
        tree_path,
        comparison,
    }
}

/// [`thread_nodes`] with each node named by its id, as `thread` reports it.
pub fn thread_view(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    tree: &MessageTree,
    leaf: Option<NodeIndex>,
    mode: ThreadMode,
    window: usize,
) -> ThreadView {
    let nodes = thread_nodes(
        rows_oldest_first,
        answered_rows_only,
        tree,
        leaf,
        mode,
        window,
    );
    let ids = |nodes: &[NodeIndex]| -> Vec<String> {
        nodes.iter().map(|&node| tree.id(node).to_owned()).collect()
    };
    ThreadView {
        mode,
        leaf: nodes.leaf.map(|l| tree.id(l).to_owned()),
        window,
        thread: ids(nodes.thread()),
        extracted: ids(&nodes.extracted),
        tree_path: ids(&nodes.tree_path),
        comparison_text: nodes.comparison.to_string(),
        comparison: nodes.comparison,
        anomalies: tree.anomalies().iter().map(ToString::to_string).collect(),
    }
}

#[cfg(test)]
#[path = "thread_view_tests.rs"]
mod tests;

//! Thread extraction: Dify's newest-first walk and the true tree path.
//!
//! Dify never builds the message tree. It walks the rows of a conversation newest first and keeps
//! the rows whose id matches the parent it is tracking (reference §2.1). This module reproduces
//! that walk exactly, explains it step by step, and says where it differs from the path the tree
//! gives (see [`compare_with_tree`]).
//!
//! Ids are compared byte for byte, as Dify compares its lowercase hyphenated UUID strings; the
//! store hands them over in that form.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::model::{ThreadNode, UUID_NIL, declared_parent};
use super::tree::{MessageTree, NodeIndex};

/// Which version of `extract_thread_messages` to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractionMode {
    /// Dify main: the no-parent check runs for every row, so an unrelated root between a
    /// message and its parent ends the walk (bug #39031).
    #[default]
    Dify,
    /// PR #39032: the no-parent check runs only for rows on the tracked chain.
    Fixed,
}

/// What the walk did with one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepDecision {
    /// Appended to the thread; the walk goes on.
    Kept,
    /// Not on the thread.
    Skipped,
    /// Appended to the thread, and the walk ends here.
    Stopped,
}

/// Why the walk decided what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepReason {
    /// The newest row always starts the thread.
    FirstRow,
    /// Its id is the parent being tracked.
    MatchesTrackedParent,
    /// The tracked parent is `UUID_NIL`, so Dify takes the next row whatever its id.
    AcceptedAfterNil,
    /// A row of the thread without a parent: the thread's root.
    RootEndsWalk,
    /// A row without a parent that is not the tracked one, yet ends the walk (bug #39031).
    UnrelatedRootEndsWalk,
    /// A sibling (regeneration) or a row of another branch.
    NotOnThread,
}

impl StepReason {
    /// One line for a teaching view.
    pub fn describe(self) -> &'static str {
        match self {
            StepReason::FirstRow => "first row: the newest message always starts the thread",
            StepReason::MatchesTrackedParent => "its id is the parent being tracked",
            StepReason::AcceptedAfterNil => {
                "the tracked parent is UUID_NIL: the next row is taken whatever its id"
            }
            StepReason::RootEndsWalk => "no parent: the thread's root, the walk stops",
            StepReason::UnrelatedRootEndsWalk => {
                "no parent and not on the thread, yet Dify's walk stops here: the rest of the thread is lost"
            }
            StepReason::NotOnThread => "not on the thread: a sibling or another branch",
        }
    }
}

/// One examined row of a traced walk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionStep {
    /// Index into the input rows.
    pub row: usize,
    pub id: String,
    pub decision: StepDecision,
    pub reason: StepReason,
    /// The parent the walk looks for after this step; `None` once it has stopped.
    pub tracked_parent: Option<String>,
}

/// A walk with its explanation: one step per examined row, in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionTrace {
    /// Indices into the input, newest first: what [`extract_thread`] returns.
    pub thread: Vec<usize>,
    pub steps: Vec<ExtractionStep>,
}

/// The walk itself, reporting every examined row to `visit(row, decision, reason, tracked)`.
/// Bounded by the input: each row is examined at most once.
fn walk<'a, N: ThreadNode>(
    rows_newest_first: &'a [N],
    mode: ExtractionMode,
    mut visit: impl FnMut(usize, StepDecision, StepReason, Option<&'a str>),
) {
    let mut tracked: Option<&'a str> = None;
    for (row, node) in rows_newest_first.iter().enumerate() {
        let on_thread = match tracked {
            None => Some(StepReason::FirstRow),
            Some(parent) if parent == node.node_id() => Some(StepReason::MatchesTrackedParent),
            Some(UUID_NIL) => Some(StepReason::AcceptedAfterNil),
            Some(_) => None,
        };
        let parent = declared_parent(node);
        match (on_thread, parent, mode) {
            (Some(_), None, _) => {
                visit(row, StepDecision::Stopped, StepReason::RootEndsWalk, None);
                return;
            }
            (None, None, ExtractionMode::Dify) => {
                visit(
                    row,
                    StepDecision::Stopped,
                    StepReason::UnrelatedRootEndsWalk,
                    None,
                );
                return;
            }
            (Some(reason), Some(parent), _) => {
                tracked = Some(parent);
                visit(row, StepDecision::Kept, reason, tracked);
            }
            (None, _, _) => visit(row, StepDecision::Skipped, StepReason::NotOnThread, tracked),
        }
    }
}

/// Dify's `extract_thread_messages`: indices of the thread's rows, newest first.
pub fn extract_thread<N: ThreadNode>(rows_newest_first: &[N], mode: ExtractionMode) -> Vec<usize> {
    let mut thread = Vec::new();
    walk(rows_newest_first, mode, |row, decision, _, _| {
        if decision != StepDecision::Skipped {
            thread.push(row);
        }
    });
    thread
}

/// [`extract_thread`] with one explained step per examined row, for teaching views.
pub fn extract_thread_traced<N: ThreadNode>(
    rows_newest_first: &[N],
    mode: ExtractionMode,
) -> ExtractionTrace {
    let mut trace = ExtractionTrace {
        thread: Vec::new(),
        steps: Vec::new(),
    };
    walk(rows_newest_first, mode, |row, decision, reason, tracked| {
        if decision != StepDecision::Skipped {
            trace.thread.push(row);
        }
        trace.steps.push(ExtractionStep {
            row,
            id: rows_newest_first[row].node_id().to_owned(),
            decision,
            reason,
            tracked_parent: tracked.map(str::to_owned),
        });
    });
    trace
}

/// Where Dify's extraction and the tree path to a chosen message differ, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThreadComparison {
    /// Same rows in the same order.
    Same,
    /// Dify starts from the newest row, not from the chosen message (#18827).
    FollowedNewerLeaf { dify_start: String, chosen: String },
    /// Dify met a root that is not on the path and stopped there (#39031).
    StoppedAtUnrelatedRoot {
        root: String,
        position: usize,
        /// The row the tree has at that position, if the path is that long.
        expected: Option<String>,
    },
    /// After a `UUID_NIL` parent, Dify took the next row, which the tree does not link (rows
    /// ordered differently, e.g. same-second ties, or a link broken as a cycle).
    TookRowAfterNil {
        nil_child: String,
        taken: String,
        tree_parent: Option<String>,
    },
    /// The row window ended the thread: the oldest loaded row's parent was not loaded.
    WindowCut {
        oldest_loaded: String,
        parent_not_loaded: String,
    },
    /// Any other difference: the first position where the two disagree (newest first).
    Diverged {
        position: usize,
        dify: Option<String>,
        tree: Option<String>,
    },
}

/// The first block of a UUID, as lists show ids (and as every command accepts them).
fn short(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

impl std::fmt::Display for ThreadComparison {
    /// One sentence with ids shortened as lists show them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or_none = |id: &Option<String>| {
            id.as_deref()
                .map_or_else(|| "nothing".to_owned(), |i| short(i).to_owned())
        };
        match self {
            ThreadComparison::Same => write!(f, "Dify's thread is the tree path"),
            ThreadComparison::FollowedNewerLeaf { dify_start, chosen } => write!(
                f,
                "Dify starts from the newest message {}, not from {}",
                short(dify_start),
                short(chosen)
            ),
            ThreadComparison::StoppedAtUnrelatedRoot {
                root,
                position,
                expected,
            } => write!(
                f,
                "Dify stopped at the unrelated root {} at position {position} where the \
                 tree has {}",
                short(root),
                or_none(expected)
            ),
            ThreadComparison::TookRowAfterNil {
                nil_child,
                taken,
                tree_parent,
            } => write!(
                f,
                "after {}'s UUID_NIL parent Dify took {}; the tree links {}",
                short(nil_child),
                short(taken),
                or_none(tree_parent)
            ),
            ThreadComparison::WindowCut {
                oldest_loaded,
                parent_not_loaded,
            } => write!(
                f,
                "the row window ends at {}: its parent {} was not loaded",
                short(oldest_loaded),
                short(parent_not_loaded)
            ),
            ThreadComparison::Diverged {
                position,
                dify,
                tree,
            } => write!(
                f,
                "at position {position} Dify has {} and the tree has {}",
                or_none(dify),
                or_none(tree)
            ),
        }
    }
}

/// Compares Dify's thread (`dify_thread`, indices into `window_newest_first` as
/// [`extract_thread`] returns them) with the tree path from `chosen` up to its root.
pub fn compare_with_tree<N: ThreadNode>(
    window_newest_first: &[N],
    dify_thread: &[usize],
    tree: &MessageTree,
    chosen: NodeIndex,
) -> ThreadComparison {
    // Indices outside the window are ignored rather than trusted.
    let dify_rows: Vec<&N> = dify_thread
        .iter()
        .filter_map(|&row| window_newest_first.get(row))
        .collect();
    let dify: Vec<&str> = dify_rows.iter().map(|row| row.node_id()).collect();
    let mut path = tree.path_to_root(chosen).nodes;
    path.reverse();
    let tree_ids: Vec<&str> = path.iter().map(|&node| tree.id(node)).collect();
    if dify == tree_ids {
        return ThreadComparison::Same;
    }
    match dify.first() {
        Some(&start) if start != tree.id(chosen) => {
            return ThreadComparison::FollowedNewerLeaf {
                dify_start: start.to_owned(),
                chosen: tree.id(chosen).to_owned(),
            };
        }
        _ => {}
    }
    let position = dify
        .iter()
        .zip(&tree_ids)
        .take_while(|(a, b)| a == b)
        .count();
    let owned = |id: Option<&&str>| id.map(|id| (*id).to_owned());
    let expected = tree_ids.get(position);
    let previous_row = position.checked_sub(1).and_then(|p| dify_rows.get(p));
    match (previous_row, dify_rows.get(position)) {
        (Some(previous_row), Some(taken_row)) => {
            if declared_parent(*previous_row) == Some(UUID_NIL) {
                return ThreadComparison::TookRowAfterNil {
                    nil_child: previous_row.node_id().to_owned(),
                    taken: taken_row.node_id().to_owned(),
                    tree_parent: owned(expected),
                };
            }
            if declared_parent(*taken_row).is_none() && !tree_ids.contains(&taken_row.node_id()) {
                return ThreadComparison::StoppedAtUnrelatedRoot {
                    root: taken_row.node_id().to_owned(),
                    position,
                    expected: owned(expected),
                };
            }
        }
        (Some(oldest), None) => {
            if let Some(&missing) = expected {
                let loaded: FxHashSet<&str> = window_newest_first
                    .iter()
                    .map(ThreadNode::node_id)
                    .collect();
                if !loaded.contains(missing) {
                    return ThreadComparison::WindowCut {
                        oldest_loaded: oldest.node_id().to_owned(),
                        parent_not_loaded: missing.to_owned(),
                    };
                }
            }
        }
        (None, _) => {}
    }
    ThreadComparison::Diverged {
        position,
        dify: owned(dify.get(position)),
        tree: owned(expected),
    }
}

#[cfg(test)]
#[path = "thread_tests.rs"]
pub(crate) mod tests;

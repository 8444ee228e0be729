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
pub(crate) mod tests {
    use super::*;
    use crate::memory::model::StoredMessage;
    use proptest::prelude::*;

    /// A bare `id←parent` record, as the reference's edge-case table writes them.
    #[derive(Debug, Clone)]
    pub(crate) struct Link {
        pub id: String,
        pub parent: Option<String>,
    }

    impl ThreadNode for Link {
        fn node_id(&self) -> &str {
            &self.id
        }

        fn parent_id(&self) -> Option<&str> {
            self.parent.as_deref()
        }
    }

    /// Parses `"id<-parent"`; `None` is spelled `-`, `""` is spelled `""`, `UUID_NIL` is `NIL`.
    pub(crate) fn links(spec: &str) -> Vec<Link> {
        let nil = |s: &str| if s == "NIL" { UUID_NIL } else { s }.to_owned();
        spec.split_whitespace()
            .map(|pair| {
                let (id, parent) = pair.split_once("<-").expect("id<-parent");
                let parent = match parent {
                    "-" => None,
                    "\"\"" => Some(String::new()),
                    other => Some(nil(other)),
                };
                Link {
                    id: nil(id),
                    parent,
                }
            })
            .collect()
    }

    fn ids(rows: &[Link], thread: &[usize]) -> Vec<String> {
        let short = |id: &str| if id == UUID_NIL { "NIL" } else { id }.to_owned();
        thread.iter().map(|&i| short(&rows[i].id)).collect()
    }

    fn extract(spec: &str, mode: ExtractionMode) -> Vec<String> {
        let rows = links(spec);
        ids(&rows, &extract_thread(&rows, mode))
    }

    fn both(spec: &str) -> [Vec<String>; 2] {
        [
            extract(spec, ExtractionMode::Dify),
            extract(spec, ExtractionMode::Fixed),
        ]
    }

    // The reference's §2.3 table, one test per row.

    #[test]
    fn empty_input_gives_empty_thread() {
        assert_eq!(both(""), [Vec::<String>::new(), Vec::new()]);
    }

    #[test]
    fn single_nil_row() {
        assert_eq!(both("a<-NIL"), [vec!["a"], vec!["a"]]);
    }

    #[test]
    fn root_first_stops_at_once() {
        assert_eq!(both("2<-- 1<-NIL"), [vec!["2"], vec!["2"]]);
    }

    #[test]
    fn empty_parent_is_a_root() {
        assert_eq!(both("2<-\"\" 1<-NIL"), [vec!["2"], vec!["2"]]);
    }

    #[test]
    fn disconnected_head_is_kept() {
        assert_eq!(both("1<-2 3<-4"), [vec!["1"], vec!["1"]]);
    }

    #[test]
    fn cycle_ends_with_the_list() {
        assert_eq!(both("1<-2 2<-1"), [vec!["1", "2"], vec!["1", "2"]]);
    }

    #[test]
    fn two_roots_keep_the_first() {
        assert_eq!(both("1<-- 2<--"), [vec!["1"], vec!["1"]]);
    }

    #[test]
    fn after_nil_the_next_row_is_taken_then_its_parent_followed() {
        assert_eq!(
            both("3<-NIL 2<-1 1<--"),
            [vec!["3", "2", "1"], vec!["3", "2", "1"]]
        );
    }

    #[test]
    fn unrelated_root_stops_dify_but_not_the_fix() {
        assert_eq!(
            both("C<-B X<-- B<-A A<--"),
            [vec!["C", "X"], vec!["C", "B", "A"]]
        );
    }

    #[test]
    fn row_whose_id_is_nil() {
        assert_eq!(both("1<-2 NIL<--"), [vec!["1", "NIL"], vec!["1"]]);
    }

    #[test]
    fn truncated_window_ends_at_the_oldest_loaded_row() {
        // A chain 5←4←3←2←1 of which only the newest three rows were loaded.
        assert_eq!(
            both("5<-4 4<-3 3<-2"),
            [vec!["5", "4", "3"], vec!["5", "4", "3"]]
        );
    }

    #[test]
    fn seed_regeneration_example() {
        // Rows are turns: 1 = (A, A'), 2 = (B, B') child of 1, 3 = (A, A'') regenerated from the
        // start (a new root), 4 = (C, C') child of 3. The thread is 3, 4: [A, A'', C, C'].
        assert_eq!(
            both("4<-3 3<-- 2<-1 1<--"),
            [vec!["4", "3"], vec!["4", "3"]]
        );
    }

    #[test]
    fn siblings_are_skipped() {
        assert_eq!(
            both("3<-2b 2b<-1 2a<-1 1<--"),
            [vec!["3", "2b", "1"], vec!["3", "2b", "1"]]
        );
    }

    #[test]
    fn trace_explains_every_examined_row() {
        let rows = links("C<-B X<-- B<-A A<--");
        let trace = extract_thread_traced(&rows, ExtractionMode::Dify);
        let summary: Vec<_> = trace
            .steps
            .iter()
            .map(|s| (s.row, s.decision, s.reason, s.tracked_parent.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                (0, StepDecision::Kept, StepReason::FirstRow, Some("B")),
                (
                    1,
                    StepDecision::Stopped,
                    StepReason::UnrelatedRootEndsWalk,
                    None
                ),
            ]
        );
        assert_eq!(trace.thread, extract_thread(&rows, ExtractionMode::Dify));

        let fixed = extract_thread_traced(&rows, ExtractionMode::Fixed);
        let reasons: Vec<_> = fixed.steps.iter().map(|s| (s.decision, s.reason)).collect();
        assert_eq!(
            reasons,
            [
                (StepDecision::Kept, StepReason::FirstRow),
                (StepDecision::Skipped, StepReason::NotOnThread),
                (StepDecision::Kept, StepReason::MatchesTrackedParent),
                (StepDecision::Stopped, StepReason::RootEndsWalk),
            ]
        );
        assert_eq!(fixed.steps[1].tracked_parent.as_deref(), Some("B"));
        assert_eq!(fixed.steps[2].id, "B");
    }

    #[test]
    fn trace_names_acceptance_after_nil() {
        let rows = links("3<-NIL 2<-1 1<--");
        let trace = extract_thread_traced(&rows, ExtractionMode::Dify);
        assert_eq!(trace.steps[1].reason, StepReason::AcceptedAfterNil);
        assert_eq!(trace.steps[1].tracked_parent.as_deref(), Some("1"));
    }

    #[test]
    fn stored_messages_extract_like_links() {
        let message = |id: &str, parent: Option<&str>| {
            StoredMessage::turn(id, "c", parent, "", "", chrono::NaiveDateTime::default())
        };
        let rows = [
            message("2", Some("1")),
            message("x", Some("")),
            message("1", None),
        ];
        assert_eq!(extract_thread(&rows, ExtractionMode::Dify), [0, 1]);
        assert_eq!(extract_thread(&rows, ExtractionMode::Fixed), [0, 2]);
    }

    // Comparison with the tree path.

    /// Builds the tree from `chronological`, extracts with Dify from `window`, compares at the
    /// node named `chosen`.
    fn compare(chronological: &str, window: &str, chosen: &str) -> ThreadComparison {
        let tree = MessageTree::build(&links(chronological));
        let window = links(window);
        let thread = extract_thread(&window, ExtractionMode::Dify);
        let chosen = tree.find(chosen).expect("chosen node exists");
        compare_with_tree(&window, &thread, &tree, chosen)
    }

    #[test]
    fn comparison_same_for_a_plain_chain() {
        assert_eq!(
            compare("1<-- 2<-1 3<-2", "3<-2 2<-1 1<--", "3"),
            ThreadComparison::Same
        );
    }

    #[test]
    fn comparison_names_the_unrelated_root() {
        assert_eq!(
            compare("A<-- B<-A X<-- C<-B", "C<-B X<-- B<-A A<--", "C"),
            ThreadComparison::StoppedAtUnrelatedRoot {
                root: "X".into(),
                position: 1,
                expected: Some("B".into()),
            }
        );
    }

    #[test]
    fn comparison_names_a_row_taken_after_nil_the_tree_does_not_link() {
        // 2 and 3 were created in the same second and the window lists them in the other order.
        assert_eq!(
            compare("1<-- 2<-1 3<-2 4<-NIL", "4<-NIL 2<-1 3<-2 1<--", "4"),
            ThreadComparison::TookRowAfterNil {
                nil_child: "4".into(),
                taken: "2".into(),
                tree_parent: Some("3".into()),
            }
        );
    }

    #[test]
    fn comparison_names_the_window_cut() {
        assert_eq!(
            compare("1<-- 2<-1 3<-2 4<-3 5<-4", "5<-4 4<-3 3<-2", "5"),
            ThreadComparison::WindowCut {
                oldest_loaded: "3".into(),
                parent_not_loaded: "2".into(),
            }
        );
    }

    #[test]
    fn comparison_names_a_newer_leaf() {
        assert_eq!(
            compare("1<-- 2a<-1 2b<-1", "2b<-1 2a<-1 1<--", "2a"),
            ThreadComparison::FollowedNewerLeaf {
                dify_start: "2b".into(),
                chosen: "2a".into(),
            }
        );
    }

    #[test]
    fn comparison_falls_back_to_the_first_differing_position() {
        // The thread's own root is listed before its child (clock skew): Dify stops at it early,
        // but it is on the path, so this is not #39031.
        assert_eq!(
            compare("A<-- B<-A C<-B", "C<-B A<-- B<-A", "C"),
            ThreadComparison::Diverged {
                position: 1,
                dify: Some("A".into()),
                tree: Some("B".into()),
            }
        );
    }

    #[test]
    fn comparisons_and_reasons_read_as_sentences() {
        let cut = compare("A<-- B<-A X<-- C<-B", "C<-B X<-- B<-A A<--", "C");
        assert_eq!(
            cut.to_string(),
            "Dify stopped at the unrelated root X at position 1 where the tree has B"
        );
        assert!(
            StepReason::UnrelatedRootEndsWalk
                .describe()
                .contains("the rest of the thread is lost")
        );
    }

    #[test]
    fn comparison_ignores_thread_indices_outside_the_window() {
        let tree = MessageTree::build(&links("1<-- 2<-1"));
        let window = links("2<-1 1<--");
        let chosen = tree.find("2").expect("node exists");
        assert_eq!(
            compare_with_tree(&window, &[0, 1, 7], &tree, chosen),
            ThreadComparison::Same
        );
        assert_eq!(
            compare_with_tree(&window, &[], &tree, chosen),
            ThreadComparison::Diverged {
                position: 0,
                dify: None,
                tree: Some("2".into()),
            }
        );
    }

    // Property tests.

    /// Rows with ids and parents from a small pool, so that cycles, self-parents, dangling
    /// parents, duplicates, `""` and `UUID_NIL` all occur.
    pub(crate) fn arbitrary_links() -> impl Strategy<Value = Vec<Link>> {
        let id = prop_oneof![
            8 => (0u8..12).prop_map(|n| format!("m{n}")),
            1 => Just(UUID_NIL.to_owned()),
        ];
        let parent = prop_oneof![
            6 => (0u8..14).prop_map(|n| Some(format!("m{n}"))),
            1 => Just(None),
            1 => Just(Some(String::new())),
            1 => Just(Some(UUID_NIL.to_owned())),
        ];
        prop::collection::vec((id, parent), 0..30).prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(id, parent)| Link { id, parent })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn extraction_returns_distinct_valid_increasing_indices(rows in arbitrary_links()) {
            for mode in [ExtractionMode::Dify, ExtractionMode::Fixed] {
                let thread = extract_thread(&rows, mode);
                prop_assert!(thread.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(thread.iter().all(|&i| i < rows.len()));
                prop_assert_eq!(thread.first().copied(), (!rows.is_empty()).then_some(0));
                let trace = extract_thread_traced(&rows, mode);
                prop_assert_eq!(&trace.thread, &thread);
                prop_assert!(trace.steps.len() <= rows.len());
            }
        }

        #[test]
        fn fixed_extraction_follows_the_tree_path(
            parents in prop::collection::vec(prop::option::weighted(0.8, any::<prop::sample::Index>()), 1..60),
        ) {
            // Row i's parent is an earlier row or none: a forest without anomalies or UUID_NIL.
            let chronological: Vec<Link> = parents
                .iter()
                .enumerate()
                .map(|(i, parent)| Link {
                    id: format!("m{i}"),
                    parent: parent.filter(|_| i > 0).map(|p| format!("m{}", p.index(i))),
                })
                .collect();
            let tree = MessageTree::build(&chronological);
            prop_assert!(tree.anomalies().is_empty());
            let newest_first: Vec<Link> = chronological.iter().rev().cloned().collect();
            let thread = extract_thread(&newest_first, ExtractionMode::Fixed);
            let newest = tree.find(&newest_first[0].id).expect("newest is a node");
            let path = tree.path_to_root(newest).nodes;
            let from_tree: Vec<&str> = path.iter().rev().map(|&n| tree.id(n)).collect();
            let from_walk: Vec<&str> = thread.iter().map(|&i| newest_first[i].id.as_str()).collect();
            prop_assert_eq!(from_walk, from_tree);
            prop_assert_eq!(
                compare_with_tree(&newest_first, &thread, &tree, newest),
                ThreadComparison::Same
            );
        }
    }
}

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

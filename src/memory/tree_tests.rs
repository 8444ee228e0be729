use super::*;
use crate::memory::thread::tests::{arbitrary_links, links};
use proptest::prelude::*;
use rustc_hash::FxHashSet;

fn tree(spec: &str) -> MessageTree {
    MessageTree::build(&links(spec))
}

fn names(tree: &MessageTree, nodes: impl IntoIterator<Item = NodeIndex>) -> Vec<&str> {
    nodes.into_iter().map(|n| tree.id(n)).collect()
}

fn node(tree: &MessageTree, id: &str) -> NodeIndex {
    tree.find(id).expect("node exists")
}

#[test]
fn regeneration_tree_from_the_seed() {
    // Turns: 1 (A, A'), 2 (B, B') child of 1, 3 (A, A'') a regenerated first turn, 4 (C, C').
    let t = tree("1<-- 2<-1 3<-- 4<-3");
    assert_eq!(names(&t, t.roots().iter().copied()), ["1", "3"]);
    assert_eq!(names(&t, t.siblings(node(&t, "3"))), ["1"]);
    assert_eq!(t.sibling_position(node(&t, "3")), (1, 2));
    assert_eq!(names(&t, t.leaves()), ["2", "4"]);
    assert_eq!(t.latest_leaf().map(|n| t.id(n)), Some("4"));
    assert_eq!(names(&t, t.path_to_root(node(&t, "4")).nodes), ["3", "4"]);
    assert!(t.anomalies().is_empty());
}

#[test]
fn children_siblings_and_depths() {
    let t = tree("1<-- 2a<-1 2b<-1 3<-2b 2c<-1");
    assert_eq!(
        names(&t, t.children(node(&t, "1")).iter().copied()),
        ["2a", "2b", "2c"]
    );
    assert_eq!(names(&t, t.siblings(node(&t, "2b"))), ["2a", "2c"]);
    assert_eq!(t.sibling_position(node(&t, "2c")), (2, 3));
    assert_eq!(t.depth(node(&t, "3")), 2);
    assert_eq!(t.parent(node(&t, "3")), Some(node(&t, "2b")));
    assert_eq!(t.parent_link(node(&t, "3")), ParentLink::Declared);
    assert_eq!(t.latest_leaf().map(|n| t.id(n)), Some("2c"));
}

#[test]
fn nil_parent_links_to_the_previous_row() {
    let t = tree("1<-NIL 2<-NIL 3<-NIL");
    assert_eq!(
        t.parent_link(0),
        ParentLink::Root(RootKind::NilWithoutPredecessor)
    );
    assert_eq!(t.parent_link(2), ParentLink::PreviousAfterNil);
    let path = t.path_to_root(2);
    assert_eq!(names(&t, path.nodes), ["1", "2", "3"]);
    assert_eq!(path.root, RootKind::NilWithoutPredecessor);
}

#[test]
fn nil_parent_after_a_duplicate_links_to_the_previous_kept_row() {
    let t = tree("1<-- 2<-1 1<-2 3<-NIL");
    assert_eq!(t.parent(node(&t, "3")), Some(node(&t, "2")));
    assert_eq!(
        t.anomalies(),
        [TreeAnomaly::DuplicateId {
            id: "1".into(),
            row: 2,
            first_row: 0
        }]
    );
    assert_eq!(t.row(node(&t, "3")), 3);
}

#[test]
fn dangling_parent_makes_a_reported_root() {
    let t = tree("1<-- 2<-ghost 3<-2");
    let path = t.path_to_root(node(&t, "3"));
    assert_eq!(names(&t, path.nodes), ["2", "3"]);
    assert_eq!(path.root, RootKind::DanglingParent);
    assert_eq!(
        t.anomalies(),
        [TreeAnomaly::DanglingParent {
            id: "2".into(),
            missing_parent: "ghost".into()
        }]
    );
}

#[test]
fn cycles_are_cut_at_their_oldest_member() {
    let t = tree("a<-c b<-a c<-b d<-c s<-s");
    assert_eq!(
        t.anomalies(),
        [
            TreeAnomaly::Cycle {
                members: vec!["a".into(), "c".into(), "b".into()]
            },
            TreeAnomaly::Cycle {
                members: vec!["s".into()]
            },
        ]
    );
    assert_eq!(names(&t, t.roots().iter().copied()), ["a", "s"]);
    assert_eq!(
        t.anomalies()[0].to_string(),
        "parent links go round through a -> c -> b; cut at a"
    );
    let path = t.path_to_root(node(&t, "d"));
    assert_eq!(names(&t, path.nodes), ["a", "b", "c", "d"]);
    assert_eq!(path.root, RootKind::CycleBroken);
    assert_eq!(t.depth(node(&t, "d")), 3);
}

#[test]
fn cycle_through_a_nil_link_is_cut() {
    // p is older but names x as its parent; x's UUID_NIL links it back to p.
    let t = tree("p<-x x<-NIL");
    assert_eq!(t.anomalies().len(), 1);
    assert_eq!(t.roots(), [0]);
    assert_eq!(t.parent_link(0), ParentLink::Root(RootKind::CycleBroken));
}

#[test]
fn empty_tree() {
    let t = tree("");
    assert!(t.is_empty());
    assert_eq!(t.latest_leaf(), None);
    assert_eq!(t.visible(|_| false).count(), 0);
}

#[test]
fn visible_nodes_skip_collapsed_subtrees() {
    let t = tree("1<-- 2a<-1 3<-2a 2b<-1 r<--");
    let collapsed: FxHashSet<NodeIndex> = [node(&t, "2a")].into_iter().collect();
    let lines: Vec<_> = t
        .visible(|n| collapsed.contains(&n))
        .map(|v| {
            (
                t.id(v.node),
                v.depth,
                v.branch_depth,
                v.is_last_sibling,
                v.collapsed,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("1", 0, 0, false, false),
            ("2a", 1, 1, false, true),
            ("2b", 1, 1, true, false),
            ("r", 0, 0, true, false),
        ]
    );
    let expanded: Vec<_> = t.visible(|_| false).map(|v| t.id(v.node)).collect();
    assert_eq!(expanded, ["1", "2a", "3", "2b", "r"]);
}

#[test]
fn long_chains_and_cycles_do_not_recurse() {
    let count = 100_000;
    let chain: Vec<String> = (0..count)
        .map(|i| match i {
            0 => format!("n0<-n{}", count - 1),
            _ => format!("n{i}<-n{}", i - 1),
        })
        .collect();
    let t = tree(&chain.join(" "));
    assert_eq!(t.anomalies().len(), 1);
    assert_eq!(t.depth(count - 1), count - 1);
    assert_eq!(t.path_to_root(count - 1).nodes.len(), count);
    assert_eq!(t.visible(|_| false).count(), count);
}

proptest! {
    #[test]
    fn tree_paths_are_root_to_node_chains(rows in arbitrary_links()) {
        let t = MessageTree::build(&rows);
        for chosen in 0..t.len() {
            let path = t.path_to_root(chosen);
            prop_assert_eq!(t.parent(path.nodes[0]), None);
            prop_assert_eq!(path.nodes.last().copied(), Some(chosen));
            prop_assert_eq!(path.nodes.len(), t.depth(chosen) + 1);
            for pair in path.nodes.windows(2) {
                prop_assert_eq!(t.parent(pair[1]), Some(pair[0]));
            }
        }
        prop_assert_eq!(t.visible(|_| false).count(), t.len());
        let child_count: usize = (0..t.len()).map(|n| t.children(n).len()).sum();
        prop_assert_eq!(child_count + t.roots().len(), t.len());
    }
}

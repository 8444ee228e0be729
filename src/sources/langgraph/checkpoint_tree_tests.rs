use super::*;
use crate::sources::checkpoint_history::ThreadTree;
use crate::sources::langgraph::decode::tree::CheckpointTree;
use crate::sources::langgraph::decode::tree_fixtures::{agent_rows_with_subgraph, row, task};

fn tree() -> ThreadTree {
    let tasks = [
        task("", "1-b", "~__pregel_pull, agent"),
        task("", "1-b", "~__pregel_pull, tools"),
    ];
    thread_tree(
        "t",
        &CheckpointTree::build(&agent_rows_with_subgraph(), &tasks),
        None,
    )
    .unwrap()
}

#[test]
fn branches_are_siblings_with_the_path_to_the_latest_marked() {
    let tree = tree();
    let ids: Vec<&str> = tree.nodes.iter().map(|n| n.id.as_str()).collect();
    // Depth first: the first branch of 1-c, then the second.
    assert_eq!(
        ids,
        ["1-a", "1-b", "1-c", "1-d", "1-e", "1-f", "1-g", "1-h"]
    );
    let d = &tree.nodes[3];
    let f = &tree.nodes[5];
    assert_eq!((d.sibling, d.on_thread), ((1, 2), false));
    assert_eq!((f.sibling, f.on_thread), ((2, 2), true));
    // Both branches are indented under their common parent.
    assert_eq!((tree.nodes[2].depth, d.depth, f.depth), (0, 1, 1));
    assert!(tree.nodes[7].latest && tree.nodes.iter().filter(|n| n.latest).count() == 1);
    assert_eq!(
        tree.nodes[2].nodes,
        ["agent", "tools"],
        "1-c: written by 1-b's tasks"
    );
    assert_eq!(tree.leaf.as_deref(), Some("1-h"));
    assert_eq!(tree.thread, ["1-a", "1-b", "1-c", "1-f", "1-g", "1-h"]);
}

#[test]
fn a_subgraph_s_checkpoints_follow_the_root_checkpoint_of_its_task() {
    let tree = tree();
    let rows = tree.rows();
    let named: Vec<(&str, &str)> = rows
        .iter()
        .map(|&r| {
            let (ns, line) = tree.line(r);
            (ns, line.id.as_str())
        })
        .collect();
    assert_eq!(
        named[2..5],
        [("", "1-c"), ("worker:abc", "1-c1"), ("worker:abc", "1-c2")]
    );
    assert_eq!(rows.len(), 10);
    assert_eq!(tree.subgraphs[0].node, "worker");
    assert!(
        tree.subgraphs[0].nodes[1].latest,
        "each namespace has its latest"
    );
}

#[test]
fn a_subgraph_whose_root_checkpoint_is_gone_is_listed_last() {
    let mut rows = agent_rows_with_subgraph();
    for sub in rows.iter_mut().filter(|r| !r.checkpoint_ns.is_empty()) {
        sub.metadata["parents"] = serde_json::json!({"": "pruned"});
    }
    rows.push(row("", "1-i", Some("1-h"), "loop", 5));
    let tree = thread_tree("t", &CheckpointTree::build(&rows, &[]), Some("1-e")).unwrap();
    let last: Vec<&str> = tree.rows()[9..]
        .iter()
        .map(|&r| tree.line(r).1.id.as_str())
        .collect();
    assert_eq!(last, ["1-c1", "1-c2"]);
    assert_eq!(tree.leaf.as_deref(), Some("1-e"));
    assert!(
        tree.nodes
            .iter()
            .any(|n| n.id == "1-i" && n.latest && !n.on_thread)
    );
    assert!(thread_tree("t", &CheckpointTree::build(&rows, &[]), Some("nope")).is_err());
}

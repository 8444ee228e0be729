use super::*;
use crate::sources::langgraph::decode::tree_fixtures::{
    agent_rows, agent_rows_with_subgraph, row, task,
};

#[test]
fn branches_are_siblings_and_the_latest_is_the_greatest_id() {
    let mut rows = agent_rows();
    rows.reverse(); // any order in, oldest first out
    let tree = CheckpointTree::build(&rows, &[]);
    assert_eq!(tree.latest().unwrap().id, "1-h");
    assert_eq!(
        tree.thread(None).unwrap(),
        ["1-a", "1-b", "1-c", "1-f", "1-g", "1-h"]
    );
    assert_eq!(
        tree.thread(Some("1-e")).unwrap(),
        ["1-a", "1-b", "1-c", "1-d", "1-e"]
    );
    let c = tree.root.tree.find("1-c").unwrap();
    let children: Vec<&str> = tree
        .root
        .tree
        .children(c)
        .iter()
        .map(|&n| tree.root.tree.id(n))
        .collect();
    assert_eq!(children, ["1-d", "1-f"]);
    assert_eq!(
        tree.root.find("1-h").unwrap().source.as_deref(),
        Some("update")
    );
    assert_eq!(tree.root.find("1-a").unwrap().step, Some(-1));
    assert!(tree.root.anomalies().is_empty());
    assert_eq!(
        tree.thread(Some("nope")),
        Err(UnknownCheckpoint::new("nope"))
    );
}

#[test]
fn a_loop_checkpoint_is_written_by_the_nodes_of_its_parents_tasks() {
    let tasks = [
        task("", "1-a", "~__pregel_pull, __start__"),
        task("", "1-b", "~__pregel_pull, agent"),
        task("", "1-b", "~__pregel_pull, agent"),
        task("", "1-c", "~__pregel_pull, tools"),
        task("", "1-g", "~__interrupt__, 0000000000"),
        task("sub:1", "1-b", "~__pregel_pull, elsewhere"),
    ];
    let tree = CheckpointTree::build(&agent_rows(), &tasks);
    let nodes = |id: &str| tree.root.find(id).unwrap().nodes.clone();
    assert_eq!(nodes("1-b"), ["__start__"]);
    assert_eq!(nodes("1-c"), ["agent"]);
    // An input checkpoint is written by the caller, an update by update_state: no node.
    assert!(nodes("1-d").is_empty());
    assert!(nodes("1-h").is_empty());
}

#[test]
fn subgraph_namespaces_hang_from_the_root_checkpoint_of_their_task() {
    let rows = agent_rows_with_subgraph();
    let tree = CheckpointTree::build(&rows, &[]);
    assert_eq!(
        tree.root.checkpoints.len(),
        8,
        "the root tree holds namespace '' only"
    );
    let subgraphs: Vec<&str> = tree
        .subgraphs_of("1-c")
        .map(|ns| ns.name.as_str())
        .collect();
    assert_eq!(subgraphs, ["worker:abc"]);
    assert_eq!(tree.subgraphs[0].path(None).unwrap(), ["1-c1", "1-c2"]);
    assert_eq!(tree.subgraphs_of("1-b").count(), 0);
    assert_eq!(namespace_node("worker:abc"), "worker");
    assert_eq!(namespace_node("outer:1|inner:2"), "inner");
}

#[test]
fn missing_parents_and_an_empty_thread_are_no_panic() {
    let rows = vec![
        row("", "2-b", Some("gone"), "loop", 3),
        row("", "2-c", Some("2-b"), "loop", 4),
    ];
    let tree = CheckpointTree::build(&rows, &[]);
    assert_eq!(tree.thread(None).unwrap(), ["2-b", "2-c"]);
    assert_eq!(tree.root.anomalies().len(), 1);
    let empty = CheckpointTree::build(&[], &[]);
    assert!(empty.latest().is_none());
    assert!(empty.thread(None).unwrap().is_empty());
}

#[test]
fn a_checkpoint_is_named_as_it_is_shown() {
    // LangGraph's ids of one thread share their start and differ at their end.
    let ids = [
        "1f1ea8c2-4d6e-6a01-8000-5b2f0c43e9d8",
        "1f1ea8c2-4d6e-6a02-8001-77a1c953e9d8",
        "1f1ea8c2-4d6e-6a03-8002-0d3e9aa01b2c",
    ];
    let rows: Vec<CheckpointRow> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| row("", id, n.checked_sub(1).map(|p| ids[p]), "loop", n as i64))
        .collect();
    let tree = CheckpointTree::build(&rows, &[]);
    // The whole id, a unique tail or start, the tree's middle-cut form (… or ...), any case.
    for typed in [
        ids[0],
        "43e9d8",
        "5B2F0C43E9D8",
        "1f1ea8…43e9d8",
        "1f1ea8...43e9d8",
        "1f1ea8c2-4d6e-6a01",
    ] {
        assert_eq!(tree.resolve(typed), Ok(ids[0]), "{typed}");
    }
    assert_eq!(tree.thread(Some("01b2c")).unwrap().last(), Some(&ids[2]));
    // A start every id shares, or a cut form two ids fit: ambiguous, listed.
    let shared = tree.resolve("1f1ea8").unwrap_err();
    assert_eq!(shared.candidates, [ids[2], ids[1], ids[0]]);
    assert!(
        shared.to_string().contains("fits 3 checkpoints"),
        "{shared}"
    );
    assert_eq!(
        tree.resolve("1f1ea8…3e9d8").unwrap_err().candidates,
        [ids[1], ids[0]]
    );
    // Nothing fits: unknown, with no candidates.
    let unknown = tree.resolve("zz9").unwrap_err();
    assert!(unknown.candidates.is_empty());
    assert_eq!(unknown.to_string(), "no checkpoint zz9 in this thread");
    assert!(tree.resolve("").is_err());
}

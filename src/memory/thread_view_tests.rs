use super::*;

fn row(id: &str, parent: Option<&str>, answer: &str) -> StoredMessage {
    let at = chrono::DateTime::from_timestamp(1_750_000_000, 0)
        .unwrap()
        .naive_utc();
    StoredMessage::turn(id, "c", parent, "question", answer, at)
}

/// a → b, a → b2 (b regenerated), b → c: the newest row, c, continues from b.
fn regenerated() -> Vec<StoredMessage> {
    vec![
        row("a", None, "1"),
        row("b", Some("a"), "2"),
        row("b2", Some("a"), "2 again"),
        row("c", Some("b"), "3"),
    ]
}

fn ids(tree: &MessageTree, nodes: &[NodeIndex]) -> Vec<String> {
    nodes.iter().map(|&n| tree.id(n).to_owned()).collect()
}

#[test]
fn each_mode_marks_its_thread_from_the_newest_row() {
    let rows = regenerated();
    let tree = MessageTree::build(&rows);
    for mode in [ThreadMode::Dify, ThreadMode::Fixed, ThreadMode::Tree] {
        let nodes = thread_nodes(&rows, false, &tree, None, mode, 500);
        assert_eq!(ids(&tree, nodes.thread()), ["a", "b", "c"], "{mode:?}");
        assert_eq!(nodes.leaf, tree.find("c"));
        assert_eq!(nodes.comparison, ThreadComparison::Same);
    }
}

#[test]
fn a_leaf_on_another_branch_parts_the_tree_path_from_difys_thread() {
    let rows = regenerated();
    let tree = MessageTree::build(&rows);
    let view = thread_view(&rows, false, &tree, tree.find("b2"), ThreadMode::Tree, 500);
    assert_eq!(view.thread, ["a", "b2"]);
    assert_eq!(view.extracted, ["a", "b", "c"]);
    assert_ne!(view.comparison, ThreadComparison::Same);
}

#[test]
fn memory_skips_unanswered_rows_only_where_told() {
    let mut rows = regenerated();
    rows.push(row("d", Some("c"), ""));
    let ids = |rows: Vec<StoredMessage>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(memory_rows_newest_first(&rows, true, 2)), ["c", "b2"]);
    assert_eq!(ids(memory_rows_newest_first(&rows, false, 2)), ["d", "c"]);
    // Skipping the unanswered newest row is no divergence: the thread is the path's answered rows.
    let tree = MessageTree::build(&rows);
    let nodes = thread_nodes(&rows, true, &tree, None, ThreadMode::Dify, 500);
    assert_eq!(nodes.comparison, ThreadComparison::Same);
}

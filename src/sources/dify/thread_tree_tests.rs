use super::*;
use crate::sources::turn_trees::{RowWindows, TurnInfo};

fn time(seconds: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp(1_750_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

fn id(n: usize) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

/// A, then B answered twice (B regenerated as B'), the chain going on from B'.
fn regenerated(deleted: bool) -> TurnConversation {
    let row = |n: usize, parent: Option<usize>, query: &str, answer: &str| {
        StoredMessage::turn(
            id(n),
            "conversation",
            parent.map(id).as_deref(),
            query,
            answer,
            time(n as i64),
        )
    };
    let rows = vec![
        row(0, None, "first question", "first answer"),
        row(1, Some(0), "second question", "an answer"),
        row(2, Some(0), "second question", "a better answer"),
    ];
    let info = TurnInfo {
        id: "conversation".to_owned(),
        name: "regenerated".to_owned(),
        mode: "chat".to_owned(),
        app_id: "app".to_owned(),
        app_mode: Some("chat".to_owned()),
        is_deleted: deleted,
        app_window: None,
        answered_rows_only: false,
    };
    TurnConversation {
        info,
        rows,
        files: Vec::new(),
        windows: RowWindows {
            app_honoured: 500,
            app_set_aside: 500,
        },
    }
}

fn tree_of(conversation: &TurnConversation, mode: ThreadMode) -> SourceTree {
    let tree = conversation.tree();
    let view = thread_view(&conversation.rows, false, &tree, None, mode, 500);
    let request = TreeRequest {
        id: conversation.info.id.clone(),
        options: SourceOptions::default(),
        defaults: SourceOptions::default(),
        details: true,
    };
    source_tree(conversation, &tree, view, &request)
}

#[test]
fn every_row_is_a_node_under_its_parent_and_the_newest_thread_is_marked() {
    let conversation = regenerated(false);
    let tree = tree_of(&conversation, ThreadMode::Dify);
    let parents: Vec<Option<&str>> = tree.nodes.iter().map(|n| n.parent.as_deref()).collect();
    let first = id(0);
    assert_eq!(parents, [None, Some(first.as_str()), Some(first.as_str())]);
    assert_eq!(tree.thread, [id(0), id(2)]);
    let marked: Vec<bool> = tree.nodes.iter().map(|n| n.on_thread).collect();
    assert_eq!(marked, [true, false, true]);
    assert_eq!(tree.nodes[1].extra["sibling"], serde_json::json!([1, 2]));
    assert!(
        tree.nodes[2]
            .line
            .contains(" [2/2]  Q: second question  A: a better answer")
    );
    assert_eq!(tree.title.as_deref(), Some("regenerated"));
    assert_eq!(tree.footer, ["Dify's thread is the tree path"]);
    assert!(
        tree.extra.get("thread").is_none(),
        "the thread is a key of its own"
    );
    assert_eq!(tree.extra["conversation_mode"], "chat");
}

#[test]
fn a_deleted_conversation_says_so_first() {
    let tree = tree_of(&regenerated(true), ThreadMode::Tree);
    assert_eq!(tree.header[0], DELETED_NOTE);
    assert_eq!(tree.header[1], "conversation conversation \"regenerated\"");
    assert!(tree.header[2].starts_with("thread (true tree path, window 500): 2 messages"));
    assert_eq!(tree.extra["deleted"], true);
}

#[test]
fn a_line_says_what_stands_for_a_missing_answer_and_another_mode() {
    let mut row = StoredMessage::turn(id(7), "c", None, "q", "", time(0));
    assert!(line(&row, (1, 1), "chat").ends_with("A: (empty answer)"));
    row.status = PAUSED_STATUS.to_owned();
    assert!(
        line(&row, (1, 1), "chat").ends_with("A: (paused for human input, nothing answered yet)")
    );
    row.answer = "half".to_owned();
    assert!(line(&row, (1, 1), "chat").ends_with("A: half (paused for human input)"));
    row.status = "error".to_owned();
    row.app_mode = Some("agent-chat".to_owned());
    assert_eq!(
        line(&row, (1, 1), "chat"),
        "00000007  Q: q  A: (error)  [answered as agent-chat]"
    );
}

#[test]
fn an_unknown_mode_is_refused_naming_the_ones_there_are() {
    let options = SourceOptions::default().with("mode", Some("newest"));
    let error = mode(&options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "--mode takes dify, fixed or tree, not `newest`"
    );
    assert_eq!(mode(&SourceOptions::default()).unwrap(), ThreadMode::Dify);
}

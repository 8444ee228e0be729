//! The list's token column reads the history windows of a whole page at once: the batch must
//! read, for every conversation, exactly what the one-conversation path reads. On both backends.

#[macro_use]
mod common;

use common::fixtures::{app, conversation, id, message, message_file};
use memscope::inspect::turn_trees::turn_trees;
use memscope::sources::turn_trees::TurnWindow;
use memscope::store::Store;
use memscope::store::rows::{AppRow, Batch};

/// More conversations than one `IN` list holds (256), of different lengths, under apps with
/// different memory windows (10 rows, 3 rows, none: Dify's 500), some messages with files.
fn page_batch() -> Batch {
    let tens = app(10, "Ten", "chat");
    let threes = AppRow {
        memory_window: Some(3),
        ..app(11, "Three", "chat")
    };
    let unlimited = AppRow {
        memory_window: None,
        ..app(12, "Default", "chat")
    };
    let apps = [tens, threes, unlimited];
    let mut batch = Batch::default();
    let mut next_message = 100_000u128;
    for n in 0..300u128 {
        let owner = &apps[(n % 3) as usize];
        let chat = conversation(1_000 + n, owner, &format!("chat {n}"), n as i64);
        for turn in 0..(n % 17) {
            let row = message(next_message, &chat, (turn * 7 % 11) as i64);
            if turn % 5 == 1 {
                batch
                    .message_files
                    .push(message_file(next_message + 500_000, &row, None));
            }
            batch.messages.push(row);
            next_message += 1;
        }
        batch.conversations.push(chat);
    }
    batch.apps = apps.to_vec();
    batch
}

fn rows(window: &TurnWindow) -> Vec<&str> {
    window
        .rows_newest_first
        .iter()
        .map(|m| m.id.as_str())
        .collect()
}

db_tests! {
    async fn a_page_of_windows_reads_what_each_conversation_reads_alone(db) {
        let batch = page_batch();
        let store = Store::init(db.url()).await.expect("init");
        store.insert_batch(&batch).await.expect("insert");
        let mut ids: Vec<String> = batch.conversations.iter().map(|c| c.id.clone()).collect();
        ids.reverse();
        // A conversation that does not exist is left out, like a malformed id.
        ids.insert(5, id(999_999));
        ids.insert(9, "not-a-uuid".to_owned());
        let turns = turn_trees(&store).expect("Dify's tables");
        for limit in [None, Some(2)] {
            let batched = turns.windows(&store, &ids, limit).await.expect("batch");
            assert_eq!(batched.len(), batch.conversations.len());
            let expected_order: Vec<&str> = ids
                .iter()
                .map(String::as_str)
                .filter(|id| batch.conversations.iter().any(|c| c.id == *id))
                .collect();
            let order: Vec<&str> = batched.iter().map(|w| w.info.id.as_str()).collect();
            assert_eq!(order, expected_order, "in the order asked");
            for window in &batched {
                let alone = turns.window(&store, &window.info.id, limit).await.expect("one");
                assert_eq!(window.info, alone.info);
                assert_eq!(window.window, alone.window);
                assert_eq!(rows(window), rows(&alone), "{}", window.info.name);
                assert_eq!(window.rows_newest_first, alone.rows_newest_first);
                assert_eq!(window.files, alone.files, "{}", window.info.name);
            }
            let with_files = batched.iter().filter(|w| !w.files.is_empty()).count();
            assert!(with_files > 10, "the fixture has files in the windows: {with_files}");
            let cut = batched.iter().filter(|w| w.rows_newest_first.len() == w.window).count();
            assert!(cut > 10, "windows cut conversations short: {cut}");
        }
        assert!(turns.windows(&store, &[], None).await.expect("empty").is_empty());
        store.close().await;
    }
}

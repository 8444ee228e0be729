//! `doctor` reports rows it cannot read (text that is not UTF-8, a value of the wrong type,
//! parents that point nowhere) as findings with their ids, and scans the rest of the database.

mod cli_support;

#[macro_use]
mod common;

use std::path::Path;

use cli_support::memscope_on as memscope;
use memscope::demo::{Demo, DemoOptions, Scale};
use memscope::inspect::doctor::DoctorSettings;
use memscope::memory::model::StoredMessage;
use memscope::memory::tokens::{CountCache, CounterKind, TokenCounter};
use memscope::sources::dify::doctor::check_conversation;
use memscope::sources::doctor::DEFAULT_KEEP_LAST;
use memscope::sources::doctor::SourceFinding;
use memscope::store::{Backend, BadRow, Store};
use serde_json::Value;

fn doctor(home: &Path, db: &str) -> Value {
    let output = memscope(home, db)
        .args(["doctor", "--json", "--max-per-kind", "100000"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "doctor reports findings and exits 1: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn findings<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

/// The ids of `n` messages of the busiest conversation, oldest first.
async fn message_ids(db: &common::TestDb, n: usize) -> Vec<String> {
    let rows = db
        .fetch(
            "SELECT m.id::text FROM messages m WHERE m.conversation_id = \
             (SELECT conversation_id FROM messages GROUP BY conversation_id \
              ORDER BY COUNT(*) DESC, conversation_id LIMIT 1) \
             ORDER BY m.created_at, m.id",
            &[common::Kind::Text],
        )
        .await;
    rows.into_iter()
        .take(n)
        .map(|row| match &row[0] {
            common::Value::Text(id) => id.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

db_tests! {
    async fn bad_rows_are_findings_and_the_scan_goes_on(db) {
        let home = tempfile::tempdir().unwrap();
        let url = db.url().to_owned();
        let demo = memscope(home.path(), &url).arg("demo").output().unwrap();
        assert!(demo.status.success(), "{demo:?}");
        let before = doctor(home.path(), &url);

        let ids = message_ids(&db, 3).await;
        let (middle, last) = (&ids[1], &ids[2]);
        let mut unreadable = Vec::new();
        match db.backend {
            Backend::Sqlite => {
                // Bytes that are not UTF-8 in a TEXT column, and a BLOB where text belongs.
                db.execute(&format!(
                    "UPDATE messages SET query = CAST(X'80ff41' AS TEXT) WHERE id = '{middle}'"
                ))
                .await;
                db.execute(&format!(
                    "UPDATE messages SET answer = X'c328' WHERE id = '{last}'"
                ))
                .await;
                unreadable.extend([middle.clone(), last.clone()]);
            }
            // PostgreSQL refuses invalid UTF-8 on write; a parent that points nowhere is what a
            // PostgreSQL database can hold. (These tests build memscope's own schema, which
            // MySQL never holds.)
            Backend::Postgres | Backend::Mysql => {
                db.execute(&format!(
                    "UPDATE messages SET parent_message_id = '7d9b0c2e-0000-4000-8000-00000000dead' \
                     WHERE id = '{middle}'"
                ))
                .await;
            }
        }

        let after = doctor(home.path(), &url);
        let rows = findings(&after, "unreadable_row");
        let ids: Vec<&str> = rows.iter().map(|f| f["extra"]["id"].as_str().unwrap()).collect();
        assert_eq!(ids, unreadable.iter().map(String::as_str).collect::<Vec<_>>(), "{rows:#?}");
        for row in &rows {
            assert_eq!(row["extra"]["table"], "messages");
        }
        // Every conversation is still scanned, only the bad rows are left out.
        assert_eq!(after["conversations"], before["conversations"]);
        assert_eq!(
            after["messages"].as_u64().unwrap() + unreadable.len() as u64,
            before["messages"].as_u64().unwrap()
        );
        for kind in ["thread_divergence", "over_budget", "dangling_workflow_run", "unreadable_json"] {
            assert!(!findings(&after, kind).is_empty(), "{kind} still found after the bad rows");
        }
        if db.backend == Backend::Postgres {
            let dangling = findings(&after, "tree_anomaly");
            assert!(
                dangling.iter().any(|f| f.to_string().contains(middle.as_str())),
                "the dangling parent names its row: {dangling:#?}"
            );
        }

        // Text mode names the row too, and does not abort.
        let text = memscope(home.path(), &url).arg("doctor").output().unwrap();
        assert_eq!(text.status.code(), Some(1));
        let text = String::from_utf8_lossy(&text.stdout);
        for id in &unreadable {
            assert!(text.contains(&format!("messages row {id} cannot be read")), "{text}");
        }
    }

    async fn the_fast_scan_reads_every_row_as_sqlx_reads_it(db) {
        let storage = tempfile::tempdir().unwrap();
        let store = Store::init(db.url()).await.unwrap();
        let options = DemoOptions {
            scale: Scale::Small,
            seed: 42,
            storage_root: storage.path().to_path_buf(),
            kb_root: storage.path().join("kb"),
        };
        for batch in Demo::new(&options) {
            store.insert_batch(&batch.unwrap()).await.unwrap();
        }
        let ids = message_ids(&db, 12).await;
        if db.backend == Backend::Sqlite {
            // Every value the fast path leaves to sqlx: other timestamp forms (sqlx reads them),
            // and values sqlx cannot read (unreadable rows).
            let updates = [
                "created_at = '2026-01-05T10:00:00'",
                "created_at = '2026-01-05 10:01:00Z'",
                "created_at = '2026-01-05 10:02'",
                "created_at = 1767607500",
                "created_at = '2016-12-31 23:59:60'",
                "created_at = 'not a time'",
                "query = CAST(X'80ff41' AS TEXT)",
                "answer = X'c328'",
                "message_tokens = 'twelve'",
                "status = X'6e6f726d616c'",
                "error = X'6f6b'",
            ];
            for (update, id) in updates.iter().zip(&ids) {
                db.execute(&format!("UPDATE messages SET {update} WHERE id = '{id}'"))
                    .await;
            }
        } else {
            db.execute(&format!(
                "UPDATE messages SET parent_message_id = '7d9b0c2e-0000-4000-8000-00000000dead' \
                 WHERE id = '{}'",
                ids[1]
            ))
            .await;
        }

        let fast = scan(&store, false).await;
        let reference = scan(&store, true).await;
        assert_eq!(fast.1, reference.1, "unreadable rows");
        assert_eq!(fast.0.len(), reference.0.len(), "conversations");
        for (a, b) in fast.0.iter().zip(&reference.0) {
            assert_eq!(a, b);
        }
        if db.backend == Backend::Sqlite {
            let unreadable: Vec<&str> = fast.1.iter().map(|bad| bad.id.as_str()).collect();
            for id in &ids[5..7] {
                assert!(unreadable.contains(&id.as_str()), "{id} in {unreadable:?}");
            }
            let read: Vec<&StoredMessage> = fast.0.iter().flatten().collect();
            let other_form = read.iter().find(|m| m.id == ids[0]).expect("read");
            assert_eq!(other_form.created_at.to_string(), "2026-01-05 10:00:00");
        }
        let total: usize = fast.0.iter().map(Vec::len).sum();
        let counted = db.fetch("SELECT COUNT(*) FROM messages", &[common::Kind::Int]).await;
        assert_eq!(common::Value::Int((total + fast.1.len()) as i64), counted[0][0]);

        // The findings of every kind the scan feeds are the same too.
        let settings = DoctorSettings {
            counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
            budget: 2_000,
            storage: None,
            keep_last: DEFAULT_KEEP_LAST,
            options: Default::default(),
        };
        let findings = |conversations: &[Vec<StoredMessage>]| {
            let mut cache = CountCache::new(4_096);
            conversations
                .iter()
                .flat_map(|rows| check_conversation(rows, true, &settings, &mut cache))
                .map(|finding| finding.describe())
                .collect::<Vec<_>>()
        };
        let found = findings(&fast.0);
        assert!(found.len() > 3, "{found:#?}");
        assert_eq!(found, findings(&reference.0));
    }
}

/// Every conversation and unreadable row of a doctor scan, through the backend's scan or through
/// sqlx's row stream.
async fn scan(store: &Store, via_sqlx: bool) -> (Vec<Vec<StoredMessage>>, Vec<BadRow>) {
    let (mut conversations, mut bad) = (Vec::new(), Vec::new());
    let visit = |rows| conversations.push(rows);
    let bad_row = |row| bad.push(row);
    if via_sqlx {
        store.for_each_conversation_via_sqlx(visit, bad_row).await
    } else {
        store.for_each_conversation(visit, bad_row).await
    }
    .unwrap();
    (conversations, bad)
}

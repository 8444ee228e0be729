//! `doctor` reports rows it cannot read (text that is not UTF-8, a value of the wrong type,
//! parents that point nowhere) as findings with their ids, and scans the rest of the database.

mod cli_support;

#[macro_use]
mod common;

use std::path::Path;

use cli_support::memscope_on as memscope;
use memscope::store::Backend;
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
            // PostgreSQL database can hold.
            Backend::Postgres => {
                db.execute(&format!(
                    "UPDATE messages SET parent_message_id = '7d9b0c2e-0000-4000-8000-00000000dead' \
                     WHERE id = '{middle}'"
                ))
                .await;
            }
        }

        let after = doctor(home.path(), &url);
        let rows = findings(&after, "unreadable_row");
        let ids: Vec<&str> = rows.iter().map(|f| f["id"].as_str().unwrap()).collect();
        assert_eq!(ids, unreadable.iter().map(String::as_str).collect::<Vec<_>>(), "{rows:#?}");
        for row in &rows {
            assert_eq!(row["table"], "messages");
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
}

//! `doctor` on MySQL sorts the messages in parts of their primary key at once and merges the
//! parts: with Dify's random uuids every conversation has rows in every part. The report must
//! be PostgreSQL's on the same rows, and a row that does not read must not stop its part.

#[macro_use]
mod common;
mod cli_support;

use cli_support::{memscope_on, run};
use common::dify::{Era, Message, app, build, conversation, uid};
use serde_json::Value;

const APP: u64 = 10;
const CONVERSATIONS: std::ops::Range<u64> = 20..32;
const TURNS: u64 = 8;

/// A version 4 uuid for `n` whose first digits spread over the whole key space, as Dify's
/// random ids do, so that the scan cuts its parts between them.
fn spread(n: u64) -> String {
    let h = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        n & 0xfff,
        n
    )
}

fn message_id(conversation: u64, turn: u64) -> u64 {
    1_000 + conversation * 100 + turn
}

/// Twelve conversations of eight turns, one a minute: the fourth turn of every third
/// conversation regenerated (a sibling of the third), and one conversation whose last turn
/// names a parent that is not there.
fn rows(era: Era) -> String {
    let times: Vec<String> = (0..=TURNS)
        .map(|minute| format!("2024-09-20 10:{minute:02}:00"))
        .collect();
    let mut rows = vec![app(APP, "Support", "chat")];
    let mut ids = Vec::new();
    for c in CONVERSATIONS {
        rows.push(conversation(
            era,
            c,
            APP,
            &format!("chat {c}"),
            "chat",
            false,
        ));
        ids.push(c);
        for turn in 0..TURNS {
            let id = message_id(c, turn);
            let parent = match turn {
                0 => None,
                3 if c % 3 == 0 => Some(message_id(c, 1)),
                _ if c == 25 && turn == TURNS - 1 => Some(9_999),
                _ => Some(message_id(c, turn - 1)),
            };
            let mut message = Message::turn(id, c, APP, parent, &times[turn as usize]);
            let text = format!("question {turn} of chat {c}");
            message.query = &text;
            rows.push(message.insert(era));
            ids.push(id);
        }
    }
    ids.push(9_999);
    let mut sql = rows.concat();
    for id in ids {
        sql = sql.replace(&uid(id), &spread(id));
    }
    sql
}

fn doctor(home: &std::path::Path, url: &str) -> Value {
    let (stdout, _) = run(memscope_on(home, url).args(["doctor", "--json"]), 1);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"))
}

fn findings<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

mod doctor_in_parts_equals_postgres {
    use super::*;

    #[tokio::test]
    async fn mysql() {
        let test = module_path!();
        common::mysql::run_mysql(test, move |mysql| async move {
            let compared = common::in_postgres_schema(test, move |postgres| async move {
                let era = Era::Offload;
                for db in [&postgres, &mysql] {
                    build(db, era, &[rows(era)]).await;
                }
                let home = tempfile::tempdir().unwrap();
                let on_mysql = doctor(home.path(), mysql.url());
                assert_eq!(on_mysql, doctor(home.path(), postgres.url()));
                let conversations = CONVERSATIONS.count();
                assert_eq!(on_mysql["conversations"], conversations, "{on_mysql}");
                assert_eq!(on_mysql["messages"], conversations as u64 * TURNS);
                let broken = findings(&on_mysql, "tree_anomaly");
                assert!(
                    broken.iter().any(|f| f["conversation"] == spread(25)),
                    "{on_mysql}"
                );
            })
            .await;
            assert!(
                compared,
                "set MEMSCOPE_TEST_PG_URL to compare with PostgreSQL"
            );
        })
        .await;
    }
}

mod an_unreadable_row_in_a_part {
    use super::*;

    /// MariaDB keeps a zero date where the session's `sql_mode` lets it in; it is no instant,
    /// so the row cannot be read. It is reported by id and every other row is still checked.
    #[tokio::test]
    async fn mysql() {
        common::mysql::run_mysql(module_path!(), |mysql| async move {
            let era = Era::Offload;
            build(&mysql, era, &[rows(era)]).await;
            let zero_dated = spread(message_id(27, 5));
            mysql
                .execute(&format!(
                    "SET SESSION sql_mode = ''; \
                     UPDATE messages SET created_at = '0000-00-00 00:00:00' WHERE id = '{zero_dated}';"
                ))
                .await;
            let home = tempfile::tempdir().unwrap();
            let report = doctor(home.path(), mysql.url());
            let unreadable = findings(&report, "unreadable_row");
            assert_eq!(unreadable.len(), 1, "{report}");
            assert_eq!(unreadable[0]["extra"]["id"], zero_dated);
            let conversations = CONVERSATIONS.count();
            assert_eq!(report["conversations"], conversations, "{report}");
            assert_eq!(report["messages"], conversations as u64 * TURNS - 1);
        })
        .await;
    }
}

use super::*;
use crate::demo::tests::{small, thread};
use crate::memory::model::UUID_NIL;

#[test]
fn readme_rows_produce_the_documented_parent_links_and_thread() {
    let (_, rows) = small().conversation("README regeneration example");
    let [r1, r2, r3, r4] = rows.as_slice() else {
        panic!("four rows expected, got {}", rows.len());
    };
    assert_eq!(r1.parent_message_id, None);
    assert_eq!(r2.parent_message_id.as_deref(), Some(r1.id.as_str()));
    assert_eq!(r3.parent_message_id, None);
    assert_eq!(r3.query, r1.query, "a regeneration re-asks the same query");
    assert_eq!(r4.parent_message_id.as_deref(), Some(r3.id.as_str()));
    let turns: Vec<&str> = thread(&rows)
        .iter()
        .flat_map(|row| [row.query.as_str(), row.answer.as_str()])
        .collect();
    assert_eq!(
        turns,
        [
            r3.query.as_str(),
            r3.answer.as_str(),
            r4.query.as_str(),
            r4.answer.as_str()
        ]
    );
    assert!(r3.answer.contains("Marginalia") && r4.answer.contains("Marginalia"));
}

#[test]
fn deep_tree_has_many_regenerations_and_one_root() {
    let (_, rows) = small().conversation("Deep regeneration tree");
    assert_eq!(rows.len(), DEEP_TREE_ROWS);
    assert_eq!(rows.iter().filter(|row| row.parent().is_none()).count(), 1);
    let mut children: std::collections::HashMap<&str, usize> = Default::default();
    for row in &rows {
        if let Some(parent) = row.parent() {
            *children.entry(parent).or_default() += 1;
        }
    }
    let branching = children.values().filter(|&&count| count > 1).count();
    assert!(branching >= 10, "only {branching} rows were regenerated");
    let thread = thread(&rows);
    assert!(thread.len() >= 15, "thread of {} rows", thread.len());
    assert!(thread.len() < rows.len());
}

#[test]
fn legacy_and_service_api_rows_are_nil_chains() {
    let demo = small();
    for (title, invoke_from) in [
        ("Legacy conversation", "web-app"),
        ("Service-API conversation", "service-api"),
    ] {
        let (conversation, rows) = demo.conversation(title);
        assert!(
            rows.iter()
                .all(|row| row.parent_message_id.as_deref() == Some(UUID_NIL))
        );
        assert!(
            rows.iter()
                .all(|row| row.invoke_from.as_deref() == Some(invoke_from))
        );
        assert_eq!(thread(&rows).len(), rows.len(), "{title}");
        assert_eq!(conversation.dialogue_count, rows.len() as i64);
    }
    let (legacy, _) = demo.conversation("Legacy conversation");
    let dify_0_9 = chrono::NaiveDate::from_ymd_opt(2024, 9, 1)
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .expect("valid date");
    assert!(legacy.created_at < dify_0_9);
}

#[test]
fn issue_39031_stops_dify_early() {
    let (_, rows) = small().conversation("Issue #39031");
    let [a, b, x, c] = rows.as_slice() else {
        panic!("four rows expected");
    };
    assert_eq!(x.parent_message_id, None);
    assert_eq!(c.parent_message_id.as_deref(), Some(b.id.as_str()));
    assert_eq!(b.parent_message_id.as_deref(), Some(a.id.as_str()));
    let ids: Vec<&str> = thread(&rows).iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, [x.id.as_str(), c.id.as_str()]);
}

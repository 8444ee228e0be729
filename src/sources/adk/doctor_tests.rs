use serde_json::json;

use super::{FindingKind, GROWTH_CHANGES, SessionScan, findings, growing_state, unanswered_calls};
use crate::sources::adk::event::Event;

fn event(index: usize, data: serde_json::Value) -> Event {
    Event::decode(index, &data.to_string(), 0.0).unwrap()
}

fn call(index: usize, id: &str) -> Event {
    event(
        index,
        json!({"id": format!("e{index}"), "invocation_id": "i1", "author": "agent",
            "content": {"role": "model", "parts": [{"function_call": {"id": id, "name": "f", "args": {}}}]}}),
    )
}

fn response(index: usize, id: &str) -> Event {
    event(
        index,
        json!({"id": format!("e{index}"), "invocation_id": "i1", "author": "agent",
            "content": {"role": "user", "parts": [{"function_response": {"id": id, "name": "f", "response": {}}}]}}),
    )
}

fn delta(index: usize, key: &str, value: serde_json::Value) -> Event {
    event(
        index,
        json!({"id": format!("e{index}"), "invocation_id": "i1", "author": "agent",
            "actions": {"state_delta": {key: value}}}),
    )
}

fn kinds(scan: &SessionScan) -> Vec<FindingKind> {
    findings(scan).iter().map(|f| f.kind).collect()
}

#[test]
fn a_healthy_session_has_nothing_to_report() {
    let scan = SessionScan {
        session: "s".to_owned(),
        events: vec![call(0, "c1"), response(1, "c1")],
        ..SessionScan::default()
    };
    assert!(findings(&scan).is_empty());
}

#[test]
fn a_call_without_a_response_is_reported_unless_it_is_pending() {
    let events = vec![call(0, "c1"), response(1, "c1"), call(2, "c2")];
    assert_eq!(unanswered_calls(&events), ["c2"]);
    let mut pending = call(2, "c2");
    pending.long_running_tool_ids = vec!["c2".to_owned()];
    assert!(unanswered_calls(&[call(0, "c1"), response(1, "c1"), pending]).is_empty());
    let scan = SessionScan {
        session: "s".to_owned(),
        events,
        ..SessionScan::default()
    };
    assert_eq!(kinds(&scan), [FindingKind::CallWithoutResponse]);
    assert_eq!(findings(&scan)[0].extra, json!({"call_ids": ["c2"]}));
}

#[test]
fn state_that_grows_at_every_change_is_reported_and_state_that_shrinks_is_not() {
    let growing: Vec<Event> = (0..GROWTH_CHANGES)
        .map(|n| delta(n, "notes", json!("x".repeat(n + 1))))
        .collect();
    assert_eq!(
        growing_state(&growing),
        [("notes".to_owned(), GROWTH_CHANGES, 3, 2 + GROWTH_CHANGES)]
    );
    let mut shrinking = growing.clone();
    shrinking.push(delta(GROWTH_CHANGES, "notes", json!("")));
    assert!(growing_state(&shrinking).is_empty());
    let few: Vec<Event> = growing[..GROWTH_CHANGES - 1].to_vec();
    assert!(growing_state(&few).is_empty());
}

#[test]
fn unreadable_events_pickles_and_an_overfull_session_are_reported() {
    let scan = SessionScan {
        session: "s".to_owned(),
        scope: None,
        events: Vec::new(),
        unreadable: vec!["bad".to_owned()],
        pickled: 3,
        sent_tokens: Some((200_000, 128_000)),
    };
    assert_eq!(
        kinds(&scan),
        [
            FindingKind::UnreadableEvents,
            FindingKind::OverContextWindow,
            FindingKind::PickledActions
        ]
    );
}

#[test]
fn a_finding_names_the_app_and_user_and_leads_to_that_session() {
    use crate::sources::doctor::{FindingTarget, SourceFinding};
    let scan = SessionScan {
        session: "shared".to_owned(),
        scope: Some("billing/alice".to_owned()),
        events: vec![call(0, "c9")],
        ..SessionScan::default()
    };
    let found = findings(&scan);
    assert_eq!(found[0].extra["app"], "billing");
    assert_eq!(found[0].extra["user"], "alice");
    match found[0].leads_to() {
        FindingTarget::Conversation(key) => {
            assert_eq!(key.id, "shared");
            assert_eq!(key.scope.as_deref(), Some("billing/alice"));
        }
        other => panic!("{other:?}"),
    }
}

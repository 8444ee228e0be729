use super::*;
use crate::memory::tokens::CounterKind;
use chrono::{TimeZone, Utc};

const FLOW: &str = "11111111-1111-1111-1111-111111111111";
const OWNER: &str = "22222222-2222-2222-2222-222222222222";

fn conversation(session: &str, flow: Option<&str>, messages: i64) -> LangflowConversation {
    LangflowConversation {
        id: session.into(),
        flow: flow.map(str::to_owned),
        flow_id: flow.map(|_| FLOW.to_owned()),
        messages,
        last_activity: Utc.timestamp_opt(0, 0).unwrap(),
        owner: Some(OWNER.into()),
        owner_name: None,
    }
}

fn message(n: u64) -> LangflowMessage {
    LangflowMessage {
        id: format!("m{n}"),
        timestamp: Utc.timestamp_opt(n as i64, 0).unwrap(),
        flow_id: Some(FLOW.into()),
        session_id: "s".into(),
        context_id: None,
        owner: Some(OWNER.into()),
        run_id: None,
        sender: "User".into(),
        sender_name: "User".into(),
        text: format!("text {n}"),
        files: Vec::new(),
        error: false,
        category: "message".into(),
        stored_order: n,
    }
}

fn check(conversation: &LangflowConversation, rows: &[LangflowMessage]) -> Vec<LangflowFinding> {
    let counter = TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o");
    check_session(
        conversation,
        rows,
        &counter,
        1_000_000,
        &mut CountCache::default(),
    )
}

#[test]
fn a_short_clean_session_has_no_findings() {
    let rows: Vec<_> = (0..100).map(message).collect();
    assert!(check(&conversation("s", Some("Chat"), 100), &rows).is_empty());
}

#[test]
fn history_past_the_window_counts_what_is_forgotten() {
    let rows: Vec<_> = (0..130).map(message).collect();
    let findings = check(&conversation("s", Some("Chat"), 130), &rows);
    assert_eq!(
        findings,
        vec![LangflowFinding::LongerThanWindow {
            session_id: "s".into(),
            flow: "Chat".into(),
            flow_id: Some(FLOW.into()),
            window: 100,
            forgotten: 30,
        }]
    );
}

#[test]
fn error_text_is_found_only_without_the_error_flag() {
    let mut rows: Vec<_> = (0..4).map(message).collect();
    rows[1].category = "error".into();
    rows[2].category = "error".into();
    rows[2].error = true;
    let findings = check(&conversation("s", Some("Chat"), 4), &rows);
    assert_eq!(
        findings,
        vec![LangflowFinding::ErrorTextFed {
            session_id: "s".into(),
            flow: "Chat".into(),
            flow_id: Some(FLOW.into()),
            message_ids: vec!["m1".into()],
        }]
    );
}

#[test]
fn messages_without_a_flow_or_an_owner_are_unreachable() {
    let mut rows: Vec<_> = (0..3).map(message).collect();
    rows[0].owner = None;
    let findings = check(&conversation("s", Some("Chat"), 3), &rows);
    assert_eq!(
        findings,
        vec![LangflowFinding::Unreachable {
            session_id: "s".into(),
            flow: "Chat".into(),
            flow_id: Some(FLOW.into()),
            without_flow: 0,
            without_owner: 1,
        }]
    );
    let flowless: Vec<_> = (0..2)
        .map(|n| LangflowMessage {
            flow_id: None,
            ..message(n)
        })
        .collect();
    let findings = check(&conversation("s", None, 2), &flowless);
    assert!(
        findings.contains(&LangflowFinding::Unreachable {
            session_id: "s".into(),
            flow: "no flow".into(),
            flow_id: None,
            without_flow: 2,
            without_owner: 0,
        }),
        "{findings:?}"
    );
}

#[test]
fn a_fed_history_over_the_budget_is_found() {
    let rows: Vec<_> = (0..10).map(message).collect();
    let counter = TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o");
    let findings = check_session(
        &conversation("s", Some("Chat"), 10),
        &rows,
        &counter,
        5,
        &mut CountCache::default(),
    );
    assert!(
        matches!(
            findings.as_slice(),
            [LangflowFinding::OverBudget { messages: 10, budget: 5, tokens, .. }] if *tokens > 5
        ),
        "{findings:?}"
    );
}

#[test]
fn a_session_id_of_several_flows_is_one_finding_naming_them() {
    let mut other = conversation("New Session 0", Some("Sales Chat"), 2);
    other.flow_id = Some("33333333-3333-3333-3333-333333333333".into());
    let conversations = vec![
        conversation("New Session 0", Some("Support Chat"), 5),
        other,
        conversation("alone", Some("Support Chat"), 1),
    ];
    assert_eq!(
        shared_sessions(&conversations),
        vec![LangflowFinding::SharedSession {
            session_id: "New Session 0".into(),
            flows: vec!["Sales Chat".into(), "Support Chat".into()],
        }]
    );
}

#[test]
fn findings_read_as_one_line_each() {
    let finding = LangflowFinding::LongerThanWindow {
        session_id: "long".into(),
        flow: "Sales Chat".into(),
        flow_id: Some(FLOW.into()),
        window: 100,
        forgotten: 30,
    };
    assert_eq!(finding.kind(), "longer_than_window");
    assert_eq!(
        finding.describe(),
        "session \"long\" of Sales Chat: the Agent's memory feeds the newest 100 messages; 30 \
         older ones are not fed"
    );
}

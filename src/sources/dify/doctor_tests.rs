use super::*;
use crate::memory::tokens::{CounterKind, TokenCounter};
use crate::sources::doctor::DEFAULT_KEEP_LAST;
use crate::sources::doctor::SourceFinding;
use chrono::NaiveDate;

fn row(id: &str, parent: Option<&str>, second: u32) -> StoredMessage {
    let at = NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, second);
    StoredMessage::turn(
        id,
        "c",
        parent,
        format!("question {id}"),
        format!("answer {id}"),
        at.unwrap(),
    )
}

fn settings(budget: i64) -> DoctorSettings {
    DoctorSettings {
        counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
        budget,
        storage: None,
        keep_last: DEFAULT_KEEP_LAST,
        options: Default::default(),
    }
}

#[test]
fn a_healthy_conversation_has_no_findings() {
    let rows = [
        row("a", None, 1),
        row("b", Some("a"), 2),
        row("c", Some("b"), 3),
    ];
    assert!(
        check_conversation(&rows, false, &settings(2000), &mut CountCache::default()).is_empty()
    );
}

#[test]
fn issue_39031_is_found() {
    // Oldest first: A, B←A, X (an unrelated regeneration root), C←B. Newest first the walk
    // meets X between C and B and stops there.
    let rows = [
        row("a", None, 1),
        row("b", Some("a"), 2),
        row("x", None, 3),
        row("c", Some("b"), 4),
    ];
    let findings = check_conversation(&rows, false, &settings(2000), &mut CountCache::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(matches!(
        &findings[0],
        DifyFinding::ThreadDivergence {
            comparison: ThreadComparison::StoppedAtUnrelatedRoot { .. },
            ..
        }
    ));
    assert!(findings[0].describe().contains("unrelated root"));
}

#[test]
fn cycles_and_budgets_are_found() {
    let rows = [row("a", Some("b"), 1), row("b", Some("a"), 2)];
    let findings = check_conversation(&rows, false, &settings(5), &mut CountCache::default());
    let kinds: Vec<_> = findings.iter().map(SourceFinding::kind).collect();
    assert!(kinds.contains(&"tree_anomaly"), "{kinds:?}");
    assert!(kinds.contains(&"over_budget"), "{kinds:?}");
}

#[test]
fn empty_conversations_have_nothing_to_check() {
    assert!(check_conversation(&[], false, &settings(0), &mut CountCache::default()).is_empty());
}

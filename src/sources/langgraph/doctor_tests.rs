use std::collections::BTreeMap;

use super::*;
use crate::sources::doctor::DEFAULT_KEEP_LAST;
use crate::sources::langgraph::CheckpointError;
use crate::sources::langgraph::decode::DecodeError;
use crate::sources::langgraph::decode::footprint::{Freed, ValueTypes};

fn footprint(root_checkpoints: usize) -> ThreadFootprint {
    ThreadFootprint {
        checkpoints: root_checkpoints + 3,
        root_checkpoints,
        writes: 40,
        blobs: 0,
        bytes: 170_000_000,
        keep_last: DEFAULT_KEEP_LAST,
        freed: Freed {
            checkpoints: root_checkpoints.saturating_sub(DEFAULT_KEEP_LAST),
            writes: 30,
            blobs: 0,
            bytes: 168_000_000,
        },
        orphan_writes: Vec::new(),
        unreferenced_blobs: Freed::default(),
        anomalies: Vec::new(),
        value_types: ValueTypes::default(),
    }
}

fn latest(messages: usize) -> Result<LatestState, LangGraphError> {
    Ok(LatestState {
        checkpoint_id: "c9".into(),
        messages,
        tokens: messages as u64 * 10,
        problems: Vec::new(),
    })
}

#[test]
fn a_long_thread_says_how_often_it_stores_its_messages_and_what_a_prune_frees() {
    let findings = check_thread("t1", &footprint(1_300), Some(&latest(900)), false, 10_000);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind(), "thread_growth");
    assert_eq!(
        findings[0].describe(),
        "thread t1 stores its 900 messages 1,300 times: 170 MB in 1,303 checkpoints; keeping \
         the newest 10 frees 1,290 checkpoints, 168 MB"
    );
    // A short thread costs nothing worth a finding.
    assert!(
        check_thread(
            "t2",
            &footprint(DEFAULT_KEEP_LAST),
            Some(&latest(9)),
            false,
            2_000
        )
        .is_empty()
    );
    // Over the budget, the latest state is a finding of its own.
    let over = check_thread(
        "t2",
        &footprint(DEFAULT_KEEP_LAST),
        Some(&latest(900)),
        false,
        2_000,
    );
    assert_eq!(over.len(), 1);
    assert_eq!(
        over[0].describe(),
        "thread t2: its latest state's 900 messages are 9,000 tokens, over the budget of 2,000; \
         a model call sends them all unless a node trims them"
    );
}

#[test]
fn rows_that_cannot_be_read_are_findings_and_a_missing_key_is_said_once() {
    let mut rows = footprint(2);
    rows.value_types = ValueTypes {
        pickle: 2,
        encrypted: 5,
        unknown: BTreeMap::from([("yaml".to_owned(), 1)]),
    };
    rows.anomalies = vec!["checkpoint c2 names parent c1, which is not in the database".into()];
    let locked: Result<LatestState, LangGraphError> =
        Err(LangGraphError::Checkpoint(CheckpointError::Decode {
            id: "c2".into(),
            error: DecodeError::MissingKey {
                type_name: "msgpack+aes".into(),
            },
        }));
    let findings = check_thread("secret", &rows, Some(&locked), false, 2_000);
    let kinds: Vec<&str> = findings.iter().map(LangGraphFinding::kind).collect();
    assert_eq!(
        kinds,
        [
            "missing_parent",
            "unreadable_value",
            "unreadable_value",
            "encrypted_without_key"
        ]
    );
    let text: Vec<String> = findings.iter().map(LangGraphFinding::describe).collect();
    assert!(text[1].contains("2 pickle values"), "{text:?}");
    assert!(text[2].contains("`yaml`"), "{text:?}");
    assert!(text[3].contains("5 encrypted values") && text[3].contains(KEY_VARIABLE));

    // With a key that does not open them, the latest state says so.
    let wrong: Result<LatestState, LangGraphError> =
        Err(LangGraphError::Checkpoint(CheckpointError::Decode {
            id: "c2".into(),
            error: DecodeError::WrongKey,
        }));
    let findings = check_thread("secret", &rows, Some(&wrong), true, 2_000);
    assert!(
        findings
            .iter()
            .any(|f| f.describe().contains("the latest state cannot be read")),
        "{findings:?}"
    );
    assert!(findings.iter().all(|f| f.kind() != "encrypted_without_key"));
}

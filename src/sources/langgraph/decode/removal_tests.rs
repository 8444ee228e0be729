use serde_json::json;

use super::*;
use crate::sources::langgraph::decode::value::{Object, Rebuild};

fn message(id: &str) -> Value {
    Value::Object(Box::new(Object {
        rebuild: Rebuild::PydanticV2,
        module: "langchain_core.messages.human".to_owned(),
        class: "HumanMessage".to_owned(),
        data: Value::Map(vec![
            (
                Value::Str("content".into()),
                Value::Str(format!("text {id}")),
            ),
            (Value::Str("id".into()), Value::Str(id.to_owned())),
        ]),
        method: Some("model_validate_json".to_owned()),
    }))
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::Str(k.to_owned()), v))
            .collect(),
    )
}

fn version(n: u64) -> Value {
    Value::Str(format!("{n:032}.0.25"))
}

const LATEST: &str = "1f1e869f-baf3-6969-8008-425fa0f6f10d";

fn clock() -> Clock {
    Clock {
        unix_nanos: 1_790_000_000_000_000_000,
        node: 0x8da7_166f_f476,
        version_hash: 0.5,
    }
}

#[test]
fn the_update_checkpoint_of_a_removal() {
    let messages = vec![message("a"), message("b"), message("c")];
    let body = map(vec![
        ("v", Value::Int(4)),
        ("ts", Value::Str("2026-11-25T00:48:51.697078+00:00".into())),
        ("id", Value::Str(LATEST.into())),
        (
            "channel_values",
            map(vec![("messages", Value::List(messages.clone()))]),
        ),
        (
            "channel_versions",
            map(vec![
                ("__start__", version(7)),
                ("messages", version(10)),
                ("branch:to:agent", version(10)),
            ]),
        ),
        (
            "versions_seen",
            map(vec![("agent", map(vec![("branch:to:agent", version(9))]))]),
        ),
        (
            "updated_channels",
            Value::List(vec![Value::Str("messages".into())]),
        ),
    ]);
    let metadata = json!({"source": "loop", "step": 8, "parents": {}, "run_id": "r"});
    let removal = plan_removal(
        LATEST,
        &body,
        &metadata,
        &messages,
        &["a".to_owned(), "b".to_owned()],
        clock(),
    )
    .unwrap();

    assert_eq!(removal.step, 9);
    // LangGraph's own task id for this update (`uuid5(UUID(latest), "__interrupt__")`).
    assert_eq!(removal.task_id, "436eea4e-6749-56ba-bcef-58ca85c3ad43");
    assert_eq!(
        removal.messages_version,
        format!("{:032}.00000000000000.5", 11)
    );
    assert_eq!(removal.kept, Value::List(vec![message("c")]));
    assert_eq!(removal.removals.as_list().unwrap().len(), 2);
    assert_eq!(
        removal.metadata_text(),
        r#"{"source": "update", "step": 9, "parents": {}, "memscope": "trim"}"#
    );
    assert!(is_memscope_trim(&removal.metadata_json()));
    assert!(!is_memscope_trim(&metadata));

    let keys: Vec<&str> = removal.body.str_entries().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "v",
            "ts",
            "id",
            "channel_values",
            "channel_versions",
            "versions_seen",
            "updated_channels"
        ]
    );
    assert_eq!(removal.body.get("updated_channels"), Some(&Value::Null));
    assert_eq!(
        removal.body.get("channel_values").unwrap().get("messages"),
        Some(&removal.kept)
    );
    let versions: Vec<(&str, &str)> = removal
        .body
        .get("channel_versions")
        .unwrap()
        .str_entries()
        .map(|(k, v)| (k, v.as_str().unwrap()))
        .collect();
    assert_eq!(versions[1], ("messages", removal.messages_version.as_str()));
    assert_eq!(versions[0].1, version(7).as_str().unwrap());
    // The id sorts after the latest one, with the step as its clock sequence.
    assert!(removal.checkpoint_id.as_str() > LATEST);
    assert_eq!(&removal.checkpoint_id[19..23], "8009");
}

#[test]
fn uuid6_as_langgraph_makes_it() {
    // `uuid6(clock_seq=9)` of langgraph 1.2.22: 1f1e86a7-8bea-6efd-8009-8da7166ff476, time
    // 140148607415135997 (100 ns since 1582).
    let time: u64 = 140_148_607_415_135_997;
    let clock = Clock {
        unix_nanos: (time - UUID_EPOCH_OFFSET) * 100,
        ..clock()
    };
    assert_eq!(
        uuid6(0, clock, 9).to_string(),
        "1f1e86a7-8bea-6efd-8009-8da7166ff476"
    );
    assert_eq!(
        checkpoint_unix_nanos("1f1e86a7-8bea-6efd-8009-8da7166ff476"),
        Some(clock.unix_nanos)
    );
    // A clock behind the latest checkpoint still gives a later id.
    let later = uuid6(time + 10, clock, 9);
    assert_eq!(uuid_time(&later), time + 11);
}

#[test]
fn a_run_that_has_not_ended_is_pending() {
    let body = map(vec![(
        "channel_values",
        map(vec![
            ("messages", Value::List(vec![])),
            ("branch:to:tools", Value::Null),
            ("__start__", Value::Int(1)),
        ]),
    )]);
    assert_eq!(pending_channels(&body), ["__start__"]);
}

#[test]
fn timestamps_as_isoformat() {
    assert_eq!(
        iso_ts(1_790_000_000_123_456_789),
        "2026-09-21T14:13:20.123456+00:00"
    );
    assert_eq!(
        iso_ts(1_790_000_000_000_000_000),
        "2026-09-21T14:13:20+00:00"
    );
}

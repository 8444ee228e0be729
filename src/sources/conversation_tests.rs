use chrono::TimeZone;

use super::*;

#[test]
fn instants_are_rfc3339_in_utc_with_z() {
    #[derive(Serialize)]
    struct At(#[serde(serialize_with = "rfc3339")] Option<DateTime<Utc>>);
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 1, 15, 6).unwrap();
    assert_eq!(
        serde_json::to_string(&At(Some(at))).unwrap(),
        "\"2026-03-02T01:15:06Z\""
    );
    let fine = at + chrono::Duration::microseconds(250_500);
    assert_eq!(
        serde_json::to_string(&At(Some(fine))).unwrap(),
        "\"2026-03-02T01:15:06.250500Z\""
    );
    assert_eq!(serde_json::to_string(&At(None)).unwrap(), "null");
}

#[test]
fn an_ambiguous_prefix_names_its_candidates() {
    let err = SourceError::ambiguous("thread", " 1ef ", vec!["1ef0".into(), "1ef1".into()]);
    assert_eq!(
        err.to_string(),
        "thread id 1ef is ambiguous: 2 ids start with it (1ef0, 1ef1); type more of the id"
    );
    assert!(matches!(
        err,
        SourceError::Refused { kind: Refusal::Ambiguous(ref ids), .. } if ids.len() == 2
    ));
}

#[test]
fn a_tree_setting_is_read_as_given_else_as_configured() {
    let request = TreeRequest {
        id: "c".into(),
        options: SourceOptions::default(),
        defaults: SourceOptions::default().with("message-limit", Some(40)),
        details: false,
    };
    assert_eq!(request.number::<i64>("message-limit").unwrap(), Some(40));
    let given = TreeRequest {
        options: SourceOptions::default().with("message-limit", Some(8)),
        ..request
    };
    assert_eq!(given.number::<i64>("message-limit").unwrap(), Some(8));
    assert_eq!(given.number::<i64>("leaf").unwrap(), None);
}

#[test]
fn a_census_counts_in_the_sources_words() {
    let census = Census {
        conversations: 3,
        entries: 1,
        unit: "message",
    };
    assert_eq!(census.describe("session"), "3 sessions with 1 message");
}

#[test]
fn extras_are_the_fields_of_an_object() {
    let fields = extra(serde_json::json!({"flow": "Sales", "n": 2}));
    assert_eq!(fields.len(), 2);
    assert_eq!(fields["flow"], "Sales");
    assert!(extra(serde_json::json!([1, 2])).is_empty());
}

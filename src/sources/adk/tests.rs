use std::collections::BTreeSet;

use super::Adk;
use crate::sources::MemorySource;
use crate::store::catalog::Catalog;

fn catalog(tables: &[(&str, &[&str])]) -> Catalog {
    Catalog {
        tables: tables.iter().map(|(t, _)| t.to_string()).collect(),
        columns: tables
            .iter()
            .map(|(t, columns)| {
                (
                    t.to_string(),
                    columns.iter().map(|c| c.to_string()).collect(),
                )
            })
            .collect(),
        ..Catalog::default()
    }
}

const SESSIONS: (&str, &[&str]) = (
    "sessions",
    &[
        "app_name",
        "user_id",
        "id",
        "state",
        "create_time",
        "update_time",
    ],
);
const EVENTS: (&str, &[&str]) = (
    "events",
    &[
        "id",
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "timestamp",
        "event_data",
    ],
);
const OLD_EVENTS: (&str, &[&str]) = (
    "events",
    &[
        "id",
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "timestamp",
        "author",
        "actions",
        "content",
        "branch",
    ],
);
const APP_STATES: (&str, &[&str]) = ("app_states", &["app_name", "state", "update_time"]);
const USER_STATES: (&str, &[&str]) = (
    "user_states",
    &["app_name", "user_id", "state", "update_time"],
);

#[test]
fn both_services_and_the_old_schema_are_recognised_by_their_columns() {
    let parts = BTreeSet::new();
    assert!(Adk.recognises(
        &catalog(&[SESSIONS, EVENTS, APP_STATES, USER_STATES]),
        &parts
    ));
    let database = catalog(&[
        SESSIONS,
        EVENTS,
        APP_STATES,
        USER_STATES,
        ("adk_internal_metadata", &["key", "value"]),
        ("users", &["id"]),
    ]);
    assert!(Adk.recognises(&database, &parts));
    assert!(Adk.recognises(
        &catalog(&[SESSIONS, OLD_EVENTS, APP_STATES, USER_STATES]),
        &parts
    ));
}

#[test]
fn another_applications_sessions_and_events_are_not_adks() {
    let parts = BTreeSet::new();
    let web_sessions = ("sessions", &["id", "user_id", "data", "expires_at"][..]);
    let analytics_events = ("events", &["id", "session_id", "name", "timestamp"][..]);
    assert!(!Adk.recognises(&catalog(&[web_sessions, analytics_events]), &parts));
    // ADK's sessions without its state tables, or its events without a body ADK writes.
    assert!(!Adk.recognises(&catalog(&[SESSIONS, EVENTS]), &parts));
    let bodiless = (
        "events",
        &[
            "id",
            "app_name",
            "user_id",
            "session_id",
            "invocation_id",
            "timestamp",
        ][..],
    );
    assert!(!Adk.recognises(
        &catalog(&[SESSIONS, bodiless, APP_STATES, USER_STATES]),
        &parts
    ));
}

use std::collections::BTreeSet;

use super::OpenAiAgents;
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
    "agent_sessions",
    &["session_id", "created_at", "updated_at"],
);
const MESSAGES: (&str, &[&str]) = (
    "agent_messages",
    &["id", "session_id", "message_data", "created_at"],
);

#[test]
fn the_two_session_tables_are_recognised_by_their_columns_beside_anything() {
    let parts = BTreeSet::new();
    assert!(OpenAiAgents.recognises(&catalog(&[SESSIONS, MESSAGES]), &parts));
    let advanced = catalog(&[
        SESSIONS,
        MESSAGES,
        ("message_structure", &["id"]),
        ("turn_usage", &["id"]),
        ("users", &["id"]),
    ]);
    assert!(OpenAiAgents.recognises(&advanced, &parts));
    assert!(!OpenAiAgents.recognises(&catalog(&[SESSIONS]), &parts));
    let other_messages = ("agent_messages", &["id", "session_id", "body"][..]);
    assert!(!OpenAiAgents.recognises(&catalog(&[SESSIONS, other_messages]), &parts));
}

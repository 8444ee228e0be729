//! `memscope export SESSION` on the database of chat sessions Langflow built (SQLite and
//! PostgreSQL): the bundle holds the session's flows and exactly what the Agent's memory feeds
//! (Langflow's own list), as `history --json` prints it; a session id several flows use needs
//! `--flow`; a credential in a message is removed; a file is never replaced without `--yes`.

use super::*;

fn export_bundles_what_langflow_feeds(built: &Sessions, _store: &Store) {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let shared = memscope_on(built, home)
        .args(["export", "New Session 0"])
        .output()
        .unwrap();
    assert_eq!(shared.status.code(), Some(3), "ambiguous without --flow");
    let said = String::from_utf8_lossy(&shared.stderr);
    assert!(
        said.contains("Support Chat") && said.contains("Sales Chat"),
        "{said}"
    );
    assert!(shared.stdout.is_empty(), "nothing exported");

    let bundle =
        json(memscope_on(built, home).args(["export", "New Session 0", "--flow", "Support Chat"]));
    assert_eq!(bundle["memscope_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(bundle["database"]["source"], "Langflow");
    let backend = if built.url.starts_with("sqlite") {
        "sqlite"
    } else {
        "postgres"
    };
    assert_eq!(bundle["database"]["backend"], backend);
    assert_eq!(bundle["conversation"], "New Session 0");
    let flows: Vec<&str> = bundle["thread"]["extra"]["session_flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(flows, vec!["Sales Chat", "Support Chat", "Their Chat"]);
    let fed: Vec<&Value> = bundle["history"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    let oracle = built.oracle["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "support default")
        .unwrap();
    let expected: Vec<&Value> = oracle["ids"].as_array().unwrap().iter().collect();
    assert_eq!(fed, expected, "the bundle's history is what Langflow feeds");
    let history =
        json(memscope_on(built, home).args(["history", "New Session 0", "--flow", "Support Chat"]));
    assert_eq!(
        bundle["history"], history,
        "the part is what `history` prints"
    );

    // A file: written whole, never replaced without --yes.
    let file = home.join("session.json");
    let written = memscope_on(built, home)
        .args(["export", "long", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(written.status.code(), Some(0));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["history"]["messages"].as_array().unwrap().len(), 100);
    assert_eq!(super::left_out(&saved["history"], "past_window"), 30);
    std::fs::write(&file, "keep me").unwrap();
    let refused = memscope_on(built, home)
        .args(["export", "long", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn langflow_export_bundles_what_langflow_feeds_sqlite() {
    on_sessions("langflow_export", true, export_bundles_what_langflow_feeds);
}

#[test]
fn langflow_export_bundles_what_langflow_feeds_postgres() {
    on_sessions("langflow_export", false, export_bundles_what_langflow_feeds);
}

/// A credential a user typed into a session never leaves in the bundle. The message is written
/// into a copy of the SQLite database, so the other tests read Langflow's own rows.
fn export_removes_secrets(built: &Sessions, _store: &Store) {
    let home = tempfile::tempdir().unwrap();
    let file = built.url.strip_prefix("sqlite://").unwrap();
    let copy = home.path().join("copy.db");
    std::fs::copy(file, &copy).unwrap();
    let copy_url = format!("sqlite://{}", copy.display());
    let updated = Process::new("sqlite3")
        .arg(&copy)
        .arg(
            "UPDATE message SET text = 'my key sk-proj-AbCdEf0123456789xyz and \
             postgres://ops:hunter2@db.internal/app' WHERE rowid = (SELECT max(rowid) FROM \
             message WHERE session_id = 'long')",
        )
        .status()
        .expect("sqlite3 runs");
    assert!(updated.success());
    let copied = Sessions {
        url: copy_url,
        oracle: built.oracle.clone(),
        _dir: tempfile::tempdir().unwrap(),
    };
    let out = memscope_on(&copied, home.path())
        .args(["export", "long"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("hunter2") && !text.contains("sk-proj-AbCdEf"),
        "{text}"
    );
    assert!(
        text.contains("postgres://ops:[redacted]@db.internal/app"),
        "{text}"
    );
    let bundle: Value = serde_json::from_str(&text).unwrap();
    assert!(
        bundle["secrets_redacted"].as_u64().unwrap() >= 2,
        "{bundle:#}"
    );
}

#[test]
fn langflow_export_removes_secrets_sqlite() {
    on_sessions("langflow_export_secrets", true, export_removes_secrets);
}

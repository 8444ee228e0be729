//! A model's context window on the real binary: a known name is stated as fact, another name of
//! a known family is said to be assumed from it, a name of no family has no window and says how
//! to set one, and `[tokens.context_windows]` sets it.

mod cli_support;

use std::path::Path;

use cli_support::{memscope_on, run};
use serde_json::Value;

/// A demo database of its own in `home`, and the id of its over-budget conversation.
fn demo(home: &Path) -> (String, String) {
    let db = format!("sqlite://{}", home.join("m.db").display());
    let (out, _) = run(memscope_on(home, &db).args(["demo", "--json"]), 0);
    let demo: Value = serde_json::from_str(&out).unwrap();
    let story = demo["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == "History over budget")
        .expect("the over-budget story");
    (db, story["id"].as_str().unwrap().to_owned())
}

fn history(home: &Path, db: &str, conversation: &str, model: &str) -> (Value, String) {
    let args = [
        "history",
        conversation,
        "--max-tokens",
        "4000",
        "--model",
        model,
    ];
    let (json, _) = run(memscope_on(home, db).args(args).arg("--json"), 0);
    let (text, _) = run(memscope_on(home, db).args(args), 0);
    (serde_json::from_str(&json).unwrap(), text)
}

fn sent_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("sent: "))
        .unwrap_or_else(|| panic!("a sent line: {text}"))
}

#[test]
fn a_known_model_is_fact_a_family_guess_is_assumed_and_an_unknown_model_has_none() {
    let home = tempfile::tempdir().unwrap();
    let (db, conversation) = demo(home.path());

    let (json, text) = history(home.path(), &db, &conversation, "gpt-4");
    assert_eq!(json["context_window"], 8192);
    assert_eq!(json["context_window_source"], "exact");
    assert_eq!(json["context_window_assumed_from"], Value::Null);
    assert!(
        sent_line(&text).ends_with("within gpt-4's context window of 8,192"),
        "{text}"
    );

    let (json, text) = history(home.path(), &db, &conversation, "gpt-4-foo");
    assert_eq!(json["context_window"], 8192);
    assert_eq!(json["context_window_source"], "assumed");
    assert_eq!(json["context_window_assumed_from"], "gpt-4");
    let line = sent_line(&text);
    assert!(
        line.contains(
            "within gpt-4-foo's assumed context window of 8,192 (assumed from the gpt-4 family"
        ) && line.contains("[tokens.context_windows]")
            && !line.contains("gpt-4-foo's context window of"),
        "{line}"
    );

    let (json, text) = history(home.path(), &db, &conversation, "claude-made-up");
    assert_eq!(json["context_window_source"], "assumed");
    assert_eq!(json["context_window_assumed_from"], "claude");

    let (json, text_unknown) = history(home.path(), &db, &conversation, "my-local-model");
    assert_eq!(json["context_window"], Value::Null);
    assert_eq!(json["context_window_source"], "unknown");
    assert_eq!(json["fits_context"], Value::Null);
    let line = sent_line(&text_unknown);
    assert!(
        line.contains("my-local-model's context window is unknown")
            && line.contains("set it under [tokens.context_windows]")
            && !line.contains("within"),
        "{line}"
    );
    assert!(
        text.contains(
            "claude-made-up's assumed context window of 200,000 (assumed from the claude family"
        ),
        "{text}"
    );
}

#[test]
fn a_configured_window_is_used_and_named_a_setting() {
    let home = tempfile::tempdir().unwrap();
    let (db, conversation) = demo(home.path());
    let config = home.path().join("config/memscope");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[tokens.context_windows]\n\"my-local-model\" = 1000\n\"gpt-4-foo\" = 100000\n",
    )
    .unwrap();

    let (json, text) = history(home.path(), &db, &conversation, "my-local-model");
    assert_eq!(json["context_window"], 1000);
    assert_eq!(json["context_window_source"], "setting");
    assert_eq!(
        json["fits_context"], false,
        "more than 1,000 tokens are sent"
    );
    assert!(
        sent_line(&text).ends_with("OVER my-local-model's configured context window of 1,000"),
        "{text}"
    );
    assert!(
        json["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("configured context window of 1,000 tokens")),
        "{json}"
    );

    let (json, _) = history(home.path(), &db, &conversation, "gpt-4-foo");
    assert_eq!(json["context_window"], 100_000);
    assert_eq!(json["context_window_source"], "setting");
    // The table adds to memscope's own: other models keep theirs.
    let (json, _) = history(home.path(), &db, &conversation, "gpt-4o");
    assert_eq!(json["context_window_source"], "exact");

    std::fs::write(
        config.join("config.toml"),
        "[tokens.context_windows]\n\"my-local-model\" = \"big\"\n",
    )
    .unwrap();
    let (_, err) = run(
        memscope_on(home.path(), &db).args(["history", &conversation, "--model", "my-local-model"]),
        3,
    );
    assert!(
        err.contains("context_windows"),
        "a bad window is refused where it is: {err}"
    );
}

//! `memscope export` on the real binary: one JSON bundle of a conversation for a bug report,
//! on SQLite and PostgreSQL, with every credential a message carried removed, and a file that
//! is never replaced without `--yes`.

mod cli_support;

#[macro_use]
mod common;

use cli_support::{memscope_on, run};
use serde_json::Value;

fn story_id(demo: &Value, title: &str) -> String {
    demo["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == title)
        .unwrap_or_else(|| panic!("no story {title}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

db_tests! {
    async fn a_bundle_holds_what_the_commands_print_with_secrets_removed(db) {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let url = db.url().to_owned();
        let demo = json(&run(memscope_on(home, &url).args(["demo", "--json"]), 0).0);
        let chatflow = story_id(&demo, "Chatflow node memory");
        // A user pasted credentials into the conversation's newest question.
        db.execute(&format!(
            "UPDATE messages SET query = 'my key sk-proj-AbCdEf0123456789xyz and \
             postgres://ops:hunter2@db.internal/app' WHERE id = (SELECT id FROM messages \
             WHERE conversation_id = '{chatflow}' ORDER BY created_at DESC LIMIT 1)"
        ))
        .await;

        let (out, _) = run(memscope_on(home, &url).args(["export", &chatflow]), 0);
        assert!(!out.contains("hunter2") && !out.contains("sk-proj-AbCdEf"), "{out}");
        let bundle = json(&out);
        assert_eq!(bundle["memscope_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(bundle["database"]["source"], "memscope");
        let backend = if url.starts_with("sqlite") { "sqlite" } else { "postgres" };
        assert_eq!(bundle["database"]["backend"], backend);
        assert!(bundle["secrets_redacted"].as_u64().unwrap() >= 2, "{bundle:#}");
        assert!(out.contains("postgres://ops:[redacted]@db.internal/app"), "{out}");

        // The parts are what the commands print with --json.
        let thread = json(&run(memscope_on(home, &url).args(["thread", &chatflow, "--json"]), 0).0);
        assert_eq!(bundle["thread"]["thread"], thread["thread"]);
        assert_eq!(bundle["thread"]["nodes"].as_array().unwrap().len(), thread["nodes"].as_array().unwrap().len());
        let history = json(&run(memscope_on(home, &url).args(["history", &chatflow, "--json"]), 0).0);
        assert_eq!(bundle["history"]["sent_tokens"], history["sent_tokens"]);
        assert_eq!(bundle["history"]["max_tokens"], history["max_tokens"]);
        let nodes = bundle["nodes"]["nodes"].as_array().unwrap();
        let contexts = bundle["node_contexts"].as_array().unwrap();
        assert!(!nodes.is_empty());
        assert_eq!(contexts.len(), nodes.len());
        let research = contexts.iter().find(|c| c["node_title"] == "Research").expect("the Research node");
        let alone = json(&run(memscope_on(home, &url).args(["node-context", &chatflow, "Research", "--json"]), 0).0);
        assert_eq!(research["timeline"], alone["timeline"]);

        // A file: written whole, never replaced without --yes.
        let file = home.join("bundle.json");
        let (said, _) = run(memscope_on(home, &url).args(["export", &chatflow, "--out"]).arg(&file), 0);
        assert!(said.starts_with(&format!("wrote {}", file.display())), "{said}");
        assert_eq!(json(&std::fs::read_to_string(&file).unwrap())["thread"], bundle["thread"]);
        std::fs::write(&file, "keep me").unwrap();
        let (_, err) = run(memscope_on(home, &url).args(["export", &chatflow, "--out"]).arg(&file), 2);
        assert!(err.contains("--yes"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
        run(memscope_on(home, &url).args(["export", &chatflow, "--yes", "--out"]).arg(&file), 0);
        assert_eq!(json(&std::fs::read_to_string(&file).unwrap())["conversation"], chatflow.as_str());

        // An unknown conversation writes nothing and fails as `thread` does.
        let missing = home.join("missing.json");
        run(memscope_on(home, &url).args(["export", "no-such-conversation", "--out"]).arg(&missing), 3);
        assert!(!missing.exists());
    }
}

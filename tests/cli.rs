//! The real binary, as an operator or a script runs it: fresh data directories, the demo, every
//! read command in text and JSON, and the failures an operator must be able to tell apart.

mod cli_support;

#[macro_use]
mod common;

use std::path::Path;

use assert_cmd::Command;
use cli_support::memscope;
use serde_json::Value;

/// Runs and parses `--json` output, asserting the exit code.
fn json(command: &mut Command, code: i32) -> Value {
    let output = command.arg("--json").output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr: {}\nstdout: {}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    serde_json::from_slice(&output.stdout).expect("--json prints JSON")
}

/// The KB directory of the first base `mb check` found vectors for.
fn synced_path(check: &Value) -> &str {
    check
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["observed"]["store_chunks"].as_i64().unwrap_or(0) > 0)
        .and_then(|r| r["kb_path"].as_str())
        .expect("a synced base")
}

/// Runs and returns stderr, asserting the exit code.
fn failure(command: &mut Command, code: i32) -> String {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}

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

#[test]
fn first_run_creates_the_demo_once_and_info_names_the_paths() {
    let home = tempfile::tempdir().unwrap();
    let info = json(memscope(home.path()).arg("info"), 0);
    assert_eq!(info["database_url_source"], "embedded-default");
    assert_eq!(info["database"]["status"], "not-created-yet");

    let first = memscope(home.path()).output().unwrap();
    assert!(first.status.success(), "{first:?}");
    let stderr = String::from_utf8_lossy(&first.stderr);
    let db = home.path().join("data/memscope/memscope.db");
    assert!(
        stderr.contains(&db.display().to_string()),
        "the path is printed: {stderr}"
    );
    assert!(db.exists());
    assert!(!db.with_extension("db.partial").exists());

    let second = memscope(home.path()).output().unwrap();
    assert!(second.status.success());
    assert!(
        !String::from_utf8_lossy(&second.stderr).contains("first run"),
        "the demo is not created twice"
    );
    let info = json(memscope(home.path()).arg("info"), 0);
    assert_eq!(info["database"]["status"], "open");
    assert_eq!(info["database"]["created_by_memscope"], true);
    assert_eq!(info["database"]["read_only"], false);
}

#[test]
fn config_file_and_environment_choose_the_database() {
    let home = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config/memscope");
    std::fs::create_dir_all(&config_dir).unwrap();
    let from_file = format!("sqlite://{}/file.db", home.path().display());
    std::fs::write(
        config_dir.join("config.toml"),
        format!("[database]\nurl = \"{from_file}\"\n[tokens]\nbudget = 4000\n"),
    )
    .unwrap();
    json(memscope(home.path()).arg("init"), 0);
    let info = json(memscope(home.path()).arg("info"), 0);
    assert_eq!(info["database_url"], from_file);
    assert_eq!(info["database_url_source"], "config-file");
    assert_eq!(info["budget"], 4000);

    let from_env = "postgres://ops:hunter2@db.internal/memory";
    // The server cannot be reached: `info` fails (exit 3) naming the URL it was given, its
    // password redacted, in one JSON error object on stderr.
    let output = memscope(home.path())
        .env("MEMSCOPE_DATABASE_URL", from_env)
        .args(["info", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(output.stdout.is_empty());
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("ops:***@db.internal"), "{message}");
    assert!(
        !message.contains("hunter2"),
        "the password is redacted: {message}"
    );
}

db_tests! {
    async fn a_fresh_demos_synced_memory_base_has_a_real_consistent_kb(db) {
        let home = tempfile::tempdir().unwrap();
        let url = db.url().to_owned();
        json(memscope(home.path()).args(["demo", "--db", &url]), 0);
        // Every base but the mismatch story's is consistent: `mb check` exits 1 for that one.
        let check = json(memscope(home.path()).args(["mb", "check", "--db", &url]), 1);
        let reports = check.as_array().expect("one report per base");
        assert_eq!(reports.len(), 3);
        let mismatched: Vec<&str> = reports
            .iter()
            .filter(|r| !r["mismatches"].as_array().unwrap().is_empty())
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(mismatched, ["Release history"], "{check:#}");
        let synced: Vec<&Value> = reports.iter().filter(|r| r["observed"]["store_chunks"].as_i64().unwrap_or(0) > 0).collect();
        assert!(!synced.is_empty(), "the synced base has vectors: {check:#}");
        for report in synced {
            // Langflow's layout on both backends; the metadata counts what the store holds.
            let metadata: Value = serde_json::from_str(
                &std::fs::read_to_string(Path::new(report["kb_path"].as_str().unwrap()).join("embedding_metadata.json")).unwrap(),
            ).unwrap();
            assert_eq!(metadata["chunks"], report["observed"]["store_chunks"]);
            assert_eq!(metadata["dimension"], 384);
        }
        let hits = json(memscope(home.path()).args(["mb", "search", "Support memory", "retry with a smaller page size", "--db", &url]), 0);
        assert!(!hits.as_array().unwrap().is_empty(), "{hits:#}");
        // The memory bases' KBs are listed with the others, marked.
        let kb_root = Path::new(synced_path(&check)).parent().unwrap().parent().unwrap().to_owned();
        let plain = kb_root.join("someone").join("product_docs");
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::write(
            plain.join("embedding_metadata.json"),
            r#"{"chunks": 3, "embedding_model": "text-embedding-3-small", "source_types": ["file"]}"#,
        )
        .unwrap();
        let kbs = json(memscope(home.path()).args(["kbs", "--db", &url]), 0);
        let kbs = kbs.as_array().unwrap();
        let marked = |name: &str| kbs.iter().find(|kb| kb["kb_name"] == name).map(|kb| kb["is_memory_base"].clone());
        assert_eq!(marked("product_docs"), Some(Value::Bool(false)), "{kbs:#?}");
        let memory_kb = Path::new(synced_path(&check)).file_name().unwrap().to_str().unwrap();
        assert_eq!(marked(memory_kb), Some(Value::Bool(true)), "{kbs:#?}");
    }

    async fn the_demo_tells_its_stories_through_every_read_command(db) {
        let home = tempfile::tempdir().unwrap();
        let url = db.url().to_owned();
        let demo = json(memscope(home.path()).args(["demo", "--db", &url]), 0);

        // The seed's regeneration example: rows A→A', B→B', A→A'' (root), C→C'.
        let readme = story_id(&demo, "README regeneration example");
        let thread = json(memscope(home.path()).args(["thread", &readme, "--db", &url]), 0);
        assert_eq!(thread["thread"].as_array().unwrap().len(), 2);
        assert_eq!(thread["nodes"].as_array().unwrap().len(), 4);
        assert_eq!(thread["extra"]["comparison"]["kind"], "same");
        let history = json(memscope(home.path()).args(["history", &readme, "--db", &url]), 0);
        let texts: Vec<&str> = history["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts.len(), 4, "[A, A'', C, C']");
        assert_eq!(texts[0], "What's a good name for a café inside a bookshop?");
        assert!(texts[1].starts_with("\"Marginalia\""), "{}", texts[1]);
        assert!(texts[2].starts_with("Love it."));

        // #39031: Dify's walk stops at an unrelated root; the tree mode shows the true path.
        let bug = story_id(&demo, "Issue #39031");
        let dify = json(memscope(home.path()).args(["thread", &bug, "--db", &url]), 0);
        assert_eq!(dify["extra"]["comparison"]["kind"], "stopped_at_unrelated_root");
        let tree = json(memscope(home.path()).args(["thread", &bug, "--mode", "tree", "--db", &url]), 0);
        assert!(tree["thread"].as_array().unwrap().len() > dify["thread"].as_array().unwrap().len());
        let fixed = json(memscope(home.path()).args(["thread", &bug, "--mode", "fixed", "--db", &url]), 0);
        assert_eq!(fixed["thread"], tree["thread"]);

        // Over budget: pruning keeps the budget with a real counter, and the zero counter
        // (Dify 1.x default) prunes nothing and says so.
        let long = story_id(&demo, "History over budget");
        let pruned = json(memscope(home.path()).args(["history", &long, "--max-tokens", "4000", "--db", &url]), 0);
        assert!(pruned["dropped"].as_u64().unwrap() > 0);
        assert!(pruned["tokens_after"].as_u64().unwrap() <= 4000);
        assert!(pruned["tokens_before"].as_u64().unwrap() > 128_000);
        let zero = json(memscope(home.path()).args(["history", &long, "--counter", "zero", "--db", &url]), 0);
        assert_eq!(zero["dropped"], 0);
        assert_eq!(zero["fits_context"], false);
        assert!(zero["warnings"][0].as_str().unwrap().contains("nothing is pruned"));
        let text = memscope(home.path())
            .args(["history", &readme, "--text", "--human-prefix", "H", "--ai-prefix", "A", "--db", &url])
            .output()
            .unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(text.starts_with("H: What's a good name"), "{text}");
        assert_eq!(text.lines().count(), 4);

        // Listing, paging and search.
        let page = json(memscope(home.path()).args(["conversations", "--limit", "3", "--db", &url]), 0);
        assert_eq!(page["conversations"].as_array().unwrap().len(), 3);
        let next = page["next"].as_str().unwrap().to_owned();
        let page2 = json(memscope(home.path()).args(["conversations", "--limit", "3", "--after", &next, "--db", &url]), 0);
        assert_ne!(page2["conversations"][0]["id"], page["conversations"][0]["id"]);
        let found = json(memscope(home.path()).args(["conversations", "--search", "Marginalia", "--db", &url]), 0);
        assert_eq!(found["conversations"][0]["id"], readme.as_str());

        // doctor finds every planted problem and exits 1.
        let report = json(memscope(home.path()).args(["doctor", "--db", &url]), 1);
        for kind in ["thread_divergence", "over_budget", "dangling_workflow_run", "unreadable_json"] {
            assert!(report["counts"][kind].as_u64().unwrap_or(0) > 0, "{kind}: {}", report["counts"]);
        }

        // The demo refuses to run twice into the same database.
        let err = failure(memscope(home.path()).args(["demo", "--db", &url]), 3);
        assert!(err.contains("already holds data"), "{err}");
    }

    async fn an_initialized_database_is_empty_and_healthy(db) {
        let home = tempfile::tempdir().unwrap();
        let url = db.url().to_owned();
        let init = json(memscope(home.path()).args(["init", "--db", &url]), 0);
        assert!(init["schema_version"].as_i64().unwrap() >= 1);
        let page = json(memscope(home.path()).args(["conversations", "--db", &url]), 0);
        assert_eq!(page["conversations"], Value::Array(vec![]));
        assert_eq!(page["next"], Value::Null);
        let report = json(memscope(home.path()).args(["doctor", "--db", &url]), 0);
        assert_eq!(report["conversations"], 0);
        let err = failure(
            memscope(home.path()).args(["thread", "6f1ad3f4-0000-4000-8000-000000000000", "--db", &url]),
            3,
        );
        assert!(err.contains("no conversation 6f1ad3f4"), "{err}");
    }
}

#[test]
fn tokens_counts_a_message_file_per_message_and_in_total() {
    let home = tempfile::tempdir().unwrap();
    let input = home.path().join("messages.json");
    std::fs::write(
        &input,
        r#"[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi there"}]"#,
    )
    .unwrap();
    let report = json(
        memscope(home.path())
            .args(["tokens", "--model", "gpt-4o", "--input"])
            .arg(&input),
        0,
    );
    // 3 + "user" + "Hello", 3 + "assistant" + "Hi there", + 3 reply priming (all 1-2 tokens).
    assert_eq!(report["messages"][0]["tokens"], 5);
    assert_eq!(report["messages"][1]["tokens"], 6);
    assert_eq!(report["total"], 14);
    let zero = json(
        memscope(home.path())
            .args(["tokens", "--counter", "zero", "--input"])
            .arg(&input),
        0,
    );
    assert_eq!(zero["total"], 0);
}

#[test]
fn bad_input_gets_a_clear_error_and_a_distinct_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let bad = home.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"[{"role":"user","content":"a"},{"role":"robot","content":"b"}]"#,
    )
    .unwrap();
    let err = failure(
        memscope(home.path()).args(["tokens", "--input"]).arg(&bad),
        3,
    );
    assert!(err.contains("message 1: unknown role `robot`"), "{err}");
    std::fs::write(&bad, "{ not json").unwrap();
    let err = failure(
        memscope(home.path()).args(["tokens", "--input"]).arg(&bad),
        3,
    );
    assert!(err.contains("not valid JSON"), "{err}");
    // Counting while reading must not print anything for a list that turns out malformed.
    std::fs::write(&bad, r#"[{"role":"user","content":"a"}] trailing"#).unwrap();
    let err = failure(
        memscope(home.path()).args(["tokens", "--input"]).arg(&bad),
        3,
    );
    assert!(err.contains("not valid JSON"), "{err}");
    std::fs::write(&bad, r#"{"role":"user","content":"a"}"#).unwrap();
    let err = failure(
        memscope(home.path()).args(["tokens", "--input"]).arg(&bad),
        3,
    );
    assert!(err.contains("expected a JSON list of messages"), "{err}");
    std::fs::write(&bad, r#"[{"role":"user","content":"a"}]"#).unwrap();
    let err = failure(
        memscope(home.path())
            .args(["tokens", "--counter", "psychic", "--input"])
            .arg(&bad),
        2,
    );
    assert!(
        err.contains("invalid value 'psychic' for '--counter <NAME>'") && err.contains("openai"),
        "a bad flag value is a usage error naming the valid ones: {err}"
    );

    let err = failure(
        memscope(home.path()).args(["conversations", "--db", "mysql://x/y"]),
        3,
    );
    assert!(err.contains("mysql://x/y"), "{err}");

    let err = failure(memscope(home.path()).args(["history", "not-a-uuid"]), 3);
    assert!(err.contains("no conversation not-a-uuid"), "{err}");
    let usage = memscope(home.path()).args(["history"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// Creates a SQLite file with one table and nothing of memory's.
async fn sqlite_with_table(path: &Path, ddl: &'static str) {
    use sqlx::{ConnectOptions, Executor};
    let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .connect()
        .await
        .unwrap();
    connection.execute(ddl).await.unwrap();
}

#[tokio::test]
async fn a_database_that_is_not_memory_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let other = home.path().join("other.db");
    sqlite_with_table(&other, "create table invoices(id integer)").await;
    let url = format!("sqlite://{}", other.display());
    let err = failure(
        memscope(home.path()).args(["conversations", "--db", &url]),
        3,
    );
    assert!(err.contains("not a memory database"), "{err}");
    let err = failure(memscope(home.path()).args(["init", "--db", &url]), 3);
    assert!(err.contains("memscope did not create"), "{err}");
}

#[tokio::test]
async fn a_database_memscope_did_not_create_is_only_read() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("dify.db");
    let url = format!("sqlite://{}", file.display());
    let demo = json(memscope(home.path()).args(["demo", "--db", &url]), 0);
    let readme = story_id(&demo, "README regeneration example");
    // Without memscope's meta row it is someone else's database: a live Dify, say.
    {
        use sqlx::{ConnectOptions, Executor};
        let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&file)
            .connect()
            .await
            .unwrap();
        connection
            .execute("delete from memscope_meta")
            .await
            .unwrap();
        connection
            .execute("pragma wal_checkpoint(truncate)")
            .await
            .unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let info = json(memscope(home.path()).args(["info", "--db", &url]), 0);
    assert_eq!(info["database"]["created_by_memscope"], false);
    assert_eq!(info["database"]["read_only"], true);
    for args in [
        vec!["conversations"],
        vec!["thread", readme.as_str()],
        vec!["history", readme.as_str()],
    ] {
        json(memscope(home.path()).args(&args).args(["--db", &url]), 0);
    }
    json(memscope(home.path()).args(["doctor", "--db", &url]), 1);
    assert!(
        std::fs::read(&file).unwrap() == before,
        "read commands wrote nothing"
    );
    let err = failure(memscope(home.path()).args(["demo", "--db", &url]), 3);
    assert!(err.contains("memscope did not create"), "{err}");
}

/// `info` on a LangGraph checkpoint file gives its saver's figures, in words and for scripts,
/// counted as its conversations are.
#[test]
fn info_gives_a_checkpoint_savers_figures() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("checkpoints.sqlite");
    let demo = memscope(home.path())
        .args(["demo", "--langgraph"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(demo.status.success(), "{demo:?}");
    let url = format!("sqlite://{}", file.display());
    let info = json(memscope(home.path()).args(["info", "--db", &url]), 0);
    let figures = &info["database"]["checkpoints"];
    let kept = &info["database"]["conversations"];
    assert_eq!(figures["saver"], "SqliteSaver", "{figures}");
    assert_eq!(figures["migration"], Value::Null);
    assert_eq!(figures["threads"], kept["conversations"]);
    assert_eq!(figures["checkpoints"], kept["entries"]);
    assert!(figures["writes"].as_i64().unwrap() > 0, "{figures}");
    assert!(figures["bytes"].as_i64().unwrap() > 0, "{figures}");

    let text = memscope(home.path())
        .args(["info", "--db", &url])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let count = |n: &Value| memscope::format::thousands(n.as_i64().unwrap());
    let said = format!(
        "SqliteSaver: {} threads, {} checkpoints, ",
        count(&kept["conversations"]),
        count(&kept["entries"])
    );
    assert!(text.contains(&said), "{said}\n{text}");
    assert!(text.contains(" bytes of stored values\n\n"), "{text}");
}

//! One exit-code table for every command, errors on standard error (one JSON object under
//! `--json`, nothing on standard output), and error messages that name the way out.

mod cli_support;

use std::path::Path;

use assert_cmd::Command;
use cli_support::memscope;
use serde_json::Value;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(command: &mut Command) -> Run {
    let output = command.output().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs with `--json`, expects `code`, nothing on stdout and one JSON error object on stderr.
fn json_error(command: &mut Command, code: i32) -> Value {
    let run = run(command.arg("--json"));
    assert_eq!(
        run.code,
        Some(code),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert_eq!(run.stdout, "", "an error prints nothing on stdout");
    let error: Value = serde_json::from_str(run.stderr.trim())
        .unwrap_or_else(|e| panic!("stderr is one JSON object ({e}): {}", run.stderr));
    assert!(error["error"]["kind"].is_string(), "{error}");
    assert!(error["error"]["message"].is_string(), "{error}");
    assert_eq!(error["error"]["exit_code"], code, "{error}");
    error
}

fn demo(home: &Path) -> String {
    let db = format!("sqlite://{}", home.join("m.db").display());
    let out = run(memscope(home).args(["demo", "--db", &db]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    db
}

fn json_ok(command: &mut Command) -> Value {
    let out = run(command.arg("--json"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn every_destructive_command_without_yes_exits_2_and_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let memories = json_ok(memscope(home.path()).args(["chat-memory", "list", "--db", &db]));
    let memory = memories["chat_memories"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let base = "Support memory";
    let destructive: Vec<Vec<&str>> = vec![
        vec!["chat-memory", "delete", &memory, "--scope", "all"],
        vec![
            "trim",
            "apply",
            "--chat-memory",
            &memory,
            "--max-messages",
            "2",
        ],
        vec!["trim", "undo", "--chat-memory", &memory],
        vec!["mb", "delete", base],
        vec!["mb", "regenerate", base],
    ];
    let state = || {
        (
            json_ok(memscope(home.path()).args([
                "chat-memory",
                "show",
                &memory,
                "--limit",
                "1000",
                "--db",
                &db,
            ])),
            json_ok(memscope(home.path()).args(["mb", "list", "--db", &db])),
            json_ok(memscope(home.path()).args(["kbs", "--db", &db])),
        )
    };
    let before = state();
    for args in &destructive {
        let out = run(memscope(home.path()).args(args).args(["--db", &db]));
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("--yes"), "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
        let error = json_error(memscope(home.path()).args(args).args(["--db", &db]), 2);
        assert_eq!(error["error"]["kind"], "confirmation-required", "{args:?}");
    }
    assert!(state() == before, "nothing was changed");
}

#[test]
fn every_error_under_json_is_one_object_on_stderr() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let missing = home.path().join("nowhere.db");
    let missing_url = format!("sqlite://{}", missing.display());
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["info".into(), "--db".into(), missing_url.clone()],
            3,
            "database",
        ),
        (
            vec!["conversations".into(), "--db".into(), missing_url.clone()],
            3,
            "database",
        ),
        (
            vec!["conversations".into(), "--db".into(), "mysql://x/y".into()],
            3,
            "database",
        ),
        (
            vec![
                "mb".into(),
                "cancel".into(),
                "no-such-job".into(),
                "--db".into(),
                db.clone(),
            ],
            3,
            "not-found",
        ),
        (
            vec![
                "mb".into(),
                "show".into(),
                "no such base".into(),
                "--db".into(),
                db.clone(),
            ],
            3,
            "not-found",
        ),
        (
            vec![
                "thread".into(),
                "6f1ad3f4-0000-4000-8000-000000000000".into(),
                "--db".into(),
                db.clone(),
            ],
            3,
            "not-found",
        ),
        (vec!["history".into()], 2, "usage"),
        (vec!["no-such-command".into()], 2, "usage"),
        (
            vec![
                "--config".into(),
                "/nonexistent/c.toml".into(),
                "info".into(),
            ],
            3,
            "config",
        ),
    ];
    for (args, code, kind) in cases {
        let error = json_error(memscope(home.path()).args(&args), code);
        assert_eq!(error["error"]["kind"], kind, "{args:?}: {error}");
    }
}

#[test]
fn errors_go_to_stderr_in_text_mode_too() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let out = run(memscope(home.path()).args(["mb", "cancel", "no-such-job", "--db", &db]));
    assert_eq!(out.code, Some(3));
    assert_eq!(out.stdout, "", "the error is not on stdout");
    assert!(out.stderr.contains("no-such-job"), "{}", out.stderr);

    let missing = home.path().join("nowhere.db");
    let out = run(memscope(home.path()).args(["info", "--db"]).arg(&missing));
    assert_eq!(
        out.code,
        Some(3),
        "info on a database that cannot open fails"
    );
    assert!(
        out.stdout.contains("config file"),
        "the configuration is still shown"
    );
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
}

#[test]
fn a_missing_file_names_init_and_demo_not_the_engines_code() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nowhere.db");
    let url = format!("sqlite://{}", missing.display());
    let error = json_error(
        memscope(home.path()).args(["conversations", "--db", &url]),
        3,
    );
    let text = error.to_string();
    assert!(!text.contains("code: 14"), "{text}");
    assert!(text.contains("does not exist"), "{text}");
    let hint = error["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("memscope init") && hint.contains("memscope demo"),
        "{hint}"
    );
    assert!(!missing.exists(), "a read never creates the file");

    let out = run(memscope(home.path()).args(["conversations", "--db", &url]));
    assert!(out.stderr.contains("memscope init"), "{}", out.stderr);
}

#[test]
fn a_directory_as_db_is_named_a_directory() {
    let home = tempfile::tempdir().unwrap();
    let error = json_error(
        memscope(home.path())
            .args(["conversations", "--db"])
            .arg(home.path()),
        3,
    );
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is a directory"),
        "{error}"
    );
}

#[test]
fn a_bare_path_is_a_sqlite_database() {
    let home = tempfile::tempdir().unwrap();
    demo(home.path());
    let bare = home.path().join("m.db");
    let page = json_ok(
        memscope(home.path())
            .args(["conversations", "--limit", "1", "--db"])
            .arg(&bare),
    );
    assert_eq!(page["conversations"].as_array().unwrap().len(), 1);
    // Relative too, from the working directory.
    let page = json_ok(memscope(home.path()).current_dir(home.path()).args([
        "conversations",
        "--limit",
        "1",
        "--db",
        "./m.db",
    ]));
    assert_eq!(page["conversations"].as_array().unwrap().len(), 1);
}

#[test]
fn config_errors_name_the_file_line_and_column() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("c.toml");
    std::fs::write(&config, "[tokens]\nmodel = \"gpt-4o\"\nbudget = \"lots\"\n").unwrap();
    let out = run(memscope(home.path())
        .arg("--config")
        .arg(&config)
        .arg("info"));
    assert_eq!(out.code, Some(3));
    assert!(
        out.stderr.contains(&format!(
            "config file {}, line 3, column 1",
            config.display()
        )),
        "{}",
        out.stderr
    );

    std::fs::write(&config, "[ui]\ntheme = \"solarized\"\n").unwrap();
    let error = json_error(
        memscope(home.path())
            .arg("--config")
            .arg(&config)
            .arg("info"),
        3,
    );
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("line 2") && message.contains("dark and light"),
        "{message}"
    );
}

#[tokio::test]
async fn read_only_refusals_name_write() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    // Without memscope's meta row it is someone else's database, opened read-only.
    {
        use sqlx::{ConnectOptions, Executor};
        let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(home.path().join("m.db"))
            .connect()
            .await
            .unwrap();
        connection
            .execute("delete from memscope_meta")
            .await
            .unwrap();
    }
    let memories = json_ok(memscope(home.path()).args(["chat-memory", "list", "--db", &db]));
    let memory = memories["chat_memories"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let error = json_error(
        memscope(home.path()).args([
            "chat-memory",
            "delete",
            &memory,
            "--scope",
            "all",
            "--yes",
            "--db",
            &db,
        ]),
        3,
    );
    assert_eq!(error["error"]["kind"], "read-only", "{error}");
    assert!(
        error["error"]["hint"].as_str().unwrap().contains("--write"),
        "{error}"
    );
}

/// `memscope open ID` looks the id up before the terminal UI takes the screen: an unknown id
/// fails as `thread` does (exit 3, the same message and hint), on Dify's shape and on LangGraph's,
/// and nothing is drawn.
#[test]
fn open_fails_on_an_unknown_id_as_thread_does_before_the_screen_is_taken() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let file = home.path().join("checkpoints.sqlite");
    let made = run(memscope(home.path())
        .args(["demo", "--langgraph"])
        .arg(&file));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let langgraph = format!("sqlite://{}", file.display());
    for db in [&db, &langgraph] {
        let open = run(memscope(home.path()).args(["--db", db, "open", "nope"]));
        let thread = run(memscope(home.path()).args(["--db", db, "thread", "nope"]));
        assert_eq!(open.code, Some(3), "{}", open.stderr);
        assert_eq!(open.stdout, "", "nothing is drawn");
        assert_eq!(
            open.stderr, thread.stderr,
            "the message and hint `thread` gives"
        );
        assert!(open.stderr.contains("nope"), "{}", open.stderr);
        let open = json_error(memscope(home.path()).args(["--db", db, "open", "nope"]), 3);
        let thread = json_error(
            memscope(home.path()).args(["--db", db, "thread", "nope"]),
            3,
        );
        assert_eq!(open, thread);
    }
    // A known id (here by its unique prefix) opens the screen, which needs a terminal: piped, it
    // says so and how to print the conversation instead.
    let listed = json_ok(memscope(home.path()).args(["--db", &db, "conversations"]));
    let id = listed["conversations"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let piped = run(memscope(home.path()).args(["--db", &db, "open", &id[..8]]));
    assert_eq!(piped.code, Some(2), "{}", piped.stderr);
    assert!(piped.stderr.contains("in a terminal"), "{}", piped.stderr);
}

/// Agent runtime sessions are asked of the source: on a database whose source keeps none (a
/// LangGraph checkpoint file) `agent-sessions` fails as not in this database, naming what the
/// database is, and writes nothing.
#[test]
fn agent_sessions_of_a_database_that_keeps_none_say_what_it_is() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("checkpoints.sqlite");
    let made = run(memscope(home.path())
        .args(["demo", "--langgraph"])
        .arg(&file));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let before = std::fs::read(&file).unwrap();
    let db = format!("sqlite://{}", file.display());
    let error = json_error(
        memscope(home.path()).args(["--db", &db, "agent-sessions", "any"]),
        3,
    );
    assert_eq!(error["error"]["kind"], "not-in-this-database", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("keeps no agent runtime sessions"),
        "{message}"
    );
    assert!(message.contains("LangGraph"), "{message}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "a read changes no byte"
    );
}

//! One vocabulary for errors and the words around them, through the real binary: an unknown id
//! is `not-found` with the way out on every source, a command or flag for another kind of
//! database has one exit code, and messages say each thing once, in plain words.

mod cli_support;

use std::path::Path;

use cli_support::{memscope, memscope_on, run};
use serde_json::Value;

/// Runs with `--json`, expects `code`, nothing on stdout and one JSON error object on stderr.
fn json_error(command: &mut assert_cmd::Command, code: i32) -> Value {
    let (stdout, stderr) = run(command.arg("--json"), code);
    assert_eq!(stdout, "", "an error prints nothing on stdout");
    let error: Value = serde_json::from_str(stderr.trim())
        .unwrap_or_else(|e| panic!("stderr is one JSON object ({e}): {stderr}"));
    error["error"].clone()
}

fn demo(home: &Path) -> String {
    let db = format!("sqlite://{}", home.join("m.db").display());
    run(memscope(home).args(["demo", "--db", &db]), 0);
    db
}

fn langgraph_demo(home: &Path) -> String {
    let file = home.join("checkpoints.sqlite");
    run(memscope(home).arg("demo").arg("--langgraph").arg(&file), 0);
    format!("sqlite://{}", file.display())
}

/// The demo database as Dify's own: without memscope's meta row it is someone else's database.
fn as_difys_own(home: &Path) {
    let file = home.join("m.db");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use sqlx::{ConnectOptions, Executor};
        let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(file)
            .connect()
            .await
            .unwrap();
        connection
            .execute("delete from memscope_meta")
            .await
            .unwrap();
    });
}

const CONVERSATIONS_HINT: &str = "`memscope conversations`";

#[test]
fn an_unknown_id_is_not_found_with_the_way_out_on_every_source() {
    let home = tempfile::tempdir().unwrap();
    let dify = demo(home.path());
    let langgraph = langgraph_demo(home.path());
    let unknown = "6f1ad3f4-0000-4000-8000-000000000000";
    for (db, command) in [
        (&dify, "thread"),
        (&dify, "history"),
        (&langgraph, "thread"),
        (&langgraph, "history"),
        (&langgraph, "export"),
    ] {
        let error = json_error(memscope_on(home.path(), db).args([command, unknown]), 3);
        assert_eq!(error["kind"], "not-found", "{command} on {db}: {error}");
        assert!(
            error["hint"]
                .as_str()
                .is_some_and(|hint| hint.contains(CONVERSATIONS_HINT)),
            "{command} on {db}: {error}"
        );
    }
    // An unknown checkpoint of a known thread names what lists its checkpoints.
    let error = json_error(
        memscope_on(home.path(), &langgraph).args(["thread", "long-chat", "--leaf", "nope"]),
        3,
    );
    assert_eq!(error["kind"], "not-found", "{error}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("memscope thread long-chat"),
        "{error}"
    );
}

#[test]
fn a_command_or_flag_for_another_kind_of_database_has_one_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let dify = demo(home.path());
    let langgraph = langgraph_demo(home.path());
    // A command that reads what this database does not hold: exit 3, `not-in-this-database`.
    for args in [
        vec!["checkpoints", "prune", "--keep-last", "2"],
        vec!["chat-memory", "list"],
    ] {
        let db = if args[0] == "checkpoints" {
            &dify
        } else {
            &langgraph
        };
        let error = json_error(memscope_on(home.path(), db).args(&args), 3);
        assert_eq!(error["kind"], "not-in-this-database", "{args:?}: {error}");
        assert!(error["hint"].is_string(), "{args:?}: {error}");
    }
    let (stdout, stderr) = run(
        memscope_on(home.path(), &dify).args(["checkpoints", "prune", "--keep-last", "2"]),
        3,
    );
    assert_eq!(stdout, "");
    assert!(stderr.contains("no checkpoint threads"), "{stderr}");
    // A flag of another source's: the command line is wrong, exit 2, as clap's own errors.
    let cases: [(&String, Vec<&str>); 3] = [
        (
            &dify,
            vec![
                "history",
                "038ac7fe-595a-4128-8c27-3692327186f9",
                "--leaf",
                "x",
            ],
        ),
        (&langgraph, vec!["conversations", "--app", "x"]),
        (
            &langgraph,
            vec!["history", "long-chat", "--n-messages", "3"],
        ),
    ];
    for (db, args) in cases {
        let error = json_error(memscope_on(home.path(), db).args(&args), 2);
        assert_eq!(error["kind"], "usage", "{args:?}: {error}");
    }
}

#[test]
fn a_url_missing_its_colon_is_named_not_taken_as_a_file() {
    let home = tempfile::tempdir().unwrap();
    let error = json_error(
        memscope(home.path()).args(["conversations", "--db", "postgresql//u@127.0.0.1/dify"]),
        3,
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("did you mean postgresql://u@127.0.0.1/dify?"),
        "{error}"
    );
    assert!(!message.contains("does not exist"), "not a file: {error}");
    // The forms memscope takes are listed once, in the hint.
    let (_, stderr) = run(
        memscope(home.path()).args(["conversations", "--db", "nosuch://x"]),
        3,
    );
    assert_eq!(stderr.matches("sqlite://PATH").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("mysql://").count(), 1, "{stderr}");
}

#[test]
fn a_failed_sync_of_one_session_is_said_once() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let (stdout, stderr) = run(
        memscope_on(home.path(), &db).args(["mb", "sync", "Support memory", "--session", "nope"]),
        3,
    );
    assert_eq!(stdout, "", "the error is on stderr only");
    assert_eq!(stderr.lines().count(), 1, "said once: {stderr}");
    assert!(stderr.contains("no session"), "{stderr}");
    let error = json_error(
        memscope_on(home.path(), &db).args(["mb", "sync", "Support memory", "--session", "nope"]),
        3,
    );
    assert_eq!(error["kind"], "not-found", "{error}");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::{Command, Stdio};
    let home = tempfile::tempdir().unwrap();
    for args in [["completions", "bash"], ["completions", "zsh"]] {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("memscope"))
            .args(args)
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before reading anything, as `| head -c0` would.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(output.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn a_bad_key_names_its_variable_once() {
    let home = tempfile::tempdir().unwrap();
    let db = langgraph_demo(home.path());
    let (_, stderr) = run(
        memscope_on(home.path(), &db)
            .env("LANGGRAPH_AES_KEY", "short")
            .args(["thread", "long-chat"]),
        3,
    );
    assert_eq!(stderr.matches("LANGGRAPH_AES_KEY").count(), 1, "{stderr}");
    assert!(stderr.contains("it is 5 bytes"), "{stderr}");
}

#[test]
fn a_config_error_inside_a_table_is_placed_on_its_own_line() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("c.toml");
    std::fs::write(
        &config,
        "[tokens]\nmodel = \"gpt-4o\"\n\n[tokens.context_windows]\n\"gpt-4o\" = 128000\n\"mine\" = \"big\"\n",
    )
    .unwrap();
    let (_, stderr) = run(
        memscope(home.path())
            .arg("--config")
            .arg(&config)
            .arg("info"),
        3,
    );
    assert!(
        stderr.contains(&format!(
            "config file {}, line 6, column 1: `tokens.context_windows.mine`",
            config.display()
        )),
        "{stderr}"
    );
}

#[test]
fn an_empty_dify_password_is_shown_empty() {
    let home = tempfile::tempdir().unwrap();
    let env = home.path().join("dify.env");
    std::fs::write(
        &env,
        "DB_USERNAME=postgres\nDB_PASSWORD=\nDB_HOST=127.0.0.1\nDB_PORT=1\nDB_DATABASE=dify\n",
    )
    .unwrap();
    let (stdout, _) = run(
        memscope(home.path())
            .arg("--dify-env")
            .arg(&env)
            .arg("info"),
        3,
    );
    assert!(!stdout.contains("***"), "nothing hidden: {stdout}");
    assert!(
        stdout.contains("postgres://postgres@127.0.0.1:1/dify"),
        "{stdout}"
    );
    let password = stdout
        .lines()
        .find(|line| line.starts_with("DB_PASSWORD"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(password.contains("(empty)"), "{password}");
}

#[test]
fn doctor_without_storage_on_difys_database_says_the_files_were_not_checked() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    as_difys_own(home.path());
    // Another home: memscope's own storage directory (where the demo wrote its files) is not
    // where Dify's files are.
    let elsewhere = tempfile::tempdir().unwrap();
    let (stdout, _) = run(memscope_on(elsewhere.path(), &db).arg("doctor"), 1);
    assert!(!stdout.contains("missing_message_file"), "{stdout}");
    assert!(
        stdout.contains("files not checked: no object storage is configured"),
        "{stdout}"
    );
    // Numbers are grouped in the findings as everywhere else.
    assert!(stdout.contains("is 151,312 tokens"), "{stdout}");
    assert!(stdout.contains("budget of 2,000"), "{stdout}");
    let (stdout, _) = run(
        memscope_on(elsewhere.path(), &db).args(["doctor", "--json"]),
        1,
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert!(report["files_not_checked"].is_string(), "{report}");
    assert!(
        report["counts"]["missing_message_file"].is_null(),
        "{report}"
    );
    // memscope's own demo database keeps its files where memscope put them: checked.
    let fresh = tempfile::tempdir().unwrap();
    let own = demo(fresh.path());
    let (stdout, _) = run(
        memscope_on(fresh.path(), &own).args(["doctor", "--json"]),
        1,
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert!(report["files_not_checked"].is_null(), "{report}");
}

/// PostgreSQL's errors are its message, without the line of its C source sqlx appends.
#[test]
fn a_missing_postgres_database_is_named_without_the_servers_source_line() {
    let Ok(url) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        eprintln!("skipped: set MEMSCOPE_TEST_PG_URL");
        return;
    };
    let base = url.rsplit_once('/').map_or(url.as_str(), |(base, _)| base);
    let missing = format!("{base}/memscope_no_such_database");
    let home = tempfile::tempdir().unwrap();
    let error = json_error(
        memscope(home.path()).args(["conversations", "--db", &missing]),
        3,
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("does not exist"), "{error}");
    assert!(!message.contains("at line"), "{error}");
    assert_eq!(message.matches("does not exist").count(), 1, "{error}");
}

//! memscope's `history` of Google ADK sessions compared with what ADK itself sends the model:
//! `tests/adk/build_sessions.py` builds sessions with google-adk 2.13.0's own Runner, a scripted
//! model (a `BaseLlm` that records each request's contents) and ADK's session services
//! (SqliteSessionService; DatabaseSessionService on SQLite, PostgreSQL and MariaDB), with a coordinator
//! that calls a tool and transfers to a sub-agent, a rewind, a compacting app, a call that never
//! got its response and a session id shared by several users and apps; then it runs one more
//! turn of each and records the contents the answering agent's model was sent. `history --json`
//! (with `--app`/`--user`) must list exactly those contents, each `raw` the content as sent, and
//! name the same agent.
//!
//! The tests need ADK's Python environment: `.ci/adk` installs it and prints its interpreter,
//! which `MEMSCOPE_ADK_PYTHON` names. Without the variable the tests pass and say they were
//! skipped; with `MEMSCOPE_ADK_MARKER_DIR` set, each test that really ran leaves a marker there,
//! so CI can prove they ran. The PostgreSQL test also needs `MEMSCOPE_TEST_PG_URL`, the MariaDB
//! one `MEMSCOPE_TEST_MYSQL_URL`; each creates its own database and drops it.

use std::path::Path;
use std::process::{Command, Output};

#[path = "support/postgres_database.rs"]
mod postgres_database;
use postgres_database::PostgresDatabase;
#[path = "adk/mysql_database.rs"]
mod mysql_database;
use mysql_database::MysqlDatabase;

use serde_json::Value;

const PYTHON_VAR: &str = "MEMSCOPE_ADK_PYTHON";
const MARKER_VAR: &str = "MEMSCOPE_ADK_MARKER_DIR";

fn python() -> Option<String> {
    std::env::var(PYTHON_VAR).ok().filter(|p| !p.is_empty())
}

fn mark(name: &str) {
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(name), "ran").unwrap();
    }
}

/// Runs the build script with `args` and returns the oracle it wrote.
fn build(python: &str, args: &[&str], dir: &Path) -> Value {
    let oracle = dir.join("oracle.json");
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adk/build_sessions.py"))
        .args(args)
        .arg("--out")
        .arg(&oracle)
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env("ADK_DISABLE_TELEMETRY", "1")
        .current_dir(dir)
        .output()
        .expect("ADK's python runs");
    assert!(
        output.status.success(),
        "build_sessions.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(oracle).unwrap()).unwrap()
}

fn memscope(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "--db", url])
        .args(args)
        .output()
        .expect("memscope runs")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "memscope failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every recorded request of the oracle against `history --json` of the same session: the same
/// agent, the same contents in the same order; under a budget that cuts, the same contents, the
/// oldest past the cut.
fn compare_histories(url: &str, oracle: &Value) {
    let sessions = oracle["sessions"].as_array().unwrap();
    for recorded in sessions {
        let (app, user, session) = (
            recorded["app"].as_str().unwrap(),
            recorded["user"].as_str().unwrap(),
            recorded["session"].as_str().unwrap(),
        );
        for budget in ["1000000", "60"] {
            let history = json_of(&memscope(
                url,
                &[
                    "history",
                    session,
                    "--app",
                    app,
                    "--user",
                    user,
                    "--max-tokens",
                    budget,
                ],
            ));
            assert_eq!(
                history["extra"]["agent"], recorded["agent"],
                "{app}/{user}/{session}: the agent ADK's runner continues with"
            );
            let sent: Vec<&Value> = history["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| &m["raw"])
                .collect();
            let expected: Vec<&Value> = recorded["contents"].as_array().unwrap().iter().collect();
            assert_eq!(
                sent, expected,
                "{app}/{user}/{session} with budget {budget}"
            );
            let kept = history["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["kept"] == true)
                .count();
            if budget == "1000000" {
                assert_eq!(kept, expected.len(), "{session}: nothing is cut");
            } else if session == "long" {
                assert!(kept < expected.len(), "{session}: a small budget cuts");
            }
        }
        // Naming the agent the runner picks gives the same contents.
        let agent = recorded["agent"].as_str().unwrap();
        let named = json_of(&memscope(
            url,
            &[
                "history", session, "--app", app, "--user", user, "--agent", agent,
            ],
        ));
        let sent: Vec<&Value> = named["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["raw"])
            .collect();
        let expected: Vec<&Value> = recorded["contents"].as_array().unwrap().iter().collect();
        assert_eq!(sent, expected, "{session} with --agent {agent}");
    }
}

/// `conversations` lists each session with its app and user, its events as messages and its
/// agents; a shared id is ambiguous without `--app`/`--user` (exit 3, naming them); an unknown
/// session exits 3 pointing at the list; an unknown agent fails naming the session's agents.
fn compare_list(url: &str) {
    let listed = json_of(&memscope(url, &["conversations", "--limit", "100"]));
    let rows = listed["conversations"].as_array().unwrap();
    let transfer = rows.iter().find(|r| r["id"] == "transfer").unwrap();
    assert_eq!(transfer["extra"]["app"], "helpdesk");
    assert_eq!(transfer["extra"]["user"], "alice");
    assert_eq!(transfer["extra"]["agents"], "coordinator, specialist");
    assert_eq!(
        transfer["messages"], 6,
        "the user's message and five events of the agents"
    );
    let shared: Vec<&Value> = rows.iter().filter(|r| r["id"] == "shared").collect();
    assert_eq!(shared.len(), 3);
    let bob = json_of(&memscope(url, &["conversations", "--user", "bob"]));
    assert_eq!(bob["conversations"].as_array().unwrap().len(), 1);

    let ambiguous = memscope(url, &["history", "shared"]);
    assert_eq!(ambiguous.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        stderr.contains("billing") && stderr.contains("bob"),
        "the error names the apps and users: {stderr}"
    );
    let unknown = memscope(url, &["history", "no-such-session"]);
    assert_eq!(unknown.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("memscope conversations"));
    let no_agent = memscope(url, &["history", "transfer", "--agent", "nobody"]);
    assert_eq!(no_agent.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&no_agent.stderr);
    assert!(stderr.contains("coordinator, specialist"), "{stderr}");
}

/// `thread` draws the invocations with the transfer and the rewind, and the state as the app
/// sees it; `doctor` finds the call that never got its response.
fn compare_thread_and_doctor(url: &str) {
    let thread = json_of(&memscope(
        url,
        &["thread", "handback", "--app", "helpdesk", "--user", "alice"],
    ));
    let transfers = thread["extra"]["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 2);
    assert_eq!(transfers[0]["from"], "coordinator");
    assert_eq!(transfers[0]["to"], "specialist");
    assert_eq!(transfers[1]["to"], "coordinator");
    let state = &thread["extra"]["state"];
    assert_eq!(state["topic"], "handback");
    assert_eq!(
        state["app:region"], "eu",
        "app state is named as ADK names it"
    );
    assert!(
        state["user:lookups"].as_array().unwrap().len() > 3,
        "user state, merged"
    );
    assert!(
        state
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.starts_with("temp:")),
        "temp: state is never stored"
    );
    let rewind = json_of(&memscope(
        url,
        &["thread", "rewind", "--app", "helpdesk", "--user", "alice"],
    ));
    assert_eq!(rewind["extra"]["rewinds"].as_array().unwrap().len(), 1);
    // Exit 1: findings.
    let doctor = memscope(url, &["doctor"]);
    assert_eq!(
        doctor.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&doctor.stderr)
    );
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(text.contains("call_without_response"), "{text}");
    assert!(text.contains("call_died"), "{text}");
    assert!(
        text.contains("growing_state") && text.contains("user:lookups"),
        "{text}"
    );
}

/// The TUI lists the sessions and opens `handback` from its row, with every stored event and the
/// budget of exactly the contents ADK sent the continuing agent.
fn tui_opens_a_session(url: &str, oracle: &Value) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use memscope::config::{self, Dirs, Overrides};
    use memscope::store::{Access, Store};
    use memscope::tui::App;
    use memscope::tui::state::{LoadStatus, Screen};
    use memscope::tui::theme::Theme;
    use memscope::tui::update::Event;

    async fn settle(app: &mut App, done: impl Fn(&App) -> bool) {
        tokio::time::timeout(std::time::Duration::from_secs(60), async {
            while !done(app) {
                assert!(app.next_job().await, "the job channel closed");
            }
        })
        .await
        .expect("the jobs finished in time");
    }
    let expected = oracle["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == "handback")
        .unwrap()["contents"]
        .as_array()
        .unwrap()
        .len();
    let home = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        data: home.path().join("data"),
        config: home.path().join("config"),
    };
    let overrides = Overrides {
        database_url: Some(url.to_owned()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(url, Access::Auto).await.unwrap();
        let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
        settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
        let rows = &app.state.list.rows;
        let at = rows.iter().position(|r| r.id == "handback").unwrap();
        for _ in 0..at {
            app.handle(Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
        }
        app.handle(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        )));
        assert_eq!(app.state.screen, Screen::Session);
        settle(&mut app, |a| {
            a.state
                .session
                .as_ref()
                .is_some_and(|s| s.budget_status == LoadStatus::Loaded)
        })
        .await;
        let session = app.state.session.as_ref().unwrap();
        assert_eq!(session.key.id, "handback");
        let senders: Vec<&str> = session
            .view
            .as_ref()
            .unwrap()
            .messages
            .iter()
            .map(|m| m.sender.as_str())
            .collect();
        assert!(senders.contains(&"specialist"), "{senders:?}");
        let budget = session.budget.as_ref().unwrap();
        assert_eq!(budget.view.history.messages.len(), expected);
        app.shutdown().await;
    });
}

/// The file and its side files, byte for byte, and which side files exist.
fn snapshot(file: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let path = format!("{}{suffix}", file.display());
            (path.clone(), std::fs::read(&path).ok())
        })
        .collect()
}

fn sqlite_case(python: &str, service: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.db");
    let oracle = match service {
        "sqlite" => build(python, &["--sqlite", file.to_str().unwrap()], dir.path()),
        _ => build(
            python,
            &[
                "--database",
                &format!("sqlite+aiosqlite:///{}", file.display()),
            ],
            dir.path(),
        ),
    };
    assert_eq!(
        oracle["sessions"].as_array().unwrap().len(),
        10,
        "every session recorded"
    );
    let before = snapshot(&file);
    let url = format!("sqlite://{}", file.display());
    compare_histories(&url, &oracle);
    compare_list(&url);
    compare_thread_and_doctor(&url);
    assert_eq!(snapshot(&file), before, "a read changed {}", file.display());
}

#[test]
fn sqlite_session_service_histories_are_what_adk_sends() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    sqlite_case(&python, "sqlite");
    mark("sqlite_session_service_histories_are_what_adk_sends");
}

#[test]
fn database_session_service_on_sqlite_histories_are_what_adk_sends() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    sqlite_case(&python, "database");
    mark("database_session_service_on_sqlite_histories_are_what_adk_sends");
}

#[test]
fn database_session_service_on_postgres_histories_are_what_adk_sends() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        eprintln!("ADK test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    };
    let database = PostgresDatabase::create(admin, "adk");
    let dir = tempfile::tempdir().unwrap();
    let adk_url = database
        .url
        .replacen("postgres://", "postgresql+asyncpg://", 1);
    let oracle = build(&python, &["--database", &adk_url], dir.path());
    assert_eq!(
        oracle["sessions"].as_array().unwrap().len(),
        10,
        "every session recorded"
    );
    compare_histories(&database.url, &oracle);
    compare_list(&database.url);
    compare_thread_and_doctor(&database.url);
    mark("database_session_service_on_postgres_histories_are_what_adk_sends");
}

/// DatabaseSessionService on MariaDB (through SQLAlchemy's aiomysql driver): `event_data` a
/// `LONGTEXT`, instants `DATETIME(6)`, ids compared under the database's case-insensitive
/// collation. The TUI opens a session there too. memscope's session on MySQL is read-only; the
/// dump proves the reads wrote nothing.
#[test]
fn database_session_service_on_mysql_histories_are_what_adk_sends() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_MYSQL_URL") else {
        eprintln!("ADK test skipped (MEMSCOPE_TEST_MYSQL_URL is not set)");
        return;
    };
    let database = MysqlDatabase::create(&admin, "adk");
    let dir = tempfile::tempdir().unwrap();
    let adk_url = database.url.replacen("mysql://", "mysql+aiomysql://", 1);
    let oracle = build(&python, &["--database", &adk_url], dir.path());
    assert_eq!(
        oracle["sessions"].as_array().unwrap().len(),
        10,
        "every session recorded"
    );
    let before = database.dump();
    assert!(
        before.contains("`event_data` longtext"),
        "ADK's MySQL column types"
    );
    compare_histories(&database.url, &oracle);
    compare_list(&database.url);
    compare_thread_and_doctor(&database.url);
    tui_opens_a_session(&database.url, &oracle);
    assert_eq!(database.dump(), before, "a read changed {}", database.url);
    mark("database_session_service_on_mysql_histories_are_what_adk_sends");
}

/// `demo --adk` writes a file ADK reads: every session's next turn sends the answering agent's
/// model what memscope's `history` lists, and ADK's runner picks the agent memscope names.
#[test]
fn the_demo_file_is_read_by_adk_as_memscope_reads_it() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.db");
    let report = json_of(
        &Command::new(env!("CARGO_BIN_EXE_memscope"))
            .args(["--json", "demo", "--adk"])
            .arg(&file)
            .output()
            .expect("memscope runs"),
    );
    assert_eq!(report["sessions"], 3);
    let oracle = build(
        &python,
        &["--read-sqlite", file.to_str().unwrap()],
        dir.path(),
    );
    let before = snapshot(&file);
    let agents: Vec<&str> = oracle["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents.len(), 3);
    assert!(
        agents.contains(&"specialist"),
        "the transfer's sub-agent continues its session"
    );
    let url = format!("sqlite://{}", file.display());
    compare_histories(&url, &oracle);
    assert_eq!(snapshot(&file), before, "a read changed {}", file.display());
    mark("the_demo_file_is_read_by_adk_as_memscope_reads_it");
}

/// The database service's old schema, written by ADK 2.13 itself to a database that has those
/// tables: the pickled actions are never loaded, and `history` says so in one line; every
/// session whose contents do not hang on its actions reads exactly as ADK sends it, and the
/// two that do (a rewind, a compaction: both live only in the pickles) are the ones that differ.
#[test]
fn the_old_schemas_pickles_are_never_loaded_and_the_rest_is_read() {
    let Some(python) = python() else {
        eprintln!("ADK test skipped ({PYTHON_VAR} is not set; .ci/adk sets it up)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.db");
    let oracle = build(
        &python,
        &[
            "--database-v0",
            &format!("sqlite+aiosqlite:///{}", file.display()),
        ],
        dir.path(),
    );
    let before = snapshot(&file);
    let url = format!("sqlite://{}", file.display());
    let mut differing = Vec::new();
    for recorded in oracle["sessions"].as_array().unwrap() {
        let (app, user, session) = (
            recorded["app"].as_str().unwrap(),
            recorded["user"].as_str().unwrap(),
            recorded["session"].as_str().unwrap(),
        );
        let history = json_of(&memscope(
            &url,
            &["history", session, "--app", app, "--user", user],
        ));
        let warnings = history["warnings"].to_string();
        assert!(
            warnings.contains("Python pickles, which memscope never loads"),
            "{warnings}"
        );
        assert_eq!(history["extra"]["agent"], recorded["agent"], "{session}");
        let sent: Vec<&Value> = history["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["raw"])
            .collect();
        let expected: Vec<&Value> = recorded["contents"].as_array().unwrap().iter().collect();
        if sent != expected {
            differing.push(session.to_owned());
        }
    }
    assert_eq!(differing, ["rewind", "compacted"]);
    let doctor = memscope(&url, &["doctor"]);
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("pickled_actions"));
    assert_eq!(snapshot(&file), before, "a read changed {}", file.display());
    mark("the_old_schemas_pickles_are_never_loaded_and_the_rest_is_read");
}

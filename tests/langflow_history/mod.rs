//! What a Langflow Agent's chat memory feeds the model, compared with Langflow itself: a database
//! of chat sessions built with Langflow's own message functions
//! (`tests/langflow/agent_history_db.py`), and for each argument combination the list Langflow's
//! `aget_agent_chat_history` returned, message by message, against memscope's computation over
//! the rows it reads (`sources::langflow` and `memory::agent_history`).

use memscope::memory::agent_history::{AgentHistoryArgs, LeftOut, agent_history};
use memscope::sources::langflow::conversations::conversations;
use memscope::sources::langflow::messages::{session_flows, session_messages};
use memscope::store::{Access, Store};
use std::sync::LazyLock;

use super::*;

mod export;
mod tui;

/// A database of chat sessions Langflow built, with what its memory read returned.
struct Sessions {
    url: String,
    oracle: Value,
    _dir: tempfile::TempDir,
}

fn sessions(database_is_sqlite: bool) -> Option<&'static Sessions> {
    static SQLITE: OnceLock<Option<Sessions>> = OnceLock::new();
    static POSTGRES: OnceLock<Option<Sessions>> = OnceLock::new();
    let cell = if database_is_sqlite {
        &SQLITE
    } else {
        &POSTGRES
    };
    cell.get_or_init(|| build_sessions(database_is_sqlite))
        .as_ref()
}

fn build_sessions(database_is_sqlite: bool) -> Option<Sessions> {
    let python = python()?;
    let dir = tempfile::tempdir().unwrap();
    let oracle_file = dir.path().join("oracle.json");
    let (url, target) = if database_is_sqlite {
        let file = dir.path().join("langflow.db");
        let target = vec!["--sqlite".to_owned(), file.display().to_string()];
        (format!("sqlite://{}", file.display()), target)
    } else {
        let url = new_postgres_database("_hist")?;
        (url.clone(), vec!["--postgres".to_owned(), url])
    };
    let output = Process::new(&python)
        .arg(script("agent_history_db.py"))
        .args(&target)
        .arg("--kb-dir")
        .arg(dir.path().join("kb"))
        .arg("--out")
        .arg(&oracle_file)
        .output()
        .expect("Langflow's python runs");
    assert!(
        output.status.success(),
        "agent_history_db.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let oracle = serde_json::from_str(&std::fs::read_to_string(&oracle_file).unwrap()).unwrap();
    Some(Sessions {
        url,
        oracle,
        _dir: dir,
    })
}

/// Runs `test` on the sessions database of one backend, or says why it was skipped.
fn on_sessions(name: &str, database_is_sqlite: bool, test: impl FnOnce(&Sessions, &Store)) {
    if python().is_none() {
        eprintln!("{name}: Langflow test skipped ({PYTHON_VAR} is not set)");
        return;
    }
    if !database_is_sqlite && std::env::var("MEMSCOPE_TEST_PG_URL").is_err() {
        eprintln!("{name}: Langflow test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    }
    let built = sessions(database_is_sqlite).expect("the Langflow database was built");
    let store = block_on(Store::open(&built.url, Access::ReadOnly)).unwrap();
    test(built, &store);
    block_on(store.close());
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        let backend = if database_is_sqlite {
            "sqlite"
        } else {
            "postgres"
        };
        std::fs::write(Path::new(&dir).join(format!("{name}-{backend}")), "ran").unwrap();
    }
}

/// The runtime the store was opened on, which its pool's connections belong to.
static RUNTIME: LazyLock<tokio::runtime::Runtime> =
    LazyLock::new(|| tokio::runtime::Runtime::new().unwrap());

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    RUNTIME.block_on(future)
}

fn history_equals_langflows(built: &Sessions, store: &Store) {
    let cases = built.oracle["cases"].as_array().unwrap();
    assert!(cases.len() >= 16, "the oracle has its cases");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let session_id = case["session_id"].as_str().unwrap();
        let rows = block_on(session_messages(store, session_id, None)).unwrap();
        let args = AgentHistoryArgs {
            flow_id: Some(case["flow_id"].as_str().unwrap().to_owned()),
            session_id: session_id.to_owned(),
            context_id: case["context_id"].as_str().map(str::to_owned),
            owner: Some(case["user_id"].as_str().unwrap().to_owned()),
            n_messages: case["n_messages"].as_u64().map(|n| n as u32),
        };
        let history = agent_history(&rows, &args);
        let ids: Vec<&str> = history.messages.iter().map(|m| m.id.as_str()).collect();
        let texts: Vec<&str> = history.messages.iter().map(|m| m.text.as_str()).collect();
        let expected_ids: Vec<&str> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let expected_texts: Vec<&str> = case["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(texts, expected_texts, "{name}: texts");
        assert_eq!(ids, expected_ids, "{name}: ids");
        let counted: usize = history.left_out.iter().map(|(_, n)| n).sum();
        assert_eq!(
            counted + ids.len(),
            rows.len(),
            "{name}: every row fed or counted"
        );
    }
}

#[test]
fn langflow_agent_history_equals_langflows_own_sqlite() {
    on_sessions("agent_history", true, history_equals_langflows);
}

#[test]
fn langflow_agent_history_equals_langflows_own_postgres() {
    on_sessions("agent_history", false, history_equals_langflows);
}

fn what_is_left_out_is_counted(built: &Sessions, store: &Store) {
    let support = built.oracle["flows"]["Support Chat"].as_str().unwrap();
    let owner = built.oracle["users"]["owner"].as_str().unwrap();
    let rows = block_on(session_messages(store, "New Session 0", None)).unwrap();
    let history = agent_history(
        &rows,
        &AgentHistoryArgs {
            flow_id: Some(support.to_owned()),
            session_id: "New Session 0".into(),
            context_id: None,
            owner: Some(owner.to_owned()),
            n_messages: Some(4),
        },
    );
    // Sales Chat's two and the other user's flow's one; the other user's row in Support Chat;
    // the two rows with the error flag; the window of 4 out of 13.
    assert_eq!(history.left_out(LeftOut::OtherFlow), 3);
    assert_eq!(history.left_out(LeftOut::OtherOwner), 1);
    assert_eq!(history.left_out(LeftOut::ErrorFlag), 2);
    assert_eq!(history.left_out(LeftOut::PastWindow), 9);
    let fed = agent_history(
        &rows,
        &AgentHistoryArgs {
            n_messages: Some(100),
            flow_id: Some(support.to_owned()),
            session_id: "New Session 0".into(),
            context_id: None,
            owner: Some(owner.to_owned()),
        },
    );
    let error_texts: Vec<&str> = rows
        .iter()
        .filter(|m| fed.error_text_fed.contains(&m.id))
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(error_texts, vec!["Error: rate limited"]);
}

#[test]
fn langflow_agent_history_counts_what_it_leaves_out_sqlite() {
    on_sessions("agent_history_left_out", true, what_is_left_out_is_counted);
}

fn conversations_are_one_per_flow_and_session(built: &Sessions, store: &Store) {
    let all = block_on(conversations(store, None, 0, 50)).unwrap();
    assert!(!all.has_more);
    let shared: Vec<_> = all
        .conversations
        .iter()
        .filter(|c| c.id == "New Session 0")
        .map(|c| (c.flow.clone().unwrap(), c.messages))
        .collect();
    assert_eq!(shared.len(), 3, "{shared:?}");
    assert!(shared.contains(&("Support Chat".into(), 16)), "{shared:?}");
    assert!(shared.contains(&("Sales Chat".into(), 2)), "{shared:?}");
    assert!(shared.contains(&("Their Chat".into(), 1)), "{shared:?}");
    let long = all.conversations.iter().find(|c| c.id == "long").unwrap();
    assert_eq!(long.messages, 130);
    assert_eq!(
        long.flow_id.as_deref(),
        built.oracle["flows"]["Sales Chat"].as_str()
    );
    assert_eq!(
        long.owner.as_deref(),
        built.oracle["users"]["owner"].as_str()
    );
    assert_eq!(long.owner_name.as_deref(), Some("history-owner"));
    // Newest activity first: "long" was written last.
    assert_eq!(all.conversations[0].id, "long");

    let page = block_on(conversations(store, None, 1, 2)).unwrap();
    assert_eq!(page.conversations, all.conversations[1..3].to_vec());
    assert!(page.has_more);

    let by_text = block_on(conversations(store, Some("TIED 1"), 0, 50)).unwrap();
    let found: Vec<_> = by_text
        .conversations
        .iter()
        .map(|c| c.flow.clone())
        .collect();
    assert_eq!(found, vec![Some("Support Chat".to_owned())]);
    let by_session = block_on(conversations(store, Some("ong"), 0, 50)).unwrap();
    assert_eq!(by_session.conversations.len(), 1);
    let literal = block_on(conversations(store, Some("%"), 0, 50)).unwrap();
    assert!(literal.conversations.is_empty());

    let messages = block_on(session_messages(store, "long", None)).unwrap();
    let texts: Vec<String> = messages.iter().map(|m| m.text.clone()).collect();
    let expected: Vec<String> = (0..130).map(|n| format!("long {n}")).collect();
    assert_eq!(texts, expected);
    let flows = block_on(session_flows(store, "New Session 0")).unwrap();
    assert!(flows.choose(None).is_err());
    let sales = flows.choose(Some("Sales Chat")).unwrap();
    assert_eq!(sales.messages, 2);
}

#[test]
fn langflow_conversations_are_one_per_flow_and_session_sqlite() {
    on_sessions(
        "langflow_conversations",
        true,
        conversations_are_one_per_flow_and_session,
    );
}

#[test]
fn langflow_conversations_are_one_per_flow_and_session_postgres() {
    on_sessions(
        "langflow_conversations",
        false,
        conversations_are_one_per_flow_and_session,
    );
}

fn memscope_on(built: &Sessions, home: &Path) -> Command {
    let mut command = Command::cargo_bin("memscope").unwrap();
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("MEMSCOPE_DATABASE_URL")
        .args(["--db", &built.url]);
    command
}

/// The messages a history leaves out for `reason`, 0 when it names none.
fn left_out(history: &Value, reason: &str) -> u64 {
    history["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reason"] == reason)
        .map_or(0, |r| r["messages"].as_u64().unwrap())
}

fn cli_history_is_langflows(built: &Sessions, _store: &Store) {
    let home = tempfile::tempdir().unwrap();
    let shared = memscope_on(built, home.path())
        .args(["history", "New Session 0"])
        .output()
        .unwrap();
    assert_eq!(shared.status.code(), Some(3));
    let said = String::from_utf8_lossy(&shared.stderr);
    for flow in ["Support Chat", "Sales Chat", "Their Chat"] {
        assert!(said.contains(flow), "{said}");
    }
    let case = |name: &str| {
        built.oracle["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    for (name, n) in [("support window 4", "4"), ("support default", "100")] {
        let report = json(memscope_on(built, home.path()).args([
            "history",
            "New Session 0",
            "--flow",
            "Support Chat",
            "--n-messages",
            n,
        ]));
        let ids: Vec<&Value> = report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["id"])
            .collect();
        let oracle = case(name);
        let expected: Vec<&Value> = oracle["ids"].as_array().unwrap().iter().collect();
        assert_eq!(ids, expected, "{name}");
    }
    let off = json(memscope_on(built, home.path()).args([
        "history",
        "New Session 0",
        "--flow",
        built.oracle["flows"]["Sales Chat"].as_str().unwrap(),
        "--n-messages",
        "0",
    ]));
    assert_eq!(off["messages"], serde_json::json!([]));
    assert_eq!(left_out(&off, "memory_off"), 2);
    let listed = json(memscope_on(built, home.path()).args(["conversations", "--search", "tied"]));
    assert_eq!(listed["conversations"].as_array().unwrap().len(), 1);
}

#[test]
fn langflow_cli_history_is_langflows_sqlite() {
    on_sessions("langflow_cli_history", true, cli_history_is_langflows);
}

fn doctor_finds_what_the_agents_memory_hides(built: &Sessions, _store: &Store) {
    let home = tempfile::tempdir().unwrap();
    let output = memscope_on(built, home.path())
        .args(["doctor", "--budget", "1000000", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "findings exit 1: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    let counts = &report["counts"];
    assert_eq!(
        counts,
        &serde_json::json!({"shared_session": 1, "longer_than_window": 1, "error_text_fed": 1}),
        "{report}"
    );
    assert_eq!(report["messages"], 149, "{report}");
    let findings = report["findings"].as_array().unwrap();
    let find = |kind: &str| findings.iter().find(|f| f["kind"] == kind).unwrap();
    assert_eq!(
        find("shared_session")["extra"]["flows"],
        serde_json::json!(["Sales Chat", "Support Chat", "Their Chat"])
    );
    let long = find("longer_than_window");
    assert_eq!(
        (
            &long["conversation"],
            &long["extra"]["flow"],
            &long["extra"]["forgotten"]
        ),
        (
            &serde_json::json!("long"),
            &serde_json::json!("Sales Chat"),
            &serde_json::json!(30)
        )
    );
    // The error text Langflow's own read returned for Support Chat's session.
    let fed = find("error_text_fed");
    assert_eq!(fed["extra"]["flow"], "Support Chat");
    let support = built.oracle["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "support default")
        .unwrap();
    let ids = fed["extra"]["message_ids"].as_array().unwrap();
    assert_eq!(ids.len(), 1);
    let position = support["ids"]
        .as_array()
        .unwrap()
        .iter()
        .position(|id| id == &ids[0])
        .expect("the flagged message is in what Langflow feeds");
    assert_eq!(support["texts"][position], "Error: rate limited");

    let text = memscope_on(built, home.path())
        .args(["doctor", "--budget", "1000000"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&text.stdout);
    assert!(
        said.contains("session \"New Session 0\" is used by 3 flows"),
        "{said}"
    );
}

#[test]
fn langflow_doctor_finds_what_the_agents_memory_hides_sqlite() {
    on_sessions(
        "langflow_doctor",
        true,
        doctor_finds_what_the_agents_memory_hides,
    );
}

#[test]
fn langflow_doctor_finds_what_the_agents_memory_hides_postgres() {
    on_sessions(
        "langflow_doctor",
        false,
        doctor_finds_what_the_agents_memory_hides,
    );
}

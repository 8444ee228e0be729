//! memscope's writes on databases Langflow made, checked by Langflow's own functions afterwards:
//! its start-up model check, its mismatch check, the pending runs and messages it computes, a
//! new flush it would start (no `DuplicateJobError`), the owner's messages it reads, and no job
//! left `in_progress`. The embeddings come from `tests/langflow/embed_server.py`, which answers
//! with the embedder the Langflow build used.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::*;

mod parity;
mod race;
mod tui;

/// The oracle's embedder behind an OpenAI-compatible endpoint, stopped when dropped.
pub(crate) struct EmbedServer {
    child: Child,
    url: String,
}

impl EmbedServer {
    pub(crate) fn start(args: &[&str]) -> EmbedServer {
        let mut child = Process::new(python().unwrap())
            .arg(script("embed_server.py"))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the embeddings server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            line.starts_with("http://"),
            "embeddings server said {line:?}"
        );
        EmbedServer {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for EmbedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// memscope with `--write` on the database and the embeddings server of `embed`.
pub(crate) fn writer(built: &Built, home: &Path, embed: &EmbedServer) -> Command {
    let mut command = memscope(built, home);
    command
        .env("MEMSCOPE_EMBEDDINGS_URL", &embed.url)
        .env("MEMSCOPE_EMBEDDINGS_DIMENSION", "16")
        .arg("--write");
    command
}

pub(crate) fn base_named<'a>(said: &'a Value, name: &str) -> &'a Value {
    said["memory_bases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no base {name} in {said}"))
}

pub(crate) fn session_of<'a>(base: &'a Value, session: &str) -> &'a Value {
    base["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == session)
        .unwrap_or_else(|| panic!("no session {session} in {base}"))
}

/// What every write must leave: Langflow starts, sees no mismatch, would start a new flush of
/// every session, and finds no job left running.
pub(crate) fn langflow_accepts(said: &Value) {
    assert_eq!(said["startup_model_check"]["ok"], true, "{said}");
    assert_eq!(said["schema_health"]["ok"], true, "{said}");
    assert!(said.get("observe_error").is_none(), "{said}");
    assert_eq!(said["jobs_left_active"], serde_json::json!([]), "{said}");
    for base in said["memory_bases"].as_array().unwrap() {
        assert_eq!(base["check_mismatch"], false, "{}", base["name"]);
        assert_eq!(
            base["chunk_count"], base["knowledge_base"]["chunks"],
            "the knowledge-base row's figure of {}",
            base["name"]
        );
        if let Some(search) = base.get("search") {
            assert_eq!(
                search["hits"], base["chunk_count"],
                "Langflow's search of {} finds every chunk: {search}",
                base["name"]
            );
        }
        for session in base["sessions"].as_array().unwrap() {
            assert_eq!(
                session["can_start_flush"]["ok"], true,
                "{}/{}: {}",
                base["name"], session["session_id"], session["can_start_flush"]
            );
        }
    }
}

/// memscope's `mb search` of a base, read-only (no `--write`), as JSON hits.
fn search(
    built: &Built,
    home: &Path,
    embed: &EmbedServer,
    base: &str,
    query: &str,
    top_k: i64,
) -> Vec<Value> {
    let output = memscope(built, home)
        .env("MEMSCOPE_EMBEDDINGS_URL", &embed.url)
        .env("MEMSCOPE_EMBEDDINGS_DIMENSION", "16")
        .args([
            "--json",
            "mb",
            "search",
            base,
            query,
            "--top-k",
            &top_k.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mb search: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hits: Value = serde_json::from_slice(&output.stdout).unwrap();
    hits.as_array().expect("a list of hits").clone()
}

/// memscope searches the knowledge base where Langflow keeps it: the chunks Langflow's own
/// search finds, and a query with a chunk's very text finds that chunk first.
fn search_ranks_as_langflow(built: &Built, home: &Path, embed: &EmbedServer, said: &Value) {
    let count = said["chunk_count"].as_i64().unwrap();
    let everything = search(built, home, embed, "Manual Archive", "memory", count);
    assert_eq!(everything.len() as i64, count);
    let mut found: Vec<&str> = everything
        .iter()
        .map(|hit| hit["message_id"].as_str().unwrap())
        .collect();
    found.sort_unstable();
    found.dedup();
    let langflows: Vec<&str> = said["search"]["message_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(
        found, langflows,
        "memscope's hits against Langflow's search"
    );
    let distances: Vec<f64> = everything
        .iter()
        .map(|h| h["distance"].as_f64().unwrap())
        .collect();
    assert!(
        distances.windows(2).all(|w| w[0] <= w[1]),
        "nearest first: {distances:?}"
    );
    let last = everything.last().unwrap();
    let exact = search(
        built,
        home,
        embed,
        "Manual Archive",
        last["content"].as_str().unwrap(),
        1,
    );
    assert_eq!(exact[0]["chunk_id"], last["chunk_id"], "{exact:?}");
    assert!(exact[0]["distance"].as_f64().unwrap() < 1e-4, "{exact:?}");
}

/// A sync of a session, a capture that reaches the threshold, a cancelled sync and a sync whose
/// embedder is down: Langflow takes the database as its own after each.
pub(crate) fn writes_are_accepted_by_langflow(built: &Built) {
    let home = tempfile::tempdir().unwrap();
    let embed = EmbedServer::start(&[]);
    let before = langflow_says(built);
    let archive_chunks = base_named(&before, "Manual Archive")["chunk_count"]
        .as_i64()
        .unwrap();

    // Sync one session: its pending messages go into the KB, Langflow sees none pending.
    writer(built, home.path(), &embed)
        .args([
            "mb",
            "sync",
            "Manual Archive",
            "--session",
            "support-failed",
        ])
        .assert()
        .success();
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let archive = base_named(&said, "Manual Archive");
    let session = session_of(archive, "support-failed");
    assert_eq!(session["pending_message_ids"], serde_json::json!([]));
    assert_eq!(session["total_processed"], 2);
    assert_eq!(archive["chunk_count"], archive_chunks + 2);
    // Langflow's own search finds the chunks memscope wrote.
    let synced = built.oracle["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|run| run["session_id"] == "support-failed")
        .flat_map(|run| run["message_ids"].as_array().unwrap().iter());
    let found = archive["search"]["message_ids"].as_array().unwrap();
    for message in synced {
        assert!(
            found.contains(message),
            "{message} in {}",
            archive["search"]
        );
    }

    search_ranks_as_langflow(built, home.path(), &embed, archive);

    // Capture a run into a new session: the owner reads it, Support Memory (threshold 2)
    // ingests at the second run.
    let input = home.path().join("run.json");
    std::fs::write(
        &input,
        r#"[{"sender": "User", "text": "Do you ship abroad?"},
            {"sender": "Machine", "text": "Yes, to 40 countries."}]"#,
    )
    .unwrap();
    for _ in 0..2 {
        writer(built, home.path(), &embed)
            .args([
                "capture",
                "--flow",
                "Support Chat",
                "--session",
                "support-new",
            ])
            .arg("--input")
            .arg(&input)
            .assert()
            .success();
    }
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let owner = built.oracle["users"]["owner"].as_str().unwrap();
    let read = said["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["session_id"] == "support-new" && m["user_id"] == owner)
        .expect("the owner reads the captured session");
    assert_eq!(read["ids"].as_array().unwrap().len(), 4, "{read}");
    let support = session_of(base_named(&said, "Support Memory"), "support-new");
    assert_eq!(support["pending_runs"], 0, "{support}");
    assert_eq!(support["pending_message_ids"], serde_json::json!([]));
    assert_eq!(support["total_processed"], 4);

    cancelled_sync_leaves_nothing(built, home.path());
    failed_sync_leaves_nothing(built, home.path());
}

/// A sync cancelled with `mb cancel` while it embeds ends `cancelled` with nothing written.
fn cancelled_sync_leaves_nothing(built: &Built, home: &Path) {
    let slow = EmbedServer::start(&["--delay", "8"]);
    let chunks = |said: &Value| base_named(said, "Manual Archive")["chunk_count"].clone();
    let before = chunks(&langflow_says(built));
    let (mut child, running) = slow_sync(built, home, &slow, "support-cancelled");
    memscope(built, home)
        .args(["--write", "mb", "cancel", &running])
        .assert()
        .success();
    let status = child.wait().unwrap();
    assert!(!status.success(), "a cancelled sync reports it");
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let job = said["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == running.as_str())
        .unwrap();
    assert_eq!(job["status"], "cancelled", "{job}");
    assert_eq!(chunks(&said), before);
    let session = session_of(base_named(&said, "Manual Archive"), "support-cancelled");
    assert_eq!(session["pending_message_ids"].as_array().unwrap().len(), 2);
}

/// Starts `mb sync` of a Manual Archive session behind `slow`, and waits until its job runs:
/// the process and the job's id.
fn slow_sync(built: &Built, home: &Path, slow: &EmbedServer, session: &str) -> (Child, String) {
    slow_sync_in(built, home, slow, "Manual Archive", session)
}

/// Starts `mb sync` of a session of `base` behind `slow`, and waits until its job runs.
#[allow(
    clippy::zombie_processes,
    reason = "the process is returned, and its caller waits for it"
)]
fn slow_sync_in(
    built: &Built,
    home: &Path,
    slow: &EmbedServer,
    base: &str,
    session: &str,
) -> (Child, String) {
    let mut sync = Process::new(env!("CARGO_BIN_EXE_memscope"));
    sync.env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env("LANGFLOW_KNOWLEDGE_BASES_DIR", &built.kb_dir)
        .env_remove("MEMSCOPE_DATABASE_URL")
        .env(PGVECTOR_VAR, built.pgvector.as_deref().unwrap_or(""))
        .env("MEMSCOPE_EMBEDDINGS_URL", &slow.url)
        .env("MEMSCOPE_EMBEDDINGS_DIMENSION", "16")
        .args(["--db", &built.url, "--write"])
        .args(["mb", "sync", base, "--session", session])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = sync.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = json(memscope(built, home).args(["mb", "jobs", base]));
        if let Some(job) = jobs
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["status"] == "in_progress")
        {
            return (child, job["job_id"].as_str().unwrap().to_owned());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the sync never started: {jobs}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A sync killed while it embeds leaves a job whose process is gone: the next `mb jobs` with
/// `--write` fails it as Langflow's start-up sweep would (`worker_lost`), and Langflow then
/// finds no job running and would start a new flush of the session.
#[test]
fn langflow_a_killed_sync_leaves_no_job_running() {
    on_langflow("killed_sync", Backend::Sqlite, |built| {
        let copy = sqlite_copy(built);
        let home = tempfile::tempdir().unwrap();
        let slow = EmbedServer::start(&["--delay", "30"]);
        let (mut child, running) = slow_sync(&copy, home.path(), &slow, "support-cancelled");
        child.kill().unwrap();
        child.wait().unwrap();
        memscope(&copy, home.path())
            .args(["--write", "mb", "jobs"])
            .assert()
            .success();
        let said = langflow_says_probing(&copy, true);
        langflow_accepts(&said);
        let job = said["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job_id"] == running.as_str())
            .unwrap();
        assert_eq!(job["status"], "failed", "{job}");
    });
}

/// A sync whose embedder is down fails: its job ends `failed`, the KB and cursor are as before.
fn failed_sync_leaves_nothing(built: &Built, home: &Path) {
    let down = EmbedServer::start(&["--fail"]);
    let before = langflow_says(built);
    let output = writer(built, home, &down)
        .args(["mb", "sync", "Research Notes", "--session", "support-never"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let failed: Vec<&Value> = said["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["status"] == "failed")
        .collect();
    let failed_before = before["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["status"] == "failed")
        .count();
    assert_eq!(failed.len(), failed_before + 1, "{failed:?}");
    let notes = |said: &Value| {
        let base = base_named(said, "Research Notes");
        let session = session_of(base, "support-never");
        [
            base["chunk_count"].clone(),
            session["cursor_id"].clone(),
            session["total_processed"].clone(),
            session["pending_runs"].clone(),
            session["pending_message_ids"].clone(),
        ]
    };
    assert_eq!(notes(&said), notes(&before));
}

#[test]
fn langflow_writes_are_accepted_by_langflow_sqlite() {
    on_langflow("writes_accepted", Backend::Sqlite, |built| {
        writes_are_accepted_by_langflow(&sqlite_copy(built))
    });
}

#[test]
fn langflow_writes_are_accepted_by_langflow_postgres() {
    on_langflow("writes_accepted", Backend::Postgres, |_| {
        // A database of its own: the shared one is read by the other tests meanwhile.
        let own = build(Backend::Postgres).expect("the Langflow database was built");
        writes_are_accepted_by_langflow(&own)
    });
}

/// Regenerate clears the cursors and records as Langflow's does, empties the store and
/// re-ingests every session: Langflow sees every session synced and the store full again.
fn regenerate_is_accepted_by_langflow(built: &Built) {
    let home = tempfile::tempdir().unwrap();
    let embed = EmbedServer::start(&[]);
    writer(built, home.path(), &embed)
        .args(["mb", "regenerate", "Support Memory", "--yes"])
        .assert()
        .success();
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let base = base_named(&said, "Support Memory");
    for session in base["sessions"].as_array().unwrap() {
        assert_eq!(
            session["pending_message_ids"],
            serde_json::json!([]),
            "{session}"
        );
    }
    assert!(base["chunk_count"].as_i64().unwrap() > 0);
}

#[test]
fn langflow_regenerate_is_accepted_by_langflow() {
    on_langflow("regenerate_accepted", Backend::Sqlite, |built| {
        regenerate_is_accepted_by_langflow(&sqlite_copy(built))
    });
}

#[test]
fn langflow_regenerate_is_accepted_by_langflow_postgres() {
    on_langflow("regenerate_accepted", Backend::Postgres, |_| {
        // A database of its own: the shared one is read by the other tests meanwhile.
        let own = build(Backend::Postgres).expect("the Langflow database was built");
        regenerate_is_accepted_by_langflow(&own)
    });
}

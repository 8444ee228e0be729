//! memscope on databases Langflow 1.13 made itself: its migrations, its memory-base service, its
//! message functions and its own ingestion task (`tests/langflow/build_db.py`). What memscope
//! shows is compared with what Langflow's own functions computed on the same database (the
//! oracle the build writes), and after a change Langflow's functions are asked again
//! (`tests/langflow/verify_db.py`).
//!
//! The Langflow tests need Langflow's Python environment: `.ci/langflow` installs it and prints
//! its interpreter, which `MEMSCOPE_LANGFLOW_PYTHON` names. Without the variable the tests pass
//! and say they were skipped; with `MEMSCOPE_LANGFLOW_MARKER_DIR` set, each test that really ran
//! leaves a marker there, so CI can prove they ran. The PostgreSQL builds also need
//! `MEMSCOPE_TEST_PG_URL`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::Value;

mod langflow_bases;
mod langflow_history;
mod langflow_pgvector;
mod langflow_writes;

const PYTHON_VAR: &str = "MEMSCOPE_LANGFLOW_PYTHON";
const MARKER_VAR: &str = "MEMSCOPE_LANGFLOW_MARKER_DIR";

/// A database Langflow built, with its knowledge-bases directory and the oracle.
struct Built {
    url: String,
    /// The SQLite file, for the byte-for-byte checks.
    file: Option<PathBuf>,
    kb_dir: PathBuf,
    /// The database of Langflow's postgres (pgvector) knowledge-base backend, when the bases'
    /// knowledge bases are there (`PGVECTOR_CONNECTION_STRING`).
    pgvector: Option<String>,
    oracle: Value,
    _dir: tempfile::TempDir,
}

/// Langflow's database, and where its knowledge bases keep their vectors: its default `sqlite`
/// backend, or (`…Pgvector`) its `postgres` backend in a PostgreSQL database of their own.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Backend {
    Sqlite,
    Postgres,
    SqlitePgvector,
    PostgresPgvector,
}

impl Backend {
    fn database_is_sqlite(self) -> bool {
        matches!(self, Backend::Sqlite | Backend::SqlitePgvector)
    }

    fn kb_in_pgvector(self) -> bool {
        matches!(self, Backend::SqlitePgvector | Backend::PostgresPgvector)
    }

    fn needs_postgres(self) -> bool {
        self != Backend::Sqlite
    }
}

fn python() -> Option<String> {
    std::env::var(PYTHON_VAR).ok().filter(|p| !p.is_empty())
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/langflow")
        .join(name)
}

/// Builds (once per test binary and backend) a Langflow database with Langflow's own code.
fn built(backend: Backend) -> Option<&'static Built> {
    static SQLITE: OnceLock<Option<Built>> = OnceLock::new();
    static POSTGRES: OnceLock<Option<Built>> = OnceLock::new();
    static SQLITE_PGVECTOR: OnceLock<Option<Built>> = OnceLock::new();
    static POSTGRES_PGVECTOR: OnceLock<Option<Built>> = OnceLock::new();
    let cell = match backend {
        Backend::Sqlite => &SQLITE,
        Backend::Postgres => &POSTGRES,
        Backend::SqlitePgvector => &SQLITE_PGVECTOR,
        Backend::PostgresPgvector => &POSTGRES_PGVECTOR,
    };
    cell.get_or_init(|| build(backend)).as_ref()
}

fn build(backend: Backend) -> Option<Built> {
    let python = python()?;
    let dir = tempfile::tempdir().unwrap();
    let kb_dir = dir.path().join("kb");
    let oracle_file = dir.path().join("oracle.json");
    let (url, file, mut target) = match backend {
        _ if backend.database_is_sqlite() => {
            let file = dir.path().join("langflow.db");
            (
                format!("sqlite://{}", file.display()),
                Some(file.clone()),
                vec!["--sqlite".to_owned(), file.display().to_string()],
            )
        }
        _ => {
            let url = new_postgres_database("")?;
            (url.clone(), None, vec!["--postgres".to_owned(), url])
        }
    };
    let pgvector = if backend.kb_in_pgvector() {
        // Langflow never creates the extension: the operator does, in the database
        // PGVECTOR_CONNECTION_STRING names.
        let url = new_postgres_database("_vec")?;
        let created = Process::new("psql")
            .args([&url, "-qc", "CREATE EXTENSION vector"])
            .status()
            .expect("psql runs");
        assert!(created.success(), "CREATE EXTENSION vector in {url}");
        target.extend(["--kb-backend".to_owned(), "postgres".to_owned()]);
        target.extend(["--pgvector".to_owned(), url.clone()]);
        Some(url)
    } else {
        None
    };
    let output = Process::new(&python)
        .arg(script("build_db.py"))
        .args(&target)
        .arg("--kb-dir")
        .arg(&kb_dir)
        .arg("--out")
        .arg(&oracle_file)
        .output()
        .expect("Langflow's python runs");
    assert!(
        output.status.success(),
        "build_db.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let oracle = serde_json::from_str(&std::fs::read_to_string(&oracle_file).unwrap()).unwrap();
    Some(Built {
        url,
        file,
        kb_dir,
        pgvector,
        oracle,
        _dir: dir,
    })
}

/// A new, empty PostgreSQL database beside `MEMSCOPE_TEST_PG_URL`'s (dropped by a later run,
/// as its name says when it was made).
fn new_postgres_database(suffix: &str) -> Option<String> {
    let admin = std::env::var("MEMSCOPE_TEST_PG_URL").ok()?;
    drop_stale_databases(&admin);
    let name = format!(
        "{STALE_PREFIX}{}_{}{suffix}",
        epoch_secs(),
        uuid::Uuid::new_v4().simple()
    );
    let created = Process::new("psql")
        .args([&admin, "-qc", &format!("CREATE DATABASE {name}")])
        .status()
        .expect("psql runs");
    assert!(created.success(), "creating {name}");
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    Some(format!("{base}/{name}"))
}

/// Whether the PostgreSQL server has pgvector to install (`.ci/pgvector` builds it).
fn pgvector_available() -> bool {
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        return false;
    };
    Process::new("psql")
        .args([
            &admin,
            "-Atc",
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'",
        ])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "1")
}

const STALE_PREFIX: &str = "memscope_lf_";
/// A database of an earlier run older than this is dropped: a test binary cannot drop its own at
/// exit, and a run never lasts this long.
const STALE_AFTER_SECS: u64 = 6 * 3600;

fn epoch_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Drops the Langflow databases earlier runs left (their names carry their creation time).
fn drop_stale_databases(admin: &str) {
    let listed = Process::new("psql")
        .args([
            admin,
            "-Atc",
            &format!("SELECT datname FROM pg_database WHERE datname LIKE '{STALE_PREFIX}%'"),
        ])
        .output()
        .expect("psql runs");
    let now = epoch_secs();
    for name in String::from_utf8_lossy(&listed.stdout).lines() {
        let created = name
            .strip_prefix(STALE_PREFIX)
            .and_then(|rest| rest.split('_').next())
            .and_then(|epoch| epoch.parse::<u64>().ok());
        if created.is_some_and(|created| now.saturating_sub(created) > STALE_AFTER_SECS) {
            let _ = Process::new("psql")
                .args([admin, "-qc", &format!("DROP DATABASE IF EXISTS {name}")])
                .status();
        }
    }
}

/// Runs `test` on a database Langflow built, or says why it was skipped.
fn on_langflow(name: &str, backend: Backend, test: impl FnOnce(&Built)) {
    if python().is_none() {
        eprintln!(
            "{name}: Langflow test skipped ({PYTHON_VAR} is not set; .ci/langflow sets it up)"
        );
        return;
    }
    if backend.needs_postgres() && std::env::var("MEMSCOPE_TEST_PG_URL").is_err() {
        eprintln!("{name}: Langflow test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    }
    if backend.kb_in_pgvector() && !pgvector_available() {
        eprintln!(
            "{name}: Langflow test skipped (the PostgreSQL server has no pgvector; \
             .ci/pgvector installs it)"
        );
        return;
    }
    let built = built(backend).expect("the Langflow database was built");
    test(built);
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(format!("{name}-{backend:?}")), "ran").unwrap();
    }
}

fn memscope(built: &Built, home: &Path) -> Command {
    let mut command = Command::cargo_bin("memscope").unwrap();
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env("LANGFLOW_KNOWLEDGE_BASES_DIR", &built.kb_dir)
        .env_remove("MEMSCOPE_DATABASE_URL")
        .env_remove("MEMSCOPE_EMBEDDINGS_URL")
        .args(["--db", &built.url]);
    match &built.pgvector {
        Some(url) => command.env(PGVECTOR_VAR, url),
        None => command.env_remove(PGVECTOR_VAR),
    };
    command
}

/// The variable Langflow's postgres knowledge-base backend (and memscope) reads.
const PGVECTOR_VAR: &str = "PGVECTOR_CONNECTION_STRING";

fn json(command: &mut Command) -> Value {
    let output = command.arg("--json").output().unwrap();
    assert!(
        output.status.success() || output.status.code() == Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("--json prints JSON")
}

fn oracle_bases(built: &Built) -> &Vec<Value> {
    built.oracle["memory_bases"].as_array().unwrap()
}

/// Every base's list entry, sessions and check verdict equal what Langflow's functions say.
fn bases_sessions_and_checks_match_langflow(built: &Built) {
    let home = tempfile::tempdir().unwrap();
    let listed = json(memscope(built, home.path()).args(["mb", "list"]));
    let listed: BTreeMap<&str, &Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["id"].as_str().unwrap(), b))
        .collect();
    assert_eq!(listed.len(), oracle_bases(built).len());
    for expected in oracle_bases(built) {
        let id = expected["id"].as_str().unwrap();
        let base = listed[id];
        for field in [
            "name",
            "flow_id",
            "user_id",
            "threshold",
            "auto_capture",
            "kb_name",
        ] {
            assert_eq!(base[field], expected[field], "{field} of base {id}");
        }
        assert_eq!(base["threshold_unit"], "runs");
        assert_eq!(
            base["status"] == "mismatch",
            expected["check_mismatch"].as_bool().unwrap(),
            "mismatch verdict of {id}"
        );
        // Langflow prints ids dashed; its SQLite keeps them as 32 hex digits: both are accepted.
        let compact = id.replace('-', "");
        let sessions = json(memscope(built, home.path()).args(["mb", "sessions", &compact]));
        let sessions: BTreeMap<&str, &Value> = sessions
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["session_id"].as_str().unwrap(), s))
            .collect();
        let expected_sessions = expected["sessions"].as_array().unwrap();
        assert_eq!(sessions.len(), expected_sessions.len(), "sessions of {id}");
        for want in expected_sessions {
            let session_id = want["session_id"].as_str().unwrap();
            let got = sessions[session_id];
            assert_eq!(
                got["pending"], want["pending_runs"],
                "{id}/{session_id} pending runs"
            );
            assert_eq!(
                got["cursor_id"], want["cursor_id"],
                "{id}/{session_id} cursor"
            );
            assert_eq!(
                got["total_processed"], want["total_processed"],
                "{id}/{session_id} total"
            );
        }
    }
    // `mb jobs` counts the jobs it lists by state.
    let jobs = json(memscope(built, home.path()).args(["mb", "jobs"]));
    let total = jobs.as_array().unwrap().len();
    let listing = memscope(built, home.path())
        .args(["mb", "jobs"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let noun = if total == 1 { "job" } else { "jobs" };
    assert!(listing.starts_with(&format!("{total} {noun}")), "{listing}");
    let checks = json(memscope(built, home.path()).args(["mb", "check"]));
    for report in checks.as_array().unwrap() {
        let id = report["memory_base_id"].as_str().unwrap();
        let expected = oracle_bases(built).iter().find(|b| b["id"] == id).unwrap();
        assert_eq!(
            !report["mismatches"].as_array().unwrap().is_empty(),
            expected["check_mismatch"].as_bool().unwrap(),
            "check of {id}: {report}"
        );
        assert_eq!(
            report["observed"]["store_chunks"], expected["chunk_count"],
            "chunks of {id}"
        );
    }
}

#[test]
fn langflow_bases_sessions_and_checks_match_langflow_sqlite() {
    on_langflow("bases_sessions_and_checks", Backend::Sqlite, |built| {
        bases_sessions_and_checks_match_langflow(built)
    });
}

#[test]
fn langflow_bases_sessions_and_checks_match_langflow_postgres() {
    on_langflow("bases_sessions_and_checks", Backend::Postgres, |built| {
        bases_sessions_and_checks_match_langflow(built)
    });
}

/// Reads change nothing: the file is byte-for-byte the same, and no `-wal`/`-shm` is left
/// beside Langflow's WAL-mode database or its vector stores.
#[test]
fn langflow_reads_leave_the_database_and_its_directory_as_they_were() {
    on_langflow("reads_leave_no_trace", Backend::Sqlite, |built| {
        let file = built.file.as_ref().unwrap();
        let listing = |dir: &Path| -> Vec<String> {
            let mut names: Vec<String> = walk(dir)
                .into_iter()
                .map(|p| p.display().to_string())
                .collect();
            names.sort();
            names
        };
        let before_db = std::fs::read(file).unwrap();
        let before_files = listing(file.parent().unwrap());
        let home = tempfile::tempdir().unwrap();
        for args in [
            vec!["info"],
            vec!["mb", "list"],
            vec!["mb", "check"],
            vec!["mb", "jobs"],
            vec!["mb", "show", "Support Memory"],
        ] {
            memscope(built, home.path()).args(&args).assert().success();
        }
        assert_eq!(std::fs::read(file).unwrap(), before_db);
        assert_eq!(listing(file.parent().unwrap()), before_files);
    });
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// Parts a Langflow database does not hold answer in one line, never with a raw SQL error.
#[test]
fn langflow_parts_it_lacks_are_named_not_queried() {
    on_langflow("parts_it_lacks", Backend::Sqlite, |built| {
        let home = tempfile::tempdir().unwrap();
        let info = json(memscope(built, home.path()).arg("info"));
        assert_eq!(info["database"]["status"], "open");
        assert!(
            info["database"]["kind"]
                .as_str()
                .unwrap()
                .starts_with("a Langflow database (schema "),
            "{info}"
        );
        assert_eq!(info["database"]["read_only"], true);
        let conversations = memscope(built, home.path())
            .arg("conversations")
            .output()
            .unwrap();
        assert_eq!(
            conversations.status.code(),
            Some(0),
            "Langflow's sessions are listed"
        );
        let doctor = memscope(built, home.path()).arg("doctor").output().unwrap();
        assert!(
            matches!(doctor.status.code(), Some(0 | 1)),
            "doctor scans Langflow's sessions: {}",
            String::from_utf8_lossy(&doctor.stderr)
        );
        // Sessions are its conversations: an unknown one is not found, as on every source.
        let unknown = memscope(built, home.path())
            .args(["thread", "x"])
            .output()
            .unwrap();
        assert_eq!(unknown.status.code(), Some(3));
        let said = String::from_utf8_lossy(&unknown.stderr);
        assert!(
            said.contains("no messages are stored under session \"x\"")
                && said.contains("memscope conversations"),
            "{said}"
        );
        for args in [vec!["chat-memory", "list"], vec!["kbs"]] {
            let output = memscope(built, home.path()).args(&args).output().unwrap();
            assert_eq!(output.status.code(), Some(3), "{args:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("is a Langflow database")
                    && stderr.contains("it holds memory bases")
                    && !stderr.contains("no such table"),
                "{args:?}: {stderr}"
            );
        }
    });
}

/// A copy of the SQLite database and its knowledge bases, for tests that change them.
fn sqlite_copy(built: &Built) -> Built {
    assert!(
        built.pgvector.is_none(),
        "a copy would share its pgvector tables"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("langflow.db");
    std::fs::copy(built.file.as_ref().unwrap(), &file).unwrap();
    let kb_dir = dir.path().join("kb");
    copy_dir(&built.kb_dir, &kb_dir);
    Built {
        url: format!("sqlite://{}", file.display()),
        file: Some(file),
        kb_dir,
        pgvector: None,
        oracle: built.oracle.clone(),
        _dir: dir,
    }
}

/// What Langflow's own functions say about a database now.
fn langflow_says(built: &Built) -> Value {
    langflow_says_probing(built, false)
}

/// What Langflow's own functions say, with `probe`: whether Langflow would start a new flush of
/// each session now (its `create_job` in a rolled-back transaction).
fn langflow_says_probing(built: &Built, probe: bool) -> Value {
    let mut verify = Process::new(python().unwrap());
    verify.arg(script("verify_db.py"));
    match &built.file {
        Some(file) => verify.arg("--sqlite").arg(file),
        None => verify.arg("--postgres").arg(&built.url),
    };
    verify.arg("--kb-dir").arg(&built.kb_dir);
    if let Some(url) = &built.pgvector {
        verify.arg("--pgvector").arg(url);
    }
    if !probe {
        verify.arg("--no-flush-probe");
    }
    let output = verify.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Threshold and auto-capture change in place, as Langflow's own update does, and Langflow then
/// starts (its model check passes) and reads the new values; writes memscope cannot yet make
/// in Langflow's formats are refused with the way out, and change nothing.
#[test]
fn langflow_threshold_and_auto_capture_changes_are_accepted_by_langflow() {
    on_langflow("update_accepted", Backend::Sqlite, |built| {
        let copy = sqlite_copy(built);
        let home = tempfile::tempdir().unwrap();
        let base = oracle_bases(built)
            .iter()
            .find(|b| b["name"] == "Support Memory")
            .unwrap();
        let compact = base["id"].as_str().unwrap().replace('-', "");
        memscope(&copy, home.path())
            .args(["--write", "mb", "update", &compact, "--threshold", "5"])
            .args(["--auto-capture", "false"])
            .assert()
            .success();
        let before = std::fs::read(copy.file.as_ref().unwrap()).unwrap();
        // Each refusal names the endpoint of Langflow 1.13's memories router that does it,
        // before any confirmation is asked for.
        let flow = base["flow_id"].as_str().unwrap();
        for (args, endpoint) in [
            (
                vec!["mb", "delete", "Support Memory", "--yes"],
                "Langflow's own API does: DELETE /api/v1/memories/{memory_base_id}",
            ),
            (
                vec!["mb", "delete", "Support Memory"],
                "DELETE /api/v1/memories/{memory_base_id}",
            ),
            (
                vec!["mb", "create", "Another", "--flow", flow],
                "Langflow's own API does: POST /api/v1/memories",
            ),
        ] {
            let refused = memscope(&copy, home.path())
                .arg("--write")
                .args(&args)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(refused.status.code(), Some(3), "{args:?}: {stderr}");
            assert!(stderr.contains(endpoint), "{args:?}: {stderr}");
        }
        assert_eq!(std::fs::read(copy.file.as_ref().unwrap()).unwrap(), before);
        let said = langflow_says(&copy);
        assert_eq!(said["startup_model_check"]["ok"], true, "{said}");
        let seen = said["memory_bases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["id"] == base["id"])
            .unwrap();
        assert_eq!(seen["threshold"], 5);
        assert_eq!(seen["auto_capture"], false);
    });
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

//! Fault injection through the real binary, on SQLite files: SIGKILL at random points of
//! `trim apply` and of `capture` (afterwards the database is exactly as before or holds the whole
//! change, and running the command again works), and a full disk (the database capped at its
//! current size with `MEMSCOPE_SQLITE_MAX_PAGES`) under a trim and a sync (a clear error, nothing
//! half-written). The counts of each outcome are printed at the end of each test.
//!
//! `MEMSCOPE_FAULT_TRIALS` sets the kills per command (default 40), `MEMSCOPE_FAULT_SEED` the
//! seed of the kill points (default 7).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use rand::{Rng, SeedableRng};
use sqlx::{ConnectOptions, Connection, Row};

/// The demo's threshold memory: 480 messages. Trimmed to 20 continuously, the transaction
/// deletes and archives 460 of them, long enough for kills to land inside it.
const THRESHOLD_MEMORY_MESSAGES: usize = 480;
const CAPTURE_RUN: &str = "6b1e3a58-8f0c-4c39-9d0a-0c7f3e2b9a41";

fn trials() -> usize {
    std::env::var("MEMSCOPE_FAULT_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

fn seed() -> u64 {
    std::env::var("MEMSCOPE_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
}

/// The binary with its own data and config directories.
fn memscope(home: &Path, db: &Path) -> std::process::Command {
    let mut command = std::process::Command::cargo_bin("memscope").unwrap();
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("MEMSCOPE_DATABASE_URL")
        .env_remove("MEMSCOPE_SQLITE_MAX_PAGES")
        .arg("--db")
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn succeed(command: &mut std::process::Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every row of every table, each as its columns' SQL literals: the database's whole content.
type Dump = BTreeMap<String, Vec<String>>;

async fn dump(db: &Path) -> Dump {
    let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .connect()
        .await
        .unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(check, "ok", "{}", db.display());
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )
    .fetch_all(&mut connection)
    .await
    .unwrap();
    let mut out = Dump::new();
    for table in tables {
        let columns: Vec<String> =
            sqlx::query_scalar("SELECT name FROM pragma_table_info(?) ORDER BY cid")
                .bind(&table)
                .fetch_all(&mut connection)
                .await
                .unwrap();
        let literal = columns
            .iter()
            .map(|c| format!("quote(\"{c}\")"))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        let sql = format!("SELECT {literal} FROM \"{table}\" ORDER BY 1");
        let rows: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut connection)
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<String, _>(0))
            .collect();
        out.insert(table, rows);
    }
    connection.close().await.unwrap();
    out
}

/// Copies a database file and its WAL files, if any.
fn copy_db(from: &Path, to: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let source = PathBuf::from(format!("{}{suffix}", from.display()));
        let target = PathBuf::from(format!("{}{suffix}", to.display()));
        let _ = std::fs::remove_file(&target);
        if source.exists() {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

/// A fresh demo database in `home`.
fn demo(home: &Path) -> PathBuf {
    let db = home.join("pristine.db");
    succeed(memscope(home, &db).arg("demo"));
    db
}

fn threshold_memory(home: &Path, db: &Path) -> String {
    let list: serde_json::Value = serde_json::from_str(&succeed(memscope(home, db).args([
        "chat-memory",
        "list",
        "--json",
    ])))
    .unwrap();
    list["chat_memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["messages"] == THRESHOLD_MEMORY_MESSAGES)
        .expect("the demo's threshold memory")["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What a kill left: the database as before, the whole change, or (a failure) something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Left {
    Before,
    After,
}

/// Whether `state` is `before`, or holds the whole change `after` holds: every table the change
/// does not touch as before, every table it touches with `after`'s rows (`exact` tables row for
/// row; others, whose rows carry fresh ids and clocks, by count).
fn classify(before: &Dump, after: &Dump, state: &Dump, exact: &[&str]) -> Option<Left> {
    if state == before {
        return Some(Left::Before);
    }
    let touched: BTreeSet<&String> = before
        .keys()
        .filter(|table| before.get(*table) != after.get(*table))
        .collect();
    let whole = before.keys().all(|table| {
        let now = &state[table];
        if !touched.contains(table) {
            now == &before[table]
        } else if exact.contains(&table.as_str()) {
            now == &after[table]
        } else {
            now.len() == after[table].len()
        }
    });
    whole.then_some(Left::After)
}

/// Runs `command` killed with SIGKILL after `delay` (or let it finish when it is faster); true
/// when the kill landed.
fn run_killed(mut command: std::process::Command, delay: Duration) -> bool {
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if started.elapsed() >= delay {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Kills `args` at random points `trials` times, each on a fresh copy of `pristine`, checks that
/// every kill left `before` or the whole change, then runs it again and checks the change is
/// whole. Returns (kills that landed, left before, left after).
async fn kill_trials(
    name: &str,
    home: &Path,
    pristine: &Path,
    args: &[&str],
    exact: &[&str],
) -> (usize, BTreeMap<Left, usize>) {
    let before = dump(pristine).await;
    let reference = home.join("reference.db");
    copy_db(pristine, &reference);
    let started = Instant::now();
    succeed(memscope(home, &reference).args(args));
    let duration = started.elapsed();
    let after = dump(&reference).await;
    assert_ne!(before, after, "{name} changes the database");

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed());
    let mut landed = 0;
    let mut left: BTreeMap<Left, usize> = BTreeMap::new();
    let trial_db = home.join("trial.db");
    for trial in 0..trials() {
        copy_db(pristine, &trial_db);
        // Anywhere from before the process starts its work to past its end.
        let delay = duration.mul_f64(rng.random_range(0.0..1.2));
        landed += usize::from(run_killed(
            {
                let mut command = memscope(home, &trial_db);
                command.args(args);
                command
            },
            delay,
        ));
        let state = dump(&trial_db).await;
        let outcome = classify(&before, &after, &state, exact).unwrap_or_else(|| {
            panic!("{name}, trial {trial} (killed after {delay:?}): half-written")
        });
        *left.entry(outcome).or_default() += 1;
        // Running it again works, and the change is whole (once).
        succeed(memscope(home, &trial_db).args(args));
        let again = dump(&trial_db).await;
        assert_eq!(
            classify(&before, &after, &again, exact),
            Some(Left::After),
            "{name}, trial {trial}: the re-run completes the change exactly once"
        );
    }
    (landed, left)
}

#[tokio::test]
async fn sigkill_during_trim_apply_leaves_before_or_after() {
    let home = tempfile::tempdir().unwrap();
    let pristine = demo(home.path());
    let memory = threshold_memory(home.path(), &pristine);
    let args = [
        "trim",
        "apply",
        "--chat-memory",
        memory.as_str(),
        "--trim-mode",
        "continuous",
        "--max-messages",
        "20",
        "--yes",
    ];
    let (landed, left) = kill_trials(
        "trim apply",
        home.path(),
        &pristine,
        &args,
        &["chat_memory_messages"],
    )
    .await;
    eprintln!(
        "trim apply: {} trials, {landed} killed mid-run; left as before {}, as after {}; every \
         re-run completed the trim once",
        trials(),
        left.get(&Left::Before).unwrap_or(&0),
        left.get(&Left::After).unwrap_or(&0)
    );
}

#[tokio::test]
async fn sigkill_during_capture_leaves_before_or_after() {
    let home = tempfile::tempdir().unwrap();
    let pristine = demo(home.path());
    let input = home.path().join("run.json");
    std::fs::write(
        &input,
        r#"[{"sender": "User", "text": "Where is my invoice?"},
            {"sender": "Machine", "text": "Under Billing, then Invoices."},
            {"sender": "User", "text": "And last year's?"},
            {"sender": "Machine", "text": "Pick the year at the top of the list."}]"#,
    )
    .unwrap();
    let input = input.to_str().unwrap();
    let args = [
        "capture",
        "--flow",
        "Support Agent",
        "--session",
        "fault-session",
        "--run",
        CAPTURE_RUN,
        "--input",
        input,
    ];
    let (landed, left) = kill_trials("capture", home.path(), &pristine, &args, &[]).await;
    eprintln!(
        "capture: {} trials, {landed} killed mid-run; left as before {}, as after {}; every \
         re-run recorded the run once",
        trials(),
        left.get(&Left::Before).unwrap_or(&0),
        left.get(&Left::After).unwrap_or(&0)
    );
}

/// Runs `args` with the database capped at its current size: it must fail with a clear error.
fn disk_full(home: &Path, db: &Path, args: &[&str]) -> String {
    let output = memscope(home, db)
        .env("MEMSCOPE_SQLITE_MAX_PAGES", "1")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(3), "{args:?}: {stderr}");
    assert!(
        stderr.contains("disk is full") && stderr.contains("nothing was written"),
        "{args:?}: {stderr}"
    );
    stderr
}

#[tokio::test]
async fn a_full_disk_fails_a_trim_and_a_sync_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let memory = threshold_memory(home.path(), &db);
    let before = dump(&db).await;
    disk_full(
        home.path(),
        &db,
        &[
            "trim",
            "apply",
            "--chat-memory",
            &memory,
            "--trim-mode",
            "continuous",
            "--max-messages",
            "20",
            "--yes",
        ],
    );
    assert!(dump(&db).await == before, "the failed trim wrote nothing");

    // The failed ingestion session of the synced base: 7 runs pending.
    let sessions = |home: &Path| -> serde_json::Value {
        serde_json::from_str(&succeed(memscope(home, &db).args([
            "mb",
            "sessions",
            "Support memory",
            "--json",
        ])))
        .unwrap()
    };
    let sessions_before = sessions(home.path());
    disk_full(
        home.path(),
        &db,
        &[
            "mb",
            "sync",
            "Support memory",
            "--session",
            "support-ada-0002",
        ],
    );
    assert_eq!(
        sessions(home.path()),
        sessions_before,
        "cursor, totals and pending runs are as before"
    );
    let after = dump(&db).await;
    for table in [
        "message_ingestion_record",
        "memory_base_session",
        "memory_base_workflow_run",
        "chat_memory_messages",
    ] {
        assert_eq!(after[table], before[table], "{table} is as before");
    }
    // The KB and the database still agree.
    let check = memscope(home.path(), &db)
        .args(["mb", "check", "Support memory"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    // With room again, the same commands work.
    succeed(memscope(home.path(), &db).args([
        "mb",
        "sync",
        "Support memory",
        "--session",
        "support-ada-0002",
    ]));
    eprintln!("disk full: a trim and a sync failed cleanly, and the sync then succeeded");
}

//! Reading a SQLite database changes no byte of it or of what lies beside it. A copy of a live
//! WAL-mode database (a backup, a forensic copy) comes with its log (`-wal`) and the log's index
//! (`-shm`): memscope reads what the log holds and leaves all three as they were. A WAL-mode
//! file without side files keeps none after the read, and a log copied without its index is
//! refused before anything is created.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use sqlx::{Connection, Executor};

fn memscope(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "--db"])
        .arg(db)
        .args(args)
        .env_remove("LANGGRAPH_AES_KEY")
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

/// Every file of `dir` by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}

fn thread_ids(db: &Path) -> Vec<String> {
    let listed = json_of(&memscope(db, &["conversations"]));
    listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The LangGraph demo file (SqliteSaver's layout, in WAL mode), in a directory of its own.
fn demo_file(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("agent.sqlite");
    let written = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["demo", "--langgraph"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    assert_eq!(files(dir).len(), 1, "the demo leaves no side file");
    file
}

/// Copies `file` with its `-wal` and `-shm` into `into` while a writer holds it open with one
/// thread's checkpoints deleted in its log, as a backup of a running agent would; returns the
/// copy and the thread the log deleted.
fn copy_while_live(file: &Path, into: &Path, with_index: bool) -> (std::path::PathBuf, String) {
    let gone = thread_ids(file).remove(0);
    let copy = into.join("agent.sqlite");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let url = format!("sqlite://{}", file.display());
        let mut writer = sqlx::SqliteConnection::connect(&url).await.unwrap();
        writer
            .execute(sqlx::query("DELETE FROM checkpoints WHERE thread_id = ?").bind(&gone))
            .await
            .unwrap();
        writer
            .execute(sqlx::query("DELETE FROM writes WHERE thread_id = ?").bind(&gone))
            .await
            .unwrap();
        let mut suffixes = vec!["", "-wal"];
        if with_index {
            suffixes.push("-shm");
        }
        for suffix in suffixes {
            let from = format!("{}{suffix}", file.display());
            let to = format!("{}{suffix}", copy.display());
            std::fs::copy(&from, &to).unwrap();
        }
        writer.close().await.unwrap();
    });
    (copy, gone)
}

#[test]
fn reading_a_live_copy_reads_its_log_and_changes_none_of_its_three_files() {
    let origin = tempfile::tempdir().unwrap();
    let file = demo_file(origin.path());
    let threads = thread_ids(&file);
    let copied = tempfile::tempdir().unwrap();
    let (copy, gone) = copy_while_live(&file, copied.path(), true);
    let before = files(copied.path());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        ["agent.sqlite", "agent.sqlite-shm", "agent.sqlite-wal"]
    );

    // What the log holds is read: the thread it deleted is gone from the copy.
    let listed = thread_ids(&copy);
    assert_eq!(listed.len(), threads.len() - 1);
    assert!(!listed.contains(&gone));
    let kept = &listed[0];
    for args in [
        vec!["info"],
        vec!["history", kept],
        vec!["thread", kept],
        vec!["export", kept],
    ] {
        json_of(&memscope(&copy, &args));
    }
    let doctor = memscope(&copy, &["doctor"]);
    assert!(
        matches!(doctor.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&doctor.stderr)
    );

    let after = files(copied.path());
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &before {
        assert!(after[name] == *bytes, "{name} changed");
    }
}

#[test]
fn a_wal_mode_file_without_side_files_keeps_none_and_its_bytes() {
    let origin = tempfile::tempdir().unwrap();
    let file = demo_file(origin.path());
    let before = files(origin.path());
    let thread = thread_ids(&file).remove(0);
    json_of(&memscope(&file, &["history", &thread]));
    let doctor = memscope(&file, &["doctor"]);
    assert!(matches!(doctor.status.code(), Some(0 | 1)));
    assert_eq!(files(origin.path()), before);
}

#[test]
fn a_log_copied_without_its_index_is_refused_and_nothing_is_created() {
    let origin = tempfile::tempdir().unwrap();
    let file = demo_file(origin.path());
    let copied = tempfile::tempdir().unwrap();
    let (copy, _) = copy_while_live(&file, copied.path(), false);
    let before = files(copied.path());
    let refused = memscope(&copy, &["conversations"]);
    assert_eq!(refused.status.code(), Some(3));
    let error: Value = serde_json::from_slice(&refused.stderr).unwrap();
    let error = &error["error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("agent.sqlite-wal"),
        "{error}"
    );
    assert!(error["hint"].as_str().unwrap().contains("-shm"), "{error}");
    assert_eq!(files(copied.path()), before);
}

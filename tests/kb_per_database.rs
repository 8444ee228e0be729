//! A knowledge base belongs to one database: two databases with the same demo (the same memory
//! base and KB names) never read, overwrite or delete each other's KBs, and a KB left where
//! databases used to share a directory is reported, not used.

mod cli_support;

#[macro_use]
mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cli_support::memscope_on as memscope;
use serde_json::Value;

fn json(command: &mut Command, code: i32) -> Value {
    let output = command.arg("--json").output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `mb check` per base name: (mismatch count, KB path).
fn check(home: &Path, db: &str) -> Vec<(String, usize, PathBuf)> {
    let output = memscope(home, db)
        .args(["mb", "check", "--json"])
        .output()
        .unwrap();
    let reports: Value = serde_json::from_slice(&output.stdout).unwrap();
    reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["mismatches"].as_array().unwrap().len(),
                PathBuf::from(r["kb_path"].as_str().unwrap()),
            )
        })
        .collect()
}

/// Every file below `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

db_tests! {
    async fn two_databases_with_the_same_demo_keep_their_own_kbs(db) {
        let home = tempfile::tempdir().unwrap();
        let first = db.url().to_owned();
        let second = format!("sqlite://{}", home.path().join("second.db").display());
        for url in [&first, &second] {
            json(memscope(home.path(), url).arg("demo"), 0);
        }
        let before = check(home.path(), &first);
        let synced = before
            .iter()
            .find(|(name, _, _)| name == "Support memory")
            .unwrap()
            .clone();
        assert_eq!(synced.1, 0, "{before:?}");
        let files_before = snapshot(&synced.2);
        assert!(!files_before.is_empty());
        let theirs = check(home.path(), &second);
        for ((name, _, mine), (_, _, other)) in before.iter().zip(&theirs) {
            assert_ne!(mine, other, "{name}: each database has its own KB directory");
        }

        // Sync, regenerate and delete in the second database.
        json(memscope(home.path(), &second).args(["mb", "sync", "Support memory"]), 0);
        json(memscope(home.path(), &second).args(["mb", "regenerate", "Release history", "--yes"]), 0);
        json(memscope(home.path(), &second).args(["mb", "delete", "Support memory", "--yes"]), 0);

        // The first database's check and KB files are exactly as they were.
        assert_eq!(check(home.path(), &first), before);
        assert!(snapshot(&synced.2) == files_before, "the first database's KB is untouched");
    }
}

#[test]
fn a_kb_in_the_old_shared_layout_is_reported_with_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", home.path().join("m.db").display());
    json(memscope(home.path(), &db).arg("demo"), 0);
    let (_, _, own) = check(home.path(), &db)
        .into_iter()
        .find(|(name, _, _)| name == "Support memory")
        .unwrap();
    // As a memscope before per-database KB directories left it: {kb_root}/{user}/{kb}.
    let kb_root = home.path().join("data/memscope/knowledge_bases");
    let relative: PathBuf = own
        .components()
        .rev()
        .take(2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let shared = kb_root.join(relative);
    std::fs::create_dir_all(shared.parent().unwrap()).unwrap();
    std::fs::rename(&own, &shared).unwrap();

    let output = memscope(home.path(), &db)
        .args(["mb", "check", "Support memory"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&*shared.to_string_lossy()) && text.contains("move it to"),
        "{text}"
    );
    assert!(shared.exists(), "the shared KB is never touched");

    let info = String::from_utf8_lossy(
        &memscope(home.path(), &db)
            .arg("info")
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    assert!(info.contains(&*shared.to_string_lossy()), "{info}");
}

#[test]
fn a_copied_database_file_gets_its_own_kb_and_works_as_the_original() {
    let home = tempfile::tempdir().unwrap();
    let original_file = home.path().join("memory.db");
    let copy_file = home.path().join("copy.db");
    let original = format!("sqlite://{}", original_file.display());
    let copy = format!("sqlite://{}", copy_file.display());
    json(memscope(home.path(), &original).arg("demo"), 0);
    let before = check(home.path(), &original);
    let (_, _, original_kb) = before
        .iter()
        .find(|(name, _, _)| name == "Support memory")
        .unwrap()
        .clone();
    let files_before = snapshot(&original_kb);
    std::fs::copy(&original_file, &copy_file).unwrap();

    // The copy starts from the original's KB: its check is as clean, in its own directory.
    let copied = check(home.path(), &copy);
    for ((name, mismatches, mine), (_, theirs, other)) in before.iter().zip(&copied) {
        assert_ne!(mine, other, "{name}: the copy has its own KB directory");
        assert_eq!(
            mismatches, theirs,
            "{name}: the copy's KB started from the original's"
        );
    }
    let info = json(memscope(home.path(), &copy).arg("info"), 0);
    assert_eq!(
        info["database"]["copy_of"].as_str(),
        Some(&*original_file.canonicalize().unwrap().to_string_lossy()),
        "{info}"
    );

    // Sync, regenerate, delete in the copy all succeed, and leave the original's KB alone.
    json(
        memscope(home.path(), &copy).args(["mb", "sync", "Support memory"]),
        0,
    );
    json(
        memscope(home.path(), &copy).args(["mb", "regenerate", "Support memory", "--yes"]),
        0,
    );
    json(
        memscope(home.path(), &copy).args(["mb", "delete", "Support memory", "--yes"]),
        0,
    );
    assert_eq!(check(home.path(), &original), before);
    assert!(
        snapshot(&original_kb) == files_before,
        "the original's KB is untouched"
    );
    let info = json(memscope(home.path(), &original).arg("info"), 0);
    assert!(info["database"]["copy_of"].is_null(), "{info}");
}

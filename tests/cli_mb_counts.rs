//! `mb` answers that say what they found: `mb check` on a database without memory bases says so
//! (it printed nothing), and `mb jobs` opens with the jobs counted by state.

mod cli_support;

use cli_support::{memscope_on as memscope, run};
use serde_json::Value;

#[test]
fn mb_check_without_memory_bases_says_so() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", home.path().join("empty.db").display());
    run(memscope(home.path(), &db).arg("init"), 0);
    let (stdout, _) = run(memscope(home.path(), &db).args(["mb", "check"]), 0);
    assert_eq!(stdout.trim(), "no memory bases to check");
    let (json, _) = run(
        memscope(home.path(), &db).args(["mb", "check", "--json"]),
        0,
    );
    assert_eq!(json.trim(), "[]");
}

#[test]
fn mb_jobs_counts_the_jobs_it_lists_by_state() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", home.path().join("demo.db").display());
    run(memscope(home.path(), &db).arg("init"), 0);
    run(memscope(home.path(), &db).arg("demo"), 0);
    let (listed, _) = run(memscope(home.path(), &db).args(["mb", "jobs", "--json"]), 0);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let statuses: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["status"].as_str().unwrap())
        .collect();
    assert!(!statuses.is_empty(), "the demo's syncs left jobs");
    let completed = statuses.iter().filter(|s| **s == "completed").count();
    let (text, _) = run(memscope(home.path(), &db).args(["mb", "jobs"]), 0);
    let first = text.lines().next().unwrap();
    let jobs = if statuses.len() == 1 { "job" } else { "jobs" };
    assert!(
        first.starts_with(&format!("{} {jobs}: ", statuses.len())),
        "{text}"
    );
    assert!(first.contains(&format!("{completed} completed")), "{text}");
}

//! What the tests of the real binary share: the binary with its own data and config directories
//! (never the user's, never an inherited database URL), on a database or not, and a run that
//! asserts the exit code.
//!
//! Use it from a test file with `mod cli_support;`.

// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;

/// The binary with its own data and config directories and no inherited database URL.
pub fn memscope(home: &Path) -> Command {
    let mut command = Command::cargo_bin("memscope").unwrap();
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("MEMSCOPE_DATABASE_URL");
    command
}

/// [`memscope`] on the database `db`.
pub fn memscope_on(home: &Path, db: &str) -> Command {
    let mut command = memscope(home);
    command.args(["--db", db]);
    command
}

/// Runs `command`, asserts its exit code and returns its standard output and error.
pub fn run(command: &mut Command, code: i32) -> (String, String) {
    let output = command.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    );
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

/// `command`'s JSON output, asserting it succeeds.
pub fn json(command: &mut Command) -> serde_json::Value {
    let (stdout, _) = run(command.arg("--json"), 0);
    serde_json::from_str(&stdout).unwrap()
}

/// A new memscope database in `home` filled with the demo; returns its URL.
pub fn demo(home: &Path) -> String {
    let db = format!("sqlite://{}", home.join("input.db").display());
    run(memscope_on(home, &db).arg("init"), 0);
    run(memscope_on(home, &db).arg("demo"), 0);
    db
}

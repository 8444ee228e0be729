//! The large demo end to end, through the real binary: `demo --scale large` (target <= 120 s),
//! then `doctor` over it (target <= 60 s) and the first page of `conversations`. One timed run
//! each: these take minutes, so criterion's repetitions do not fit.
//!
//! `cargo bench --bench scale`; set MEMSCOPE_BENCH_DIR to keep the database for other benches.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn memscope(home: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("MEMSCOPE_DATABASE_URL");
    command
}

fn timed(what: &str, command: &mut Command, expect_code: i32) -> Duration {
    let started = Instant::now();
    let output = command.output().expect("memscope runs");
    let elapsed = started.elapsed();
    assert_eq!(
        output.status.code(),
        Some(expect_code),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{what:<40} {:>8.2} s", elapsed.as_secs_f64());
    elapsed
}

fn main() {
    // `cargo bench -- <filter>` passes arguments; this bench has no sub-benchmarks to filter.
    if std::env::args().any(|a| a == "--list") {
        println!("scale: bench");
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let home: PathBuf = std::env::var_os("MEMSCOPE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&home).unwrap();
    let db = home.join("large.db");
    let _ = std::fs::remove_file(&db);
    let url = format!("sqlite://{}", db.display());

    timed(
        "demo --scale large",
        memscope(&home).args(["demo", "--scale", "large", "--db", &url]),
        0,
    );
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!("{:<40} {:>8.0} MB", "database size", size as f64 / 1e6);
    timed(
        "doctor (large)",
        memscope(&home).args(["doctor", "--json", "--db", &url]),
        1,
    );
    timed(
        "conversations, first page (large)",
        memscope(&home).args(["conversations", "--db", &url]),
        0,
    );
}

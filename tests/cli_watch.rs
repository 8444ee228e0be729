//! `memscope watch` says what it does while it runs: a first line, then each job's progress and
//! outcome as it happens (the demo's Support memory has a session over its threshold).

mod cli_support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn watch_prints_progress_lines_while_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let command = cli_support::memscope(home.path());
    let mut child = std::process::Command::new(command.get_program())
        .envs(
            command
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env_remove("MEMSCOPE_DATABASE_URL")
        .args(["watch", "--interval", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let outcome = loop {
        match received.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => {
                let done = line.contains("support-ada-0002") && line.contains("ingested");
                seen.push(line);
                if done {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let text = seen.join("\n");
    assert!(outcome, "no sync reported:\n{text}");
    assert!(
        seen[0].starts_with("watching auto-capture memory bases every 1s"),
        "{text}"
    );
    // The job's own lines come before its outcome.
    let progress = seen
        .iter()
        .position(|l| l.starts_with("  session support-ada-0002: "))
        .unwrap_or_else(|| panic!("no progress line:\n{text}"));
    assert!(progress < seen.len() - 1, "{text}");
    assert!(
        seen.iter()
            .any(|l| l.starts_with("  session support-ada-0002: completed")),
        "{text}"
    );
}

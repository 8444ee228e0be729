//! `memscope demo --langgraph PATH` writes a checkpoint file LangGraph reads: its own
//! SqliteSaver and graphs of the demo's shapes (`tests/langgraph/read_demo.py`) list every
//! thread, and `get_state`, `get_state_history` and every checkpoint tuple agree with what
//! memscope's reader and commands show; LangGraph finds every run finished.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{files, memscope};

#[test]
fn the_demo_file_reads_in_langgraph_as_memscope_shows_it() {
    let Some(python) = crate::python() else {
        eprintln!("LangGraph test skipped (MEMSCOPE_LANGGRAPH_PYTHON is not set)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.sqlite");
    let written = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "demo", "--langgraph"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let report: Value = serde_json::from_slice(&written.stdout).unwrap();
    assert_eq!(report["threads"], 5);
    // Nothing beside the file: its WAL was folded back when memscope closed it.
    assert_eq!(files(dir.path()), ["demo.sqlite"]);
    // A second run leaves the file alone.
    let again = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["demo", "--langgraph"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(3));

    let oracle_path = dir.path().join("oracle.json");
    let read = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/langgraph/read_demo.py"))
        .arg("--sqlite")
        .arg(&file)
        .arg("--out")
        .arg(&oracle_path)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "read_demo.py failed:\n{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(&oracle_path).unwrap()).unwrap();
    std::fs::remove_file(&oracle_path).unwrap();
    let stories: Vec<&str> = report["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let threads = oracle["threads"].as_object().unwrap();
    assert_eq!(
        threads.keys().map(String::as_str).collect::<Vec<_>>().len(),
        stories.len()
    );
    for (thread_id, thread) in threads {
        assert!(stories.contains(&thread_id.as_str()), "{thread_id}");
        // LangGraph sees every run as finished: no node is due at the latest checkpoint.
        assert_eq!(
            thread["state"]["next"],
            serde_json::json!([]),
            "{thread_id}"
        );
    }

    let url = format!("sqlite://{}", file.display());
    super::compare_cli(&url, &oracle, crate::AES_KEY, None);
    crate::runtime().block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&file)
            .read_only(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        crate::compare(
            &memscope::sources::langgraph::LangGraphPool::Sqlite(pool.clone()),
            &oracle,
        )
        .await;
        pool.close().await;
    });

    // The long thread is the one doctor puts first.
    let doctor = memscope(&url, None, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    let found: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let first = &found["findings"][0];
    assert_eq!(first["kind"], "thread_growth");
    assert_eq!(first["conversation"], "long-chat");
    assert_eq!(first["extra"]["keep_last"], 10);
    // Keeping fewer frees more: the figure follows --keep-last, one freed per root checkpoint.
    let fewer = memscope(&url, None, &["doctor", "--keep-last", "4"]);
    let fewer: Value = serde_json::from_slice(&fewer.stdout).unwrap();
    let fewer = &fewer["findings"][0];
    assert_eq!(
        (&fewer["conversation"], &fewer["extra"]["keep_last"]),
        (&first["conversation"], &4.into())
    );
    let freed = |f: &Value| f["extra"]["frees_checkpoints"].as_u64().unwrap();
    assert!(freed(fewer) >= freed(first) + 6, "{first} {fewer}");
    // The text names what a LangGraph database keeps: threads, measured checkpoint by checkpoint.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--db", &url, "doctor"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let threads = found["conversations"].as_u64().unwrap();
    assert!(
        text.starts_with(&format!("scanned {threads} threads, ")),
        "{text}"
    );
    crate::mark("the_demo_file_reads_in_langgraph_as_memscope_shows_it");
}

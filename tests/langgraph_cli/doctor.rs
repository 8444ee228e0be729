//! `doctor` on a database LangGraph wrote, after the damage operators meet: a checkpoint deleted
//! by hand (its writes left behind, its child's parent gone), a value of a type memscope refuses
//! (pickle), and on PostgreSQL a blob no checkpoint names; without the key, the encrypted thread
//! is counted once, naming `LANGGRAPH_AES_KEY`.

use serde_json::Value;

use super::memscope;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `statements` on the database at `url`, with a writable connection of its own.
fn execute(url: &str, statements: &[String]) {
    runtime().block_on(async {
        if let Some(path) = url.strip_prefix("sqlite://") {
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect_with(options)
                .await
                .unwrap();
            for sql in statements {
                sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .execute(&pool)
                    .await
                    .unwrap();
            }
            pool.close().await;
        } else {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .unwrap();
            for sql in statements {
                sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .execute(&pool)
                    .await
                    .unwrap();
            }
            pool.close().await;
        }
    });
}

/// The findings of `kind`, each with its `extra` fields beside `conversation`, after checking
/// every finding has exactly the keys every source's findings have.
fn findings(report: &Value, kind: &str) -> Vec<Value> {
    let all = report["findings"].as_array().unwrap();
    for finding in all {
        let keys: Vec<&String> = finding.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["conversation", "description", "extra", "kind"],
            "{finding}"
        );
    }
    all.iter()
        .filter(|f| f["kind"] == kind)
        .map(|f| {
            let mut flat = f["extra"].as_object().unwrap().clone();
            flat.insert("conversation".into(), f["conversation"].clone());
            Value::Object(flat)
        })
        .collect()
}

fn doctor(url: &str, key: Option<&str>) -> Value {
    let output = memscope(url, key, &["doctor"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "doctor finds problems: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Damages the database as described above and checks what doctor says of it against the
/// oracle LangGraph wrote before the damage.
pub fn check(url: &str, oracle: &Value, key: &str, encrypted_thread: &str) {
    let threads = oracle["threads"].as_object().unwrap();
    let root = |thread: &str| -> Vec<&Value> {
        threads[thread]["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["checkpoint_ns"] == "")
            .collect()
    };
    let postgres = !url.starts_with("sqlite://");
    let writes_table = if postgres {
        "checkpoint_writes"
    } else {
        "writes"
    };
    let gone = root("pruned")
        .into_iter()
        .find(|c| c["metadata"]["step"] == 0)
        .unwrap();
    let gone_id = gone["checkpoint_id"].as_str().unwrap();
    let orphaned = gone["pending_writes"].as_array().unwrap().len();
    let mut damage = vec![
        format!(
            "DELETE FROM checkpoints WHERE thread_id = 'pruned' AND checkpoint_id = '{gone_id}'"
        ),
        format!(
            "UPDATE {writes_table} SET type = 'pickle' WHERE thread_id = 'nested' \
             AND task_path = '~__pregel_pull, plan' AND channel = 'messages'"
        ),
    ];
    if postgres {
        damage.push(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
             VALUES ('nested', '', 'messages', '00000000000000000000000000000099.0.5', 'msgpack', '\\x90')"
                .to_owned(),
        );
    }
    execute(url, &damage);

    let report = doctor(url, None);
    assert_eq!(report["conversations"], threads.len());

    // Threads with more root checkpoints than doctor keeps in its figure, largest first.
    let growth = findings(&report, "thread_growth");
    let mut long: Vec<(&str, usize)> = threads
        .keys()
        .map(|id| {
            let deleted = usize::from(id == "pruned");
            (id.as_str(), root(id).len() - deleted)
        })
        .filter(|(_, roots)| *roots > 10)
        .collect();
    long.sort();
    let mut found: Vec<(&str, usize)> = growth
        .iter()
        .map(|f| {
            (
                f["conversation"].as_str().unwrap(),
                f["root_checkpoints"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let sizes: Vec<i64> = growth
        .iter()
        .map(|f| f["bytes"].as_i64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    found.sort();
    assert_eq!(found, long, "{report:#}");
    let agent = growth
        .iter()
        .find(|f| f["conversation"] == "agent")
        .unwrap();
    let agent_root = root("agent").len();
    assert_eq!(agent["frees_checkpoints"], agent_root - 10);
    assert_eq!(
        agent["messages"],
        threads["agent"]["state"]["messages"]
            .as_array()
            .unwrap()
            .len()
    );
    assert!(agent["frees_bytes"].as_i64().unwrap() > 0);
    assert!(agent["frees_bytes"].as_i64() < agent["bytes"].as_i64());

    let orphans = findings(&report, "orphan_writes");
    assert_eq!(orphans.len(), 1, "{report:#}");
    assert_eq!(orphans[0]["checkpoint_id"], gone_id);
    assert_eq!(orphans[0]["writes"], orphaned);

    let missing = findings(&report, "missing_parent");
    assert_eq!(missing.len(), 1, "{report:#}");
    assert_eq!(missing[0]["conversation"], "pruned");
    assert!(missing[0]["problem"].as_str().unwrap().contains(gone_id));

    let unreadable = findings(&report, "unreadable_value");
    assert_eq!(unreadable.len(), 1, "{report:#}");
    assert_eq!(unreadable[0]["conversation"], "nested");
    assert!(unreadable[0]["reason"].as_str().unwrap().contains("pickle"));

    let locked = findings(&report, "encrypted_without_key");
    assert_eq!(locked.len(), 1, "{report:#}");
    assert_eq!(locked[0]["conversation"], encrypted_thread);
    let secret = threads[encrypted_thread]["checkpoints"].as_array().unwrap();
    let secret_writes: usize = secret
        .iter()
        .map(|c| c["pending_writes"].as_array().unwrap().len())
        .sum();
    if postgres {
        // Its JSONB bodies are plain; its blobs and writes are encrypted.
        assert!(locked[0]["values"].as_u64().unwrap() > secret_writes as u64);
    } else {
        assert_eq!(locked[0]["values"], secret.len() + secret_writes);
    }

    let blobs = findings(&report, "unreferenced_blobs");
    if postgres {
        // The blob put in by hand, and those only the deleted checkpoint named.
        let nested = blobs
            .iter()
            .find(|f| f["conversation"] == "nested")
            .unwrap();
        assert_eq!((&nested["blobs"], &nested["bytes"]), (&1.into(), &1.into()));
        assert!(
            blobs
                .iter()
                .all(|f| f["conversation"] == "nested" || f["conversation"] == "pruned")
        );
    } else {
        assert!(blobs.is_empty());
    }

    // With the key the encrypted thread reads, and nothing else changes.
    let keyed = doctor(url, Some(key));
    assert!(findings(&keyed, "encrypted_without_key").is_empty());
    assert_eq!(
        findings(&keyed, "orphan_writes").len() + findings(&keyed, "missing_parent").len(),
        2
    );

    // Under a small budget, each thread's latest state is over it by what `history` counts.
    let output = memscope(url, Some(key), &["doctor", "--budget", "20"]);
    let tight: Value = serde_json::from_slice(&output.stdout).unwrap();
    let over = findings(&tight, "over_budget");
    assert!(!over.is_empty(), "{tight:#}");
    for finding in over {
        let thread = finding["conversation"].as_str().unwrap();
        let history = super::json_of(&memscope(url, Some(key), &["history", thread]));
        assert_eq!(finding["tokens"], history["tokens_before"], "{thread}");
        assert_eq!(
            finding["messages"],
            history["messages"].as_array().unwrap().len()
        );
    }

    let text = memscope_text_exit(url, &["doctor"]);
    assert!(
        text.contains(&format!(
            "thread agent stores its {} messages {agent_root} times",
            agent["messages"]
        )),
        "{text}"
    );
    assert!(text.contains("LANGGRAPH_AES_KEY"), "{text}");
}

/// Text output of a command that exits 1 (doctor's findings).
fn memscope_text_exit(url: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--db", url])
        .args(args)
        .env_remove("LANGGRAPH_AES_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    String::from_utf8(output.stdout).unwrap()
}

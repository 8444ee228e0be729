//! `checkpoints prune` on LangGraph's own databases, judged by LangGraph: `get_state` kept,
//! `--keep-last` checkpoints left in `get_state_history`, an abort before the commit changing
//! nothing, the archive restoring every row byte for byte, and on PostgreSQL `--keep-last 1`
//! leaving exactly the rows PostgresSaver's own `prune` leaves.

use super::*;

/// Every row of the saver's tables, each value with its type, sorted.
fn dump(target: &Target) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if target.python_args[0] == "--sqlite" {
            let options = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&target.python_args[1])
                .read_only(true);
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect_with(options)
                .await
                .unwrap();
            let mut rows = Vec::new();
            for (table, columns) in [
                ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"),
                ("writes", "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"),
            ] {
                let cells: Vec<String> = columns
                    .split(", ")
                    .map(|c| format!("typeof({c}) || ':' || COALESCE(hex({c}), '')"))
                    .collect();
                let sql = format!("SELECT '{table} ' || {} FROM {table}", cells.join(" || ' ' || "));
                let found: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str())).fetch_all(&pool).await.unwrap();
                rows.extend(found);
            }
            pool.close().await;
            rows.sort();
            rows
        } else {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&target.url)
                .await
                .unwrap();
            let mut rows = Vec::new();
            for table in ["checkpoints", "checkpoint_writes", "checkpoint_blobs"] {
                let sql = format!("SELECT '{table} ' || row_to_json(t)::text FROM {table} t");
                let found: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str())).fetch_all(&pool).await.unwrap();
                rows.extend(found);
            }
            pool.close().await;
            rows.sort();
            rows
        }
    })
}

fn prune_args(extra: &[&str]) -> Vec<String> {
    ["--write", "checkpoints", "prune"]
        .iter()
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect()
}

/// Prune with its plan, an abort before the commit, LangGraph's reading after it, the restore
/// byte for byte, and a prune of every thread after which the graph runs on.
fn prune_round(python: &str, main: &Target, home: &Path) {
    let url = main.url.as_str();
    let rows_before = dump(main);
    let before = judge(python, main, THREAD, &[]);
    let nested_before = judge(python, main, "nested", &[]);
    let history_before = before["history"].as_array().unwrap().len();

    // The plan, without --yes: exit 2, nothing deleted.
    let plan_only: Vec<String> = [
        "checkpoints",
        "prune",
        "--thread",
        THREAD,
        "--keep-last",
        "3",
    ]
    .map(str::to_owned)
    .to_vec();
    let planned = run(home, url, &plan_only);
    assert_eq!(exit_code(&planned), Some(2));
    let plan: Value = serde_json::from_slice(&planned.stdout).unwrap();
    assert_eq!(plan["threads"][0]["thread_id"], THREAD);
    assert_eq!(plan["threads"][0]["checkpoints"], history_before - 3);
    assert!(plan["bytes"].as_i64().unwrap() > 0);
    assert_eq!(dump(main), rows_before);

    // Aborted after archiving and deleting, before the commit: the database is as before.
    let aborted_archive = home.join("aborted.jsonl");
    let aborted = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("MEMSCOPE_FAULT_POINT", "before-commit")
        .args(["--db", url])
        .args(prune_args(&[
            "--thread",
            THREAD,
            "--keep-last",
            "3",
            "--yes",
        ]))
        .args(["--archive", aborted_archive.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!aborted.status.success());
    assert_eq!(
        dump(main),
        rows_before,
        "an abort before the commit changes nothing"
    );

    // The prune, in text: the archive's absolute path on a line of its own.
    let archive = home.join("archives").join("agent.jsonl");
    let pruned = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("MEMSCOPE_FAULT_POINT")
        .args(["--db", url])
        .args(prune_args(&[
            "--thread",
            THREAD,
            "--keep-last",
            "3",
            "--yes",
        ]))
        .args(["--archive", archive.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        pruned.status.success(),
        "{}",
        String::from_utf8_lossy(&pruned.stderr)
    );
    let text = String::from_utf8_lossy(&pruned.stdout);
    assert!(
        text.lines().any(|l| l == archive.to_str().unwrap()),
        "{text}"
    );
    let after = judge(python, main, THREAD, &[]);
    assert_eq!(
        after["state"]["checkpoint_id"],
        before["state"]["checkpoint_id"]
    );
    assert_eq!(after["state"]["messages"], before["state"]["messages"]);
    assert_eq!(after["state"]["next"], before["state"]["next"]);
    assert_eq!(after["history"].as_array().unwrap().len(), 3);
    assert_eq!(
        seen(&judge(python, main, "nested", &[])),
        seen(&nested_before)
    );

    let restored = ok_json(&memscope(
        home,
        url,
        &[
            "--write",
            "checkpoints",
            "restore",
            archive.to_str().unwrap(),
            "--yes",
        ],
    ));
    assert_eq!(
        restored["rows"].as_u64().unwrap() as i64,
        plan["checkpoints"].as_i64().unwrap()
            + plan["writes"].as_i64().unwrap()
            + plan["blobs"].as_i64().unwrap()
    );
    assert_eq!(
        dump(main),
        rows_before,
        "restore puts every row back byte for byte"
    );
    // A second restore of the same archive says in plain words that the rows are there
    // already, and writes nothing.
    let twice = memscope(
        home,
        url,
        &[
            "--write",
            "checkpoints",
            "restore",
            archive.to_str().unwrap(),
            "--yes",
        ],
    );
    assert_eq!(exit_code(&twice), Some(3));
    let refused: Value = serde_json::from_slice(&twice.stderr).unwrap();
    assert_eq!(refused["error"]["kind"], "already-restored", "{refused}");
    let said = refused["error"]["message"].as_str().unwrap();
    assert!(said.contains("in this database already"), "{said}");
    assert!(!said.contains("constraint"), "{said}");
    assert_eq!(dump(main), rows_before);

    // Every thread down to its 2 newest (the encrypted one too: nothing is decoded), then one
    // more turn of the agent.
    ok_json(&run(home, url, &prune_args(&["--keep-last", "2", "--yes"])));
    assert_eq!(
        seen(&judge(python, main, "nested", &[]))["checkpoint_id"],
        nested_before["state"]["checkpoint_id"]
    );
    let turned = judge(python, main, THREAD, &["--invoke", "Still there?"]);
    assert_eq!(turned["history"].as_array().unwrap().len(), 2);
    let after_turn = message_ids(&turned["after_invoke"]);
    assert_eq!(
        after_turn.len(),
        before["state"]["messages"].as_array().unwrap().len() + 4
    );
}

#[test]
fn prune_keeps_what_langgraph_reads_on_sqlite() {
    let Some(python) = skipped() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("checkpoints.sqlite");
    let main = sqlite_target(&file);
    build(&python, &main, dir.path());
    prune_round(&python, &main, dir.path());
    mark("prune_keeps_what_langgraph_reads_on_sqlite");
}

/// The keys PostgresSaver's tables hold (and each checkpoint's parent).
fn keys(target: &Target) -> Vec<String> {
    dump(target)
        .into_iter()
        .map(|row| {
            let (table, json) = row.split_once(' ').unwrap();
            let row: Value = serde_json::from_str(json).unwrap();
            let fields: &[&str] = match table {
                "checkpoints" => &[
                    "thread_id",
                    "checkpoint_ns",
                    "checkpoint_id",
                    "parent_checkpoint_id",
                ],
                "checkpoint_writes" => &[
                    "thread_id",
                    "checkpoint_ns",
                    "checkpoint_id",
                    "task_id",
                    "idx",
                ],
                _ => &["thread_id", "checkpoint_ns", "channel", "version"],
            };
            format!(
                "{table} {}",
                json!(fields.iter().map(|f| row[*f].clone()).collect::<Vec<_>>())
            )
        })
        .collect()
}

#[test]
fn prune_keeps_what_langgraph_reads_on_postgres() {
    let Some(python) = skipped() else { return };
    let Some(admin) = postgres_admin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let main = PostgresDatabase::create(admin, "lgw");
    build(&python, &postgres_target(&main), dir.path());
    // PostgresSaver's own prune (keep_latest) on a twin leaves the rows memscope's
    // --keep-last 1 leaves.
    let twin = main.copy("lgw");
    let own = main.copy("lgw");
    judge(
        &python,
        &postgres_target(&twin),
        "nested",
        &["--langgraph-prune"],
    );
    ok_json(&run(
        dir.path(),
        &own.url,
        &prune_args(&["--thread", "nested", "--keep-last", "1", "--yes"]),
    ));
    assert_eq!(keys(&postgres_target(&own)), keys(&postgres_target(&twin)));

    prune_round(&python, &postgres_target(&main), dir.path());
    mark("prune_keeps_what_langgraph_reads_on_postgres");
}

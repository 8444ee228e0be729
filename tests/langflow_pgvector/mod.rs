//! Memory bases whose knowledge bases are in Langflow's postgres (pgvector) backend, on a SQLite
//! and on a PostgreSQL Langflow database: Langflow's own code made the bases, ingested into the
//! pgvector tables with its own task, and judges memscope's reads and writes afterwards.

use super::langflow_writes::{
    EmbedServer, base_named, langflow_accepts, writer, writes_are_accepted_by_langflow,
};
use super::*;

/// The tables of the pgvector database, to show that reads create none.
fn vector_tables(built: &Built) -> String {
    let output = Process::new("psql")
        .args([
            built.pgvector.as_deref().unwrap(),
            "-Atc",
            "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables \
             WHERE schemaname = 'public'",
        ])
        .output()
        .expect("psql runs");
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Every base's knowledge base is in the pgvector backend; memscope's list, sessions, check
/// verdicts and chunk counts are Langflow's, `mb show` names the table, and reading creates
/// nothing in the vector database.
fn reads_match_langflow(built: &Built) {
    for base in oracle_bases(built) {
        assert_eq!(base["knowledge_base"]["backend_type"], "postgres", "{base}");
        assert!(base["chunk_count"].as_i64().unwrap() > 0, "{base}");
    }
    let tables = vector_tables(built);
    assert_eq!(
        tables.split(',').count(),
        oracle_bases(built).len(),
        "{tables}"
    );
    bases_sessions_and_checks_match_langflow(built);
    let home = tempfile::tempdir().unwrap();
    for base in oracle_bases(built) {
        let name = base["name"].as_str().unwrap();
        let output = memscope(built, home.path())
            .args(["mb", "show", name])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{shown}");
        assert!(shown.contains("KB: table lf_"), "{name}: {shown}");
    }
    assert_eq!(vector_tables(built), tables);

    // Without Langflow's variable memscope says where the vectors are and claims no mismatch,
    // as Langflow's check does when it cannot count.
    let unset = json(memscope(built, home.path()).env_remove(PGVECTOR_VAR).args([
        "mb",
        "check",
        "Support Memory",
    ]));
    let report = &unset[0];
    assert_eq!(report["mismatches"], serde_json::json!([]), "{report}");
    assert!(
        report["note"].as_str().unwrap().contains(PGVECTOR_VAR),
        "{report}"
    );
}

#[test]
fn langflow_pgvector_kb_reads_match_langflow_sqlite() {
    on_langflow(
        "pgvector_reads",
        Backend::SqlitePgvector,
        reads_match_langflow,
    );
}

#[test]
fn langflow_pgvector_kb_reads_match_langflow_postgres() {
    on_langflow(
        "pgvector_reads",
        Backend::PostgresPgvector,
        reads_match_langflow,
    );
}

/// Sync, capture, a cancelled and a failed sync, with the vectors in pgvector: Langflow takes
/// the database and the tables as its own after each, and its search finds memscope's chunks.
#[test]
fn langflow_pgvector_kb_writes_are_accepted_by_langflow_postgres() {
    on_langflow("pgvector_writes", Backend::PostgresPgvector, |_| {
        // A database of its own: the shared one is read by the other tests meanwhile.
        let own = build(Backend::PostgresPgvector).expect("the Langflow database was built");
        writes_are_accepted_by_langflow(&own)
    });
}

/// Regenerate on a SQLite Langflow database whose knowledge base is in pgvector: the table is
/// emptied and refilled by memscope's jobs alone, every session synced, Langflow's count, check
/// and search agree, and a new flush is not blocked.
#[test]
fn langflow_pgvector_kb_regenerate_is_accepted_by_langflow_sqlite() {
    on_langflow("pgvector_regenerate", Backend::SqlitePgvector, |_| {
        let own = build(Backend::SqlitePgvector).expect("the Langflow database was built");
        let home = tempfile::tempdir().unwrap();
        let embed = EmbedServer::start(&[]);
        let before = langflow_says(&own);
        let old_jobs: Vec<Value> = base_named(&before, "Support Memory")["search"]["job_ids"]
            .as_array()
            .unwrap()
            .clone();
        assert!(!old_jobs.is_empty());
        writer(&own, home.path(), &embed)
            .args(["mb", "regenerate", "Support Memory", "--yes"])
            .assert()
            .success();
        let said = langflow_says_probing(&own, true);
        langflow_accepts(&said);
        let base = base_named(&said, "Support Memory");
        for session in base["sessions"].as_array().unwrap() {
            assert_eq!(
                session["pending_message_ids"],
                serde_json::json!([]),
                "{session}"
            );
        }
        assert!(base["chunk_count"].as_i64().unwrap() > 0, "{base}");
        let new_jobs = base["search"]["job_ids"].as_array().unwrap();
        assert!(
            new_jobs.iter().all(|job| !old_jobs.contains(job)),
            "only memscope's jobs are left: {new_jobs:?} / {old_jobs:?}"
        );
        let memscope_jobs: Vec<&Value> = said["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|job| job["status"] == "completed")
            .map(|job| &job["job_id"])
            .collect();
        assert!(new_jobs.iter().all(|job| memscope_jobs.contains(&job)));
    });
}

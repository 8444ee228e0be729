//! Memory-base syncs through the library, on SQLite and PostgreSQL: what a job ingests, the
//! cursor and records it commits, conflicts, rollbacks, delete, regenerate and capture.

#[macro_use]
mod common;
mod mb_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::TestDb;
use mb_support::*;
use memscope::kb::embedder::{EmbedError, Embedder, HashingEmbedder};
use memscope::kb::store::VectorStore;
use memscope::memory::memory_base::{Mismatch, ThresholdUnit, dedupe_key, lock_name};
use memscope::store::Store;
use memscope::store::memory_bases::{MemoryBaseInfo, MemoryBaseUpdate};
use memscope::store::rows::Batch;
use memscope::sync::capture::CapturedMessage;
use memscope::sync::{CancelFlag, SyncError, SyncOutcome, SyncSettings, Syncer, Trigger};

/// Hashing with hooks: fails from call `fail_from` on, sleeps per call, or runs `on_call`.
#[derive(Clone, Default)]
struct TestEmbedder {
    calls: Arc<AtomicUsize>,
    fail_from: Option<usize>,
    delay: Duration,
}

impl Embedder for TestEmbedder {
    fn provider(&self) -> &str {
        "memscope"
    }
    fn model(&self) -> &str {
        "hashing-lexical"
    }
    fn dimension(&self) -> usize {
        384
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        if self.fail_from.is_some_and(|from| call >= from) {
            return Err(EmbedError::Failed(format!("embedder down at call {call}")));
        }
        HashingEmbedder::default().embed(texts).await
    }
}

struct Fixture {
    store: Store,
    base: MemoryBaseInfo,
    kb_root: tempfile::TempDir,
}

impl Fixture {
    async fn new(db: &TestDb, threshold: i64, unit: ThresholdUnit) -> Fixture {
        let store = Store::init(db.url()).await.expect("init");
        let base = base(&store, threshold, unit).await;
        Fixture {
            store,
            base,
            kb_root: tempfile::tempdir().expect("kb root"),
        }
    }

    fn syncer<E: Embedder>(&self, embedder: E) -> Syncer<E> {
        let mut settings = SyncSettings::new(self.kb_root.path());
        settings.batch_messages = 5;
        settings.lease = Duration::from_secs(1);
        Syncer::new(self.store.clone(), embedder, settings)
    }

    async fn refreshed(&self) -> MemoryBaseInfo {
        self.store
            .find_memory_bases(&self.base.id)
            .await
            .unwrap()
            .remove(0)
    }

    async fn kb_chunks_per_message(&self) -> Vec<(String, i64)> {
        let syncer = self.syncer(HashingEmbedder::default());
        match VectorStore::open_existing(&syncer.kb_location(&self.base).unwrap())
            .await
            .unwrap()
        {
            Some(store) => store.chunks_per_message().await.unwrap(),
            None => Vec::new(),
        }
    }
}

async fn manual<E: Embedder>(
    syncer: &Syncer<E>,
    base: &MemoryBaseInfo,
    session: &str,
) -> Result<SyncOutcome, SyncError> {
    syncer
        .sync_session(
            base,
            session,
            Trigger::Manual,
            Duration::ZERO,
            None,
            &CancelFlag::default(),
        )
        .await
}

db_tests! {
    async fn a_sync_ingests_every_message_once_and_moves_the_cursor(db) {
        let f = Fixture::new(&db, 50, ThresholdUnit::Messages).await;
        // Ties on the timestamp are ordered by id; one long message makes several chunks and a
        // blank one makes none.
        let mut batch = Batch::default();
        for n in 1..=6u128 {
            batch.lf_messages.push(message(n, "s1", 10, &format!("tied message {n}")));
        }
        batch.lf_messages.push(message(7, "s1", 11, &"long words ".repeat(300)));
        batch.lf_messages.push(message(8, "s1", 12, "   "));
        batch.lf_messages.push(message(9, "other-session", 13, "not this session"));
        f.store.insert_batch(&batch).await.unwrap();

        let syncer = f.syncer(HashingEmbedder::default());
        let outcome = manual(&syncer, &f.base, "s1").await.unwrap();
        let SyncOutcome::Completed(report) = outcome else { panic!("{outcome:?}") };
        assert_eq!(report.messages, 8);
        assert_eq!(report.cursor_id, id(8));
        let chunks = f.kb_chunks_per_message().await;
        assert_eq!(chunks.len(), 7, "the blank message has no chunk: {chunks:?}");
        assert_eq!(chunks.iter().find(|(m, _)| *m == id(7)).unwrap().1, 4);
        assert!(chunks.iter().filter(|(m, _)| *m != id(7)).all(|(_, n)| *n == 1));

        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(session.cursor_id.as_deref(), Some(id(8).as_str()));
        assert_eq!(session.total_processed, 7);
        assert_eq!(session.ingestion_records, 7);
        assert!(session.last_sync_at.is_some());
        assert!(matches!(manual(&syncer, &f.base, "s1").await.unwrap(), SyncOutcome::NothingPending { .. }));

        // A message at the cursor's timestamp but with a larger id is after it.
        f.store.insert_batch(&Batch { lf_messages: vec![message(0x10, "s1", 12, "late tie")], ..Batch::default() }).await.unwrap();
        let SyncOutcome::Completed(report) = manual(&syncer, &f.base, "s1").await.unwrap() else { panic!() };
        assert_eq!(report.messages, 1);
        let base = f.refreshed().await;
        let check = syncer.check(&base).await.unwrap();
        assert!(check.mismatches.is_empty(), "{:?}", check.mismatches);
        assert_eq!(check.observed.store_chunks, Some(11));
    }

    async fn vectors_live_in_pgvector_on_postgres_and_beside_the_metadata_on_sqlite(db) {
        let f = Fixture::new(&db, 50, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 6, 0).await;
        messages(&f.store, "s2", 100, 4, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        manual(&syncer, &f.base, "s1").await.unwrap();
        manual(&syncer, &f.base, "s2").await.unwrap();
        let kb = syncer.kb_location(&f.base).unwrap();
        assert!(kb.dir.join("embedding_metadata.json").is_file(), "Langflow's layout either way");
        let in_dir = kb.dir.join(memscope::kb::store::STORE_FILE).exists();
        match db.backend {
            memscope::store::Backend::Sqlite => assert!(in_dir),
            memscope::store::Backend::Postgres => {
                assert!(!in_dir, "no SQLite file on PostgreSQL");
                let rows = db.fetch("SELECT kb, count(*) FROM memscope_kb_chunk GROUP BY kb", &[common::Kind::Text, common::Kind::Int]).await;
                assert_eq!(rows, vec![vec![common::Value::Text(format!("{USERNAME}/{}", f.base.kb_name)), common::Value::Int(10)]]);
            }
            memscope::store::Backend::Mysql => unreachable!("db_tests! runs on SQLite and PostgreSQL"),
        }
        // Search, with and without the session filter, on both stores.
        let query = HashingEmbedder::default().embed_one("message 3 about topic 3");
        let store = VectorStore::open_existing(&kb).await.unwrap().unwrap();
        let hits = store.search(&query, 3, None).await.unwrap();
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[0].message_id, id(3));
        assert!(hits[0].distance < 1e-5, "{hits:?}");
        assert!(hits.windows(2).all(|w| w[0].distance <= w[1].distance));
        let hits = store.search(&query, 10, Some("s2")).await.unwrap();
        assert_eq!(hits.len(), 4);
        assert!(hits.iter().all(|h| h.session_id == "s2"));
        assert_eq!(hits[0].metadata["session_id"], "s2");
        store.close().await;

        // Another base of the same database keeps its own vectors.
        let other = syncer.kb_location(&MemoryBaseInfo { kb_name: "other_0000cafe".into(), ..f.base.clone() }).unwrap();
        assert!(VectorStore::open_existing(&other).await.unwrap().is_none());
        let store = VectorStore::open_or_create(&other, 384).await.unwrap();
        assert_eq!(store.stats().await.unwrap().chunks, 0);
        assert!(VectorStore::open_or_create(&other, 8).await.is_err(), "a dimension change is refused");
        store.close().await;
        memscope::kb::remove_kb(&other).await.unwrap();
        assert!(VectorStore::open_existing(&other).await.unwrap().is_none());
        assert_eq!(VectorStore::open_existing(&kb).await.unwrap().unwrap().stats().await.unwrap().chunks, 10);
    }

    async fn a_deleted_cursor_message_neither_rereads_nor_counts_twice(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 10, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        manual(&syncer, &f.base, "s1").await.unwrap();
        // The cursor's message goes (a trim, a delete): the newest message still recorded takes
        // its place, so nothing is pending and the next job reads only what is new.
        db.execute(&format!("DELETE FROM message WHERE id = '{}'", id(10))).await;
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(f.store.pending_count(&f.base, &session).await.unwrap(), 0);
        assert!(matches!(manual(&syncer, &f.base, "s1").await.unwrap(), SyncOutcome::NothingPending { .. }));
        messages(&f.store, "s1", 20, 2, 100).await;
        let SyncOutcome::Completed(report) = manual(&syncer, &f.base, "s1").await.unwrap() else { panic!() };
        assert_eq!(report.messages, 2, "only the new messages are read");
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(session.cursor_id.as_deref(), Some(id(21).as_str()));
        assert_eq!(session.total_processed, 12, "10 before and the 2 new ones");
        assert_eq!(session.ingestion_records, 11, "the deleted message's record went with it");
        assert!(f.kb_chunks_per_message().await.iter().all(|(_, n)| *n == 1), "no chunk twice");
    }

    async fn pending_counts_follow_the_threshold_unit(db) {
        let f = Fixture::new(&db, 3, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 10, 0).await;
        f.store.ensure_memory_base_session(&f.base.id, "s1").await.unwrap();
        let batch = Batch {
            jobs: vec![run_job(0x100, 5), run_job(0x101, 9)],
            ..Batch::default()
        };
        f.store.insert_batch(&batch).await.unwrap();
        for (run, at) in [(0x100, 5), (0x101, 9)] {
            f.store.record_workflow_run(&f.base.id, "s1", &id(run), time(at)).await.unwrap();
            // Recording twice is a no-op.
            f.store.record_workflow_run(&f.base.id, "s1", &id(run), time(at)).await.unwrap();
        }
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        // Messages: the 5 outputs (odd ids). Runs: 2 unstamped.
        assert_eq!(f.store.pending_count(&f.base, &session).await.unwrap(), 5);
        f.store.update_memory_base(&f.base.id, &MemoryBaseUpdate { unit: Some(ThresholdUnit::Runs), ..Default::default() }).await.unwrap();
        let runs_base = f.refreshed().await;
        assert_eq!(f.store.pending_count(&runs_base, &session).await.unwrap(), 2);

        let syncer = f.syncer(HashingEmbedder::default());
        assert!(syncer.is_due(&f.base, "s1").await.unwrap());
        assert!(!syncer.is_due(&runs_base, "s1").await.unwrap());
        manual(&syncer, &runs_base, "s1").await.unwrap();
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(session.pending_runs, 0, "the job stamped the runs");
        assert_eq!(f.store.pending_count(&f.base, &session).await.unwrap(), 0);
    }

    async fn a_held_lock_is_a_conflict_for_manual_and_a_skip_for_automatic(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 4, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        let lock = f.store.try_lock_session(&lock_name(&f.base.id, "s1"), Duration::from_secs(1)).await.unwrap().unwrap();
        assert!(f.store.try_lock_session(&lock_name(&f.base.id, "s1"), Duration::from_secs(1)).await.unwrap().is_none());
        assert!(matches!(manual(&syncer, &f.base, "s1").await, Err(SyncError::Conflict { .. })));
        let automatic = syncer.sync_session(&f.base, "s1", Trigger::Automatic, Duration::ZERO, None, &CancelFlag::default()).await;
        assert!(matches!(automatic, Ok(SyncOutcome::Skipped { .. })));
        // Another session is not blocked.
        messages(&f.store, "s2", 100, 2, 0).await;
        assert!(matches!(manual(&syncer, &f.base, "s2").await, Ok(SyncOutcome::Completed(_))));
        // A holder that vanishes without releasing (a killed process) frees the session: its
        // connection closes (PostgreSQL) or its lease expires (SQLite).
        drop(lock);
        let outcome = syncer.sync_session(&f.base, "s1", Trigger::Manual, Duration::from_secs(5), None, &CancelFlag::default()).await;
        assert!(matches!(outcome, Ok(SyncOutcome::Completed(_))), "{outcome:?}");
    }

    async fn a_duplicate_job_is_a_conflict(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 3, 0).await;
        f.store.create_ingestion_job(&id(0x900), &f.base.flow_id, &f.base.user_id, &f.base.id, &dedupe_key(&f.base.id, "s1", &id(3)), time(0)).await.unwrap();
        f.store.finish_job(&id(0x900), "completed", time(1)).await.unwrap();
        let syncer = f.syncer(HashingEmbedder::default());
        assert!(matches!(manual(&syncer, &f.base, "s1").await, Err(SyncError::Conflict { .. })));
        assert!(f.kb_chunks_per_message().await.is_empty());
    }

    async fn a_failing_embedder_rolls_back_its_chunks_and_keeps_the_cursor(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 4, 0).await;
        let good = f.syncer(HashingEmbedder::default());
        manual(&good, &f.base, "s1").await.unwrap();
        messages(&f.store, "s1", 10, 20, 100).await;
        // Pages of 5: the first three pages are written, the fourth fails.
        let failing = f.syncer(TestEmbedder { fail_from: Some(3), ..TestEmbedder::default() });
        let error = manual(&failing, &f.base, "s1").await.unwrap_err();
        assert!(matches!(error, SyncError::Embed(_)), "{error}");
        assert_eq!(f.kb_chunks_per_message().await.len(), 4, "only the first sync's chunks remain");
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(session.cursor_id.as_deref(), Some(id(4).as_str()));
        assert_eq!(session.total_processed, 4);
        let jobs = f.store.ingestion_jobs(Some(&f.base.id), 10).await.unwrap();
        assert_eq!(jobs[0].status, "failed");
        assert!(syncer_check_ok(&good, &f).await);

        let SyncOutcome::Completed(report) = manual(&good, &f.base, "s1").await.unwrap() else { panic!() };
        assert_eq!(report.messages, 20);
        assert_eq!(f.kb_chunks_per_message().await.len(), 24);
    }

    async fn a_cancelled_job_rolls_back(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 30, 0).await;
        let slow = f.syncer(TestEmbedder { delay: Duration::from_millis(100), ..TestEmbedder::default() });
        let base = f.base.clone();
        let cancel = CancelFlag::default();
        let flag = cancel.clone();
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let job = tokio::spawn(async move {
            slow.sync_session(&base, "s1", Trigger::Manual, Duration::ZERO, Some(&progress), &flag).await
        });
        // Cancel once something was written.
        while let Some(update) = updates.recv().await {
            if update.chunks_written > 0 {
                break;
            }
        }
        cancel.cancel();
        let result = job.await.unwrap();
        assert!(matches!(result, Err(SyncError::Cancelled(_))), "{result:?}");
        assert!(f.kb_chunks_per_message().await.is_empty());
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!((session.cursor_id, session.total_processed, session.ingestion_records), (None, 0, 0));
        assert_eq!(f.store.ingestion_jobs(Some(&f.base.id), 1).await.unwrap()[0].status, "cancelled");
    }

    async fn deleting_a_base_mid_sync_cancels_the_job_and_leaves_nothing(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 40, 0).await;
        let slow = f.syncer(TestEmbedder { delay: Duration::from_millis(100), ..TestEmbedder::default() });
        let base = f.base.clone();
        let (progress, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let job = tokio::spawn(async move {
            slow.sync_session(&base, "s1", Trigger::Manual, Duration::ZERO, Some(&progress), &CancelFlag::default()).await
        });
        while let Some(update) = updates.recv().await {
            if update.chunks_written > 0 {
                break;
            }
        }
        let deleter = f.syncer(HashingEmbedder::default());
        let kb = deleter.kb_location(&f.base).unwrap();
        let report = deleter.delete(&f.base, Duration::from_secs(20)).await.unwrap();
        assert_eq!(report.cancelled_jobs.len(), 1);
        let result = job.await.unwrap();
        assert!(matches!(result, Err(SyncError::Cancelled(_))), "{result:?}");
        assert!(!kb.dir.exists(), "KB directory removed");
        assert!(VectorStore::open_existing(&kb).await.unwrap().is_none(), "no orphan vectors");
        assert!(f.store.find_memory_bases(&f.base.id).await.unwrap().is_empty());
        for table in ["memory_base_session", "message_ingestion_record", "memory_base_workflow_run"] {
            let rows = db.fetch(&format!("SELECT count(*) FROM {table}"), &[common::Kind::Int]).await;
            assert_eq!(rows[0][0], common::Value::Int(0), "{table}");
        }
        assert_eq!(f.store.ingestion_jobs(None, 1).await.unwrap()[0].status, "cancelled");
    }

    async fn regenerate_rebuilds_a_deleted_kb_with_the_same_chunks(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 12, 0).await;
        messages(&f.store, "s2", 100, 7, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        manual(&syncer, &f.base, "s1").await.unwrap();
        manual(&syncer, &f.base, "s2").await.unwrap();
        let before = f.kb_chunks_per_message().await;
        assert_eq!(before.len(), 19);
        std::fs::remove_dir_all(syncer.kb_path(&f.base).unwrap()).unwrap();
        let check = syncer.check(&f.refreshed().await).await.unwrap();
        assert_eq!(check.mismatches, vec![Mismatch::DirectoryMissing]);

        let outcomes = syncer.regenerate(&f.base, None, &CancelFlag::default()).await.unwrap();
        let mut sessions: Vec<&str> = outcomes.iter().map(|(session, _)| session.as_str()).collect();
        sessions.sort();
        assert_eq!(sessions, ["s1", "s2"], "each outcome names its session");
        assert!(outcomes.iter().all(|(_, o)| matches!(o, Ok(SyncOutcome::Completed(_)))));
        assert_eq!(f.kb_chunks_per_message().await, before);
        let base = f.refreshed().await;
        assert_eq!(base.total_processed, 19);
        assert!(syncer.check(&base).await.unwrap().mismatches.is_empty());
    }

    async fn a_kb_is_rebuilt_from_the_ingestion_records_alone(db) {
        let f = Fixture::new(&db, 1, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 9, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        manual(&syncer, &f.base, "s1").await.unwrap();
        messages(&f.store, "s1", 100, 4, 50).await;
        let before = f.kb_chunks_per_message().await;
        std::fs::remove_dir_all(syncer.kb_path(&f.base).unwrap()).unwrap();
        std::fs::create_dir_all(syncer.kb_path(&f.base).unwrap()).unwrap();
        assert_eq!(syncer.rebuild_from_records(&f.base).await.unwrap(), 9);
        assert_eq!(f.kb_chunks_per_message().await, before, "pending messages stay out");
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!(session.cursor_id.as_deref(), Some(id(9).as_str()));
        assert!(syncer_check_ok(&syncer, &f).await);
    }

    async fn capture_records_runs_and_syncs_at_the_threshold(db) {
        let f = Fixture::new(&db, 2, ThresholdUnit::Runs).await;
        let syncer = f.syncer(HashingEmbedder::default());
        let turn: Vec<CapturedMessage> = serde_json::from_str(
            r#"[{"sender": "User", "text": "where is my parcel"},
                {"sender": "Machine", "text": "it ships tomorrow"}]"#,
        ).unwrap();
        let first = syncer.capture(&f.base.flow_id, "s1", None, &turn).await.unwrap();
        assert_eq!(first.message_ids.len(), 2);
        assert!(first.syncs.is_empty(), "1 run < threshold 2");
        let second = syncer.capture(&f.base.flow_id, "s1", Some(&id(0x77)), &turn).await.unwrap();
        assert_eq!(second.run_id, id(0x77));
        let [SyncOutcome::Completed(report)] = second.syncs.as_slice() else { panic!("{:?}", second.syncs) };
        assert_eq!(report.messages, 4);
        let session = f.store.memory_base_session(&f.base.id, "s1").await.unwrap().unwrap();
        assert_eq!((session.pending_runs, session.total_processed), (0, 4));
        let outputs = db.fetch("SELECT count(*) FROM message WHERE is_output AND run_id IS NOT NULL", &[common::Kind::Int]).await;
        assert_eq!(outputs[0][0], common::Value::Int(2));
    }

    async fn a_threshold_change_applies_at_the_next_check(db) {
        let f = Fixture::new(&db, 10, ThresholdUnit::Messages).await;
        messages(&f.store, "s1", 1, 6, 0).await;
        let syncer = f.syncer(HashingEmbedder::default());
        // The watcher starts tracking the session but 3 outputs < 10.
        assert!(syncer.watch_once(None, &CancelFlag::default()).await.unwrap().is_empty());
        assert!(f.store.memory_base_session(&f.base.id, "s1").await.unwrap().is_some());
        f.store.update_memory_base(&f.base.id, &MemoryBaseUpdate { threshold: Some(3), ..Default::default() }).await.unwrap();
        let events = syncer.watch_once(None, &CancelFlag::default()).await.unwrap();
        assert_eq!(events.len(), 1);
        assert!(matches!(events[0].result, Ok(SyncOutcome::Completed(_))));
        f.store.update_memory_base(&f.base.id, &MemoryBaseUpdate { auto_capture: Some(false), ..Default::default() }).await.unwrap();
        messages(&f.store, "s1", 50, 10, 100).await;
        assert!(syncer.watch_once(None, &CancelFlag::default()).await.unwrap().is_empty(), "auto-capture off");
    }
}

async fn syncer_check_ok<E: Embedder>(syncer: &Syncer<E>, f: &Fixture) -> bool {
    syncer
        .check(&f.refreshed().await)
        .await
        .unwrap()
        .mismatches
        .is_empty()
}

/// On a PostgreSQL server without pgvector (here: a fresh database and a role that may not
/// create extensions), KB operations fail with an error that says how to install it.
#[tokio::test]
async fn a_missing_pgvector_extension_is_a_clear_error() {
    use sqlx::{AssertSqlSafe, Connection};
    let Ok(admin_url) = std::env::var(common::PG_URL_VAR) else {
        eprintln!("skipped: {} is not set", common::PG_URL_VAR);
        return;
    };
    let suffix = format!("{}_{}", std::process::id(), uuid::Uuid::new_v4().simple());
    let (database, role) = (
        format!("mst_novector_{suffix}"),
        format!("mst_novector_{suffix}"),
    );
    let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    for sql in [
        format!("CREATE ROLE {role} LOGIN"),
        format!("CREATE DATABASE {database}"),
    ] {
        sqlx::raw_sql(AssertSqlSafe(sql))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let options = <sqlx::postgres::PgConnectOptions as std::str::FromStr>::from_str(&admin_url)
        .unwrap()
        .username(&role)
        .database(&database);
    let outcome = tokio::spawn(async move {
        let pool = sqlx::PgPool::connect_with(options).await.unwrap();
        let kb = memscope::kb::store::KbLocation {
            dir: tempfile::tempdir().unwrap().path().join("kb"),
            key: "ada/notes_00000000".into(),
            home: memscope::kb::store::VectorHome::Postgres(pool.clone()),
        };
        let error = VectorStore::open_or_create(&kb, 3)
            .await
            .err()
            .expect("no pgvector");
        pool.close().await;
        error.to_string()
    })
    .await;
    for sql in [
        format!("DROP DATABASE {database} WITH (FORCE)"),
        format!("DROP ROLE {role}"),
    ] {
        sqlx::raw_sql(AssertSqlSafe(sql))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let message = outcome.unwrap();
    assert!(message.contains("no pgvector extension"), "{message}");
    assert!(message.contains("CREATE EXTENSION vector"), "{message}");
}

//! Fault and concurrency tests driving the real binary, on SQLite and PostgreSQL: syncs killed
//! with SIGKILL at random points, two processes triggering the same session, a base deleted
//! mid-sync and a KB directory deleted by hand. They prove that nothing is lost or duplicated.

#[macro_use]
mod common;
mod mb_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::TestDb;
use mb_support::*;
use memscope::kb::embedder::HashingEmbedder;
use memscope::kb::store::{KbLocation, VectorStore};
use memscope::memory::memory_base::ThresholdUnit;
use memscope::store::Store;
use memscope::store::memory_bases::MemoryBaseInfo;
use memscope::sync::{SyncSettings, Syncer};
use rand::{Rng, SeedableRng};

const SESSION: &str = "s1";

struct Setup {
    store: Store,
    base: MemoryBaseInfo,
    dir: tempfile::TempDir,
    url: String,
}

impl Setup {
    async fn new(db: &TestDb, messages_in_session: u128) -> Setup {
        let store = Store::init(db.url()).await.expect("init");
        let base = base(&store, 1_000_000, ThresholdUnit::Messages).await;
        messages(&store, SESSION, 1, messages_in_session, 0).await;
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("config.toml"),
            format!("[storage]\nkb_root = {:?}\n", dir.path().join("kb")),
        )
        .expect("config");
        Setup {
            store,
            base,
            url: db.url().to_owned(),
            dir,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
        command
            .arg("--db")
            .arg(&self.url)
            .arg("--config")
            .arg(self.dir.path().join("config.toml"))
            .args(["mb", "--lease-secs", "1"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args).spawn().expect("memscope starts")
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("memscope runs")
    }

    fn sync(&self) -> Child {
        self.spawn(&["sync", &self.base.id, "--session", SESSION, "--wait", "10"])
    }

    fn kb_path(&self) -> PathBuf {
        self.dir
            .path()
            .join("kb")
            .join(USERNAME)
            .join(&self.base.kb_name)
    }

    /// The KB as the CLI sees it: vectors in the directory on SQLite, in pgvector on PostgreSQL.
    fn kb_location(&self) -> KbLocation {
        Syncer::new(
            self.store.clone(),
            HashingEmbedder::default(),
            SyncSettings::new(self.dir.path().join("kb")),
        )
        .kb_location(&self.base)
        .unwrap()
    }

    async fn chunks_per_message(&self) -> Vec<(String, i64)> {
        match VectorStore::open_existing(&self.kb_location())
            .await
            .unwrap()
        {
            Some(store) => store.chunks_per_message().await.unwrap(),
            None => Vec::new(),
        }
    }

    async fn message_ids(&self) -> Vec<String> {
        let timeline = self
            .store
            .session_timeline(&self.base.flow_id, SESSION)
            .await
            .unwrap();
        let mut ids: Vec<String> = timeline.pending(None).map(|p| p.id.clone()).collect();
        ids.sort();
        ids
    }

    /// Every message in the KB exactly once, and the cursor, totals and records agree.
    async fn assert_consistent_and_complete(&self) {
        let ids = self.message_ids().await;
        let chunks = self.chunks_per_message().await;
        assert_eq!(chunks.len(), ids.len(), "every message is in the KB");
        assert!(chunks.iter().all(|(_, n)| *n == 1), "exactly once");
        assert_eq!(
            chunks.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(),
            ids
        );
        let session = self
            .store
            .memory_base_session(&self.base.id, SESSION)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(session.ingestion_records, ids.len() as i64);
        assert_eq!(session.total_processed, ids.len() as i64);
        let timeline = self
            .store
            .session_timeline(&self.base.flow_id, SESSION)
            .await
            .unwrap();
        let last = timeline.pending(None).next_back().unwrap();
        assert_eq!(session.cursor_id.as_ref(), Some(&last.id));
    }
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

fn text(output: &Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn kill(child: &mut Child) {
    // SIGKILL: no destructor, no rollback, no lease release.
    let _ = child.kill();
    let _ = child.wait();
}

async fn wait_for_running_job(store: &Store, base: &MemoryBaseInfo) {
    for _ in 0..600 {
        let jobs = store.ingestion_jobs(Some(&base.id), 1).await.unwrap();
        if jobs.first().is_some_and(|j| j.is_active()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no job started");
}

const KILL_TRIALS: u64 = 50;

db_tests! {
    async fn syncs_killed_at_random_points_lose_and_duplicate_nothing(db) {
        let setup = Setup::new(&db, 600).await;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
        let mut next_message = 10_000u128;
        for trial in 0..KILL_TRIALS {
            let mut child = setup.sync();
            let delay = rng.random_range(0..700);
            tokio::time::sleep(Duration::from_millis(delay)).await;
            kill(&mut child);
            // New messages keep arriving between the crashes.
            messages(&setup.store, SESSION, next_message, 5, 1_000 + trial as i64 * 10).await;
            next_message += 5;
            let session = setup.store.memory_base_session(&setup.base.id, SESSION).await.unwrap();
            if let Some(session) = session {
                assert_eq!(session.total_processed, session.ingestion_records, "trial {trial}");
            }
        }
        let output = setup.run(&["sync", &setup.base.id, "--session", SESSION, "--wait", "10"]);
        assert_eq!(code(&output), 0, "{}", text(&output));
        setup.assert_consistent_and_complete().await;
        let check = setup.run(&["check", &setup.base.id]);
        assert_eq!(code(&check), 0, "{}", text(&check));
    }

    async fn two_processes_syncing_one_session_run_one_job(db) {
        let setup = Setup::new(&db, 4000).await;
        let first = setup.spawn(&["--json", "sync", &setup.base.id, "--session", SESSION]);
        let second = setup.spawn(&["--json", "sync", &setup.base.id, "--session", SESSION]);
        let outputs = [first.wait_with_output().unwrap(), second.wait_with_output().unwrap()];
        let codes: Vec<i32> = outputs.iter().map(code).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 4], "{}\n{}", text(&outputs[0]), text(&outputs[1]));
        let loser = &outputs[codes.iter().position(|c| *c == 4).unwrap()];
        assert!(String::from_utf8_lossy(&loser.stderr).contains("already syncing"), "{}", text(loser));
        let jobs = setup.store.ingestion_jobs(Some(&setup.base.id), 10).await.unwrap();
        assert_eq!(jobs.len(), 1, "{jobs:?}");
        setup.assert_consistent_and_complete().await;
    }

    async fn a_base_deleted_mid_sync_leaves_no_chunks_or_rows(db) {
        let setup = Setup::new(&db, 4000).await;
        let sync = setup.sync();
        wait_for_running_job(&setup.store, &setup.base).await;
        let delete = setup.run(&["delete", &setup.base.id, "--yes"]);
        assert_eq!(code(&delete), 0, "{}", text(&delete));
        let sync = sync.wait_with_output().unwrap();
        assert_ne!(code(&sync), 0, "the sync was cancelled: {}", text(&sync));
        assert!(!setup.kb_path().exists(), "KB directory removed: {}\n{}", text(&sync), text(&delete));
        assert!(VectorStore::open_existing(&setup.kb_location()).await.unwrap().is_none(), "no orphan vectors");
        for table in ["memory_base", "memory_base_session", "message_ingestion_record", "memory_base_workflow_run", "memscope_sync_lease"] {
            let rows = db.fetch(&format!("SELECT count(*) FROM {table}"), &[common::Kind::Int]).await;
            assert_eq!(rows[0][0], common::Value::Int(0), "{table}");
        }
        let jobs = db.fetch("SELECT status FROM job", &[common::Kind::Text]).await;
        assert_eq!(jobs, vec![vec![common::Value::Text("cancelled".into())]]);
    }

    async fn a_kb_directory_deleted_by_hand_is_detected_and_regenerated(db) {
        let setup = Setup::new(&db, 300).await;
        let output = setup.run(&["sync", &setup.base.id]);
        assert_eq!(code(&output), 0, "{}", text(&output));
        assert!(String::from_utf8_lossy(&output.stdout).contains("ingested 300 messages"), "{}", text(&output));
        let before = setup.chunks_per_message().await;
        std::fs::remove_dir_all(setup.kb_path()).unwrap();
        let check = setup.run(&["--json", "check", &setup.base.id]);
        assert_eq!(code(&check), 1, "{}", text(&check));
        assert!(String::from_utf8_lossy(&check.stdout).contains("directory_missing"));
        let refused = setup.run(&["regenerate", &setup.base.id]);
        assert_ne!(code(&refused), 0, "regenerate needs --yes");
        let regenerate = setup.run(&["regenerate", &setup.base.id, "--yes"]);
        assert_eq!(code(&regenerate), 0, "{}", text(&regenerate));
        assert_eq!(setup.chunks_per_message().await, before);
        assert_eq!(code(&setup.run(&["check", &setup.base.id])), 0);
        assert!(Path::new(&setup.kb_path().join("embedding_metadata.json")).exists());
    }
}

//! Memory-base syncs over timestamps other writers store (Python's `isoformat()`, JavaScript's
//! `toISOString()`, PostgreSQL's text output, naive UTC, other offsets), on SQLite and PostgreSQL:
//! the cursor compares instants, never text, so a sync ends, takes every message once and leaves
//! nothing pending.

#[macro_use]
mod common;
mod mb_support;

use std::time::Duration;

use common::TestDb;
use mb_support::*;
use memscope::kb::embedder::HashingEmbedder;
use memscope::kb::store::VectorStore;
use memscope::memory::memory_base::ThresholdUnit;
use memscope::store::Store;
use memscope::store::memory_bases::{MemoryBaseInfo, MemoryBaseSessionInfo};
use memscope::sync::{
    CancelFlag, JobProgress, SyncError, SyncOutcome, SyncSettings, Syncer, Trigger,
};
use tokio::sync::mpsc;

struct Fixture {
    store: Store,
    base: MemoryBaseInfo,
    kb_root: tempfile::TempDir,
}

impl Fixture {
    async fn new(db: &TestDb) -> Fixture {
        let store = Store::init(db.url()).await.expect("init");
        let base = base(&store, 1_000_000, ThresholdUnit::Messages).await;
        Fixture {
            store,
            base,
            kb_root: tempfile::tempdir().expect("kb root"),
        }
    }

    fn syncer(&self) -> Syncer<HashingEmbedder> {
        let mut settings = SyncSettings::new(self.kb_root.path());
        settings.batch_messages = 50;
        settings.lease = Duration::from_secs(5);
        Syncer::new(self.store.clone(), HashingEmbedder::default(), settings)
    }

    /// Syncs a session; a job that reports more messages done than its scope holds (the
    /// endless re-reading of the same messages) is cancelled, so it fails instead of hanging.
    async fn sync(&self, session: &str) -> Result<SyncOutcome, SyncError> {
        let (sender, mut receiver) = mpsc::unbounded_channel::<JobProgress>();
        let cancel = CancelFlag::default();
        let watchdog = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let mut overrun = None;
                while let Some(progress) = receiver.recv().await {
                    if progress.messages_done > progress.messages_total {
                        overrun = Some(progress.clone());
                        cancel.cancel();
                    }
                }
                overrun
            })
        };
        let result = self
            .syncer()
            .sync_session(
                &self.base,
                session,
                Trigger::Manual,
                Duration::ZERO,
                Some(&sender),
                &cancel,
            )
            .await;
        drop(sender);
        let overrun = watchdog.await.unwrap();
        assert_eq!(overrun, None, "the job read past its scope");
        result
    }

    async fn session_info(&self, session: &str) -> MemoryBaseSessionInfo {
        self.store
            .memory_base_session(&self.base.id, session)
            .await
            .unwrap()
            .expect("the session is tracked")
    }

    async fn pending(&self, session: &str) -> i64 {
        let info = self.session_info(session).await;
        self.store.pending_count(&self.base, &info).await.unwrap()
    }

    async fn recorded_messages(&self, session: &str) -> Vec<String> {
        let syncer = self.syncer();
        let Some(vectors) = VectorStore::open_existing(&syncer.kb_location(&self.base).unwrap())
            .await
            .unwrap()
        else {
            return Vec::new();
        };
        let chunks = vectors.chunks_per_message().await.unwrap();
        let info = self.session_info(session).await;
        assert!(
            chunks.iter().all(|(_, n)| *n == 1),
            "each message once: {chunks:?}"
        );
        assert_eq!(info.total_processed, info.ingestion_records);
        chunks.into_iter().map(|(m, _)| m).collect()
    }

    async fn cursor(&self, session: &str) -> Option<String> {
        self.session_info(session).await.cursor_id
    }

    async fn check_ok(&self) -> bool {
        let base = self
            .store
            .find_memory_bases(&self.base.id)
            .await
            .unwrap()
            .remove(0);
        let report = self.syncer().check(&base).await.unwrap();
        report.mismatches.is_empty()
    }
}

/// The forms the fault corpus found: a whole-millisecond fraction, a half second, a `Z` zone.
const CORPUS_FORMS: [&str; 3] = [".000000+00:00", ".500000+00:00", "Z"];

db_tests! {
    async fn messages_with_fractions_and_z_zones_sync_once_and_the_sync_ends(db) {
        let f = Fixture::new(&db).await;
        let stamps: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "2026-03-01T10:{:02}:{:02}{}",
                    i / 60,
                    i % 60,
                    CORPUS_FORMS[i % CORPUS_FORMS.len()]
                )
            })
            .collect();
        let raw: Vec<RawMessage> = stamps
            .iter()
            .enumerate()
            .map(|(i, stamp)| RawMessage {
                n: 1 + i as u128,
                session: "s1",
                timestamp: stamp,
                text: "a message about the weather",
                is_output: true,
                error: false,
            })
            .collect();
        db.execute(&raw_messages_sql(&raw)).await;
        f.store.ensure_memory_base_session(&f.base.id, "s1").await.unwrap();
        assert_eq!(f.pending("s1").await, 300);

        let outcome = f.sync("s1").await.unwrap();
        let SyncOutcome::Completed(report) = outcome else { panic!("{outcome:?}") };
        assert_eq!(report.messages, 300);
        assert_eq!(report.cursor_id, id(300));
        assert_eq!(f.recorded_messages("s1").await.len(), 300);
        assert_eq!(f.cursor("s1").await, Some(id(300)));
        assert_eq!(f.pending("s1").await, 0);
        let again = f.sync("s1").await.unwrap();
        assert!(matches!(again, SyncOutcome::NothingPending { .. }), "{again:?}");
        assert!(f.check_ok().await);
    }

    async fn the_newest_message_in_any_writers_form_is_ingested_not_passed(db) {
        let f = Fixture::new(&db).await;
        // Five messages in memscope's own form, then the newest in another writer's.
        let newest = [
            "2026-03-01T10:00:05.000000+00:00",
            "2026-03-01T10:00:05.500000+00:00",
            "2026-03-01T10:00:05Z",
            "2026-03-01 10:00:05",
            "2026-03-01 10:00:05.5+00",
            "2026-03-01T12:00:05+02:00",
            "2026-03-01T10:00:04.000001",
        ];
        let older: Vec<String> = (0..5).map(|s| format!("2026-03-01T10:00:0{s}+00:00")).collect();
        let sessions: Vec<String> = (0..newest.len()).map(|k| format!("s{k}")).collect();
        let mut raw = Vec::new();
        for (k, newest) in newest.iter().enumerate() {
            for (s, stamp) in older.iter().enumerate() {
                raw.push(RawMessage {
                    n: (k as u128 + 1) * 100 + s as u128,
                    session: &sessions[k],
                    timestamp: stamp,
                    text: "an older message",
                    is_output: true,
                    error: false,
                });
            }
            raw.push(RawMessage {
                n: (k as u128 + 1) * 100 + 99,
                session: &sessions[k],
                timestamp: newest,
                text: "the newest message",
                is_output: true,
                error: false,
            });
        }
        db.execute(&raw_messages_sql(&raw)).await;
        for (k, session) in sessions.iter().enumerate() {
            let newest_id = id((k as u128 + 1) * 100 + 99);
            f.store.ensure_memory_base_session(&f.base.id, session).await.unwrap();
            let outcome = f.sync(session).await.unwrap();
            let SyncOutcome::Completed(report) = outcome else { panic!("{}: {outcome:?}", newest[k]) };
            assert_eq!(report.messages, 6, "{}", newest[k]);
            assert_eq!(f.cursor(session).await, Some(newest_id.clone()), "{}", newest[k]);
            assert!(f.recorded_messages(session).await.contains(&newest_id), "{}", newest[k]);
            assert_eq!(f.pending(session).await, 0, "{}", newest[k]);
            let again = f.sync(session).await.unwrap();
            assert!(matches!(again, SyncOutcome::NothingPending { .. }), "{}: {again:?}", newest[k]);
        }
        assert_eq!(f.recorded_messages("s0").await.len(), 6 * newest.len());
        assert!(f.check_ok().await);
    }

    async fn error_messages_are_neither_pending_nor_ingested(db) {
        let f = Fixture::new(&db).await;
        let raw: Vec<RawMessage> = (0..6)
            .map(|i| RawMessage {
                n: 1 + i,
                session: "s1",
                timestamp: ["2026-03-01T10:00:00Z", "2026-03-01T10:00:01Z", "2026-03-01T10:00:02Z",
                    "2026-03-01T10:00:03Z", "2026-03-01T10:00:04Z", "2026-03-01T10:00:05Z"][i as usize],
                text: "text",
                is_output: true,
                // The second and the last messages are errors.
                error: i == 1 || i == 5,
            })
            .collect();
        db.execute(&raw_messages_sql(&raw)).await;
        f.store.ensure_memory_base_session(&f.base.id, "s1").await.unwrap();
        assert_eq!(f.pending("s1").await, 4);
        let outcome = f.sync("s1").await.unwrap();
        let SyncOutcome::Completed(report) = outcome else { panic!("{outcome:?}") };
        assert_eq!(report.messages, 4);
        assert_eq!(report.cursor_id, id(5));
        let mut recorded = f.recorded_messages("s1").await;
        recorded.sort();
        assert_eq!(recorded, vec![id(1), id(3), id(4), id(5)]);
        assert_eq!(f.pending("s1").await, 0);
        assert!(matches!(f.sync("s1").await.unwrap(), SyncOutcome::NothingPending { .. }));
    }
}

/// SQLite keeps whatever text a writer stored: a timestamp that is not one stops the sync with
/// an error naming the message and the text, and commits nothing.
#[tokio::test]
async fn an_unreadable_timestamp_is_a_clear_error_and_commits_nothing() {
    common::run_sqlite(|db| async move {
        let f = Fixture::new(&db).await;
        let raw = [
            RawMessage {
                n: 1,
                session: "s1",
                timestamp: "2026-03-01T10:00:00Z",
                text: "fine",
                is_output: true,
                error: false,
            },
            RawMessage {
                n: 2,
                session: "s1",
                timestamp: "yesterday at noon",
                text: "odd",
                is_output: true,
                error: false,
            },
        ];
        db.execute(&raw_messages_sql(&raw)).await;
        f.store
            .ensure_memory_base_session(&f.base.id, "s1")
            .await
            .unwrap();
        let error = f.sync("s1").await.unwrap_err().to_string();
        assert!(error.contains(&format!("message {}", id(2))), "{error}");
        assert!(
            error.contains("\"yesterday at noon\" is not a date and time"),
            "{error}"
        );
        assert_eq!(f.cursor("s1").await, None);
        assert!(f.recorded_messages("s1").await.is_empty());
    })
    .await;
}

mod sessions_with_any_timestamps {
    //! A property test on both backends: sessions whose messages carry random timestamp
    //! formats and precisions, ties and clock steps backwards, arriving in waves, synced with
    //! random interruptions. Each case is one session of one shared base; proptest generates
    //! the cases (deterministically seeded) and the bodies run on the test's own runtime.

    use super::*;
    use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
    use memscope::memory::memory_base::{MessagePosition, compare_ids};
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};

    const CASES: u32 = 14;

    /// One message: a step from the previous message's time (negative: the writer's clock
    /// stepped back; `None`: the same instant), the digits of its fraction and its text form.
    type Stamp = (Option<i64>, u32, u8);

    #[derive(Debug, Clone)]
    struct Case {
        /// Waves of messages; each wave starts after everything before it.
        waves: Vec<Vec<Stamp>>,
        /// For each wave, after how many progress reports its sync is cancelled (`None`: not).
        interrupt_after: Vec<Option<usize>>,
    }

    fn case_strategy(max_digits: u32) -> impl Strategy<Value = Case> {
        let stamp = (
            prop_oneof![1 => Just(None), 4 => (-5_000_000i64..9_000_000).prop_map(Some)],
            0..=max_digits,
            0u8..8,
        );
        proptest::collection::vec(proptest::collection::vec(stamp, 1..25), 1..4).prop_flat_map(
            |waves| {
                let n = waves.len();
                (
                    Just(waves),
                    proptest::collection::vec(proptest::option::of(1usize..6), n),
                )
                    .prop_map(|(waves, interrupt_after)| Case {
                        waves,
                        interrupt_after,
                    })
            },
        )
    }

    /// The instant cut to `digits` fraction digits, written in one of the writers' forms.
    fn written(instant: DateTime<Utc>, digits: u32, form: u8) -> (DateTime<Utc>, String) {
        let unit = 10i64.pow(9 - digits);
        let nanos = i64::from(instant.timestamp_subsec_nanos());
        let instant = instant - TimeDelta::nanoseconds(nanos % unit);
        let fraction = if digits == 0 {
            String::new()
        } else {
            format!(".{:0width$}", nanos / unit, width = digits as usize)
        };
        let plus_two = instant + TimeDelta::hours(2);
        let minus_half = instant - TimeDelta::minutes(330);
        let text = match form {
            0 => format!("{}{fraction}Z", instant.format("%Y-%m-%dT%H:%M:%S")),
            1 => format!("{}{fraction}+00:00", instant.format("%Y-%m-%dT%H:%M:%S")),
            2 => format!("{}{fraction}+02:00", plus_two.format("%Y-%m-%dT%H:%M:%S")),
            3 => format!("{}{fraction}", instant.format("%Y-%m-%d %H:%M:%S")),
            4 => format!("{}{fraction}+00", instant.format("%Y-%m-%d %H:%M:%S")),
            5 => format!("{}{fraction}-05:30", minus_half.format("%Y-%m-%dT%H:%M:%S")),
            6 => format!("{}{fraction}", instant.format("%Y-%m-%dT%H:%M:%S")),
            _ => instant.to_rfc3339_opts(SecondsFormat::AutoSi, false),
        };
        // memscope's own form keeps whatever precision the instant has left.
        (instant, text)
    }

    async fn run_case(f: &Fixture, db: &TestDb, number: u32, case: &Case) {
        let session = format!("case-{number}");
        let first_id = u128::from(number + 1) * 1_000_000;
        let mut clock = DateTime::<Utc>::from_timestamp(1_772_000_000, 0).unwrap();
        let mut expected: Vec<MessagePosition> = Vec::new();
        let mut next = first_id;
        for (wave, stamps) in case.waves.iter().enumerate() {
            // A wave starts after every earlier message: a clock step back within a wave may
            // reorder its own messages, never put one behind a committed cursor.
            let wave_start = expected.iter().map(|p| p.timestamp).max().unwrap_or(clock);
            clock = wave_start + TimeDelta::seconds(10);
            let mut texts = Vec::new();
            for (step, digits, form) in stamps {
                if let Some(step) = step {
                    clock = (clock + TimeDelta::microseconds(*step))
                        .max(wave_start + TimeDelta::seconds(1));
                }
                let (instant, text) = written(clock, *digits, *form);
                expected.push(MessagePosition {
                    timestamp: instant,
                    id: id(next),
                });
                texts.push((next, text));
                next += 1;
            }
            let raw: Vec<RawMessage> = texts
                .iter()
                .map(|(n, stamp)| RawMessage {
                    n: *n,
                    session: &session,
                    timestamp: stamp,
                    text: "note",
                    is_output: true,
                    error: false,
                })
                .collect();
            db.execute(&raw_messages_sql(&raw)).await;
            f.store
                .ensure_memory_base_session(&f.base.id, &session)
                .await
                .unwrap();
            if let Some(after) = case.interrupt_after[wave] {
                let _ = interrupted_sync(f, &session, after).await;
            }
        }
        let outcome = f.sync(&session).await.unwrap();
        assert!(
            matches!(
                outcome,
                SyncOutcome::Completed(_) | SyncOutcome::NothingPending { .. }
            ),
            "{outcome:?}"
        );
        expected.sort_by(|a, b| {
            a.timestamp
                .cmp(&b.timestamp)
                .then_with(|| compare_ids(&a.id, &b.id))
        });
        let info = f.session_info(&session).await;
        assert_eq!(
            info.cursor_id.as_deref(),
            Some(expected.last().unwrap().id.as_str())
        );
        assert_eq!(info.ingestion_records, expected.len() as i64);
        assert_eq!(info.total_processed, expected.len() as i64);
        let mut ingested: Vec<String> = f
            .recorded_messages(&session)
            .await
            .into_iter()
            .filter(|m| (first_id..next).any(|n| id(n) == *m))
            .collect();
        ingested.sort();
        let mut all: Vec<String> = expected.iter().map(|p| p.id.clone()).collect();
        all.sort();
        assert_eq!(ingested, all, "every message exactly once");
        assert_eq!(f.pending(&session).await, 0);
        assert!(f.check_ok().await);
    }

    /// A sync cancelled after `after` progress reports (if it has not finished by then).
    async fn interrupted_sync(
        f: &Fixture,
        session: &str,
        after: usize,
    ) -> Result<SyncOutcome, SyncError> {
        let (sender, mut receiver) = mpsc::unbounded_channel::<JobProgress>();
        let cancel = CancelFlag::default();
        let watcher = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let mut seen = 0;
                while receiver.recv().await.is_some() {
                    seen += 1;
                    if seen >= after {
                        cancel.cancel();
                    }
                }
            })
        };
        let mut syncer = f.syncer();
        syncer.settings.batch_messages = 3;
        let result = syncer
            .sync_session(
                &f.base,
                session,
                Trigger::Manual,
                Duration::ZERO,
                Some(&sender),
                &cancel,
            )
            .await;
        drop(sender);
        watcher.await.unwrap();
        result
    }

    db_tests! {
        async fn every_message_is_ingested_once_whatever_its_timestamp_and_interruptions(db) {
            let f = Fixture::new(&db).await;
            // PostgreSQL keeps microseconds: more digits would be rounded by the server.
            let max_digits = match db.backend { memscope::store::Backend::Sqlite => 9, memscope::store::Backend::Postgres | memscope::store::Backend::Mysql => 6 };
            let strategy = case_strategy(max_digits);
            let mut runner = TestRunner::new_with_rng(
                Config { cases: CASES, ..Config::default() },
                proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
            );
            let mut messages = 0;
            for number in 0..CASES {
                let case = strategy.new_tree(&mut runner).unwrap().current();
                messages += case.waves.iter().map(Vec::len).sum::<usize>();
                eprintln!("case {number}: {case:?}");
                run_case(&f, &db, number, &case).await;
            }
            eprintln!("{CASES} sessions, {messages} messages: each ingested exactly once");
        }
    }
}

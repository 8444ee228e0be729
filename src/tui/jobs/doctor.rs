//! The doctor's scan on a tokio task: one at a time, reporting how far it is several times a
//! second, and stopped where it is when cancelled.
//!
//! Cancelling takes two steps, because the scan of the messages runs where an abort cannot
//! reach: on SQLite it steps SQLite's C API on a blocking thread. The flag stops that thread
//! before its next row (and the sqlx stream of PostgreSQL at its next row); aborting the task
//! stops whichever phase it is in at its next await (the run and node checks, the storage reads).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use tokio::sync::mpsc::UnboundedSender;

use super::slot::{LoadReply, Slot, Tasks};
use crate::inspect::doctor::{DoctorSettings, messages_to_scan, run_until};
use crate::sources::conversation::SourceOptions;
use crate::sources::doctor::DEFAULT_KEEP_LAST;
use crate::storage::ObjectStore;
use crate::store::{CancelFlag, Store};
use crate::tui::update::JobEvent;
use crate::tui::update::doctor::{DoctorEvent, DoctorScan};

/// How often a running scan reports: often enough for the gauge and the elapsed time to move.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// Runs the doctor's effects.
pub struct DoctorRunner {
    store: Arc<Store>,
    /// Where Dify's files are, for the checks that read them; `None` when no storage is
    /// configured for this database (the scan then says the files were not checked).
    storage: Option<ObjectStore>,
    /// The one scan, in its slot.
    tasks: Tasks,
}

impl DoctorRunner {
    pub fn new(
        store: Arc<Store>,
        storage: Option<ObjectStore>,
        events: UnboundedSender<JobEvent>,
    ) -> DoctorRunner {
        DoctorRunner {
            store,
            storage,
            tasks: Tasks::new(events),
        }
    }

    /// Starts the scan requested as `generation`, stopping one still running.
    pub fn run(&mut self, generation: u64, scan_request: DoctorScan) {
        let settings = DoctorSettings {
            counter: scan_request.counter,
            budget: scan_request.budget,
            storage: self.storage.clone(),
            keep_last: DEFAULT_KEEP_LAST,
            options: SourceOptions::default(),
        };
        let stop = CancelFlag::default();
        let store = self.store.clone();
        let flag = stop.clone();
        self.tasks
            .load_until(Slot::Doctor, generation, stop, |reply| {
                scan(store, settings, flag, reply)
            });
    }

    /// Stops the running scan, if any (see the module's comment).
    pub fn cancel(&mut self) {
        self.tasks.stop(Slot::Doctor);
    }
}

/// Counts the messages, scans, and reports the count read so far every [`REPORT_EVERY`].
async fn scan(store: Arc<Store>, settings: DoctorSettings, stop: CancelFlag, reply: LoadReply) {
    let send = |event: DoctorEvent| {
        reply.send(event);
    };
    let total = match messages_to_scan(&store).await {
        Ok(total) => total,
        Err(error) => {
            let result = Err(failure(error));
            send(DoctorEvent::Finished {
                result,
                at: Utc::now(),
            });
            return;
        }
    };
    send(DoctorEvent::Started {
        total,
        at: Utc::now(),
    });
    let scanned = AtomicU64::new(0);
    let run = run_until(&store, &settings, &stop, |n| {
        scanned.store(n, Ordering::Relaxed);
    });
    tokio::pin!(run);
    let mut report_every = tokio::time::interval(REPORT_EVERY);
    let result = loop {
        tokio::select! {
            result = &mut run => break result,
            _ = report_every.tick() => send(DoctorEvent::Progress {
                scanned: scanned.load(Ordering::Relaxed),
                at: Utc::now(),
            }),
        }
    };
    let result = match result {
        Ok(Some(report)) => {
            // The view's figures are the last reported: the whole count, not the last tick's.
            send(DoctorEvent::Progress {
                scanned: scanned.load(Ordering::Relaxed),
                at: Utc::now(),
            });
            Ok(Box::new(report))
        }
        // Cancelled: the view already says where it stopped.
        Ok(None) => return,
        Err(error) => Err(failure(error)),
    };
    send(DoctorEvent::Finished {
        result,
        at: Utc::now(),
    });
}

/// Logs a failed scan and turns it into the text the view shows.
fn failure(error: impl std::fmt::Display) -> String {
    let text = error.to_string();
    tracing::warn!(error = %text, "doctor scan failed");
    text
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;
    use crate::demo::{BulkGenerator, BulkPlan};
    use crate::memory::tokens::{CounterKind, TokenCounter};
    use crate::storage::StorageBackend;
    use crate::tui::update::{LoadReport, Stamped};

    /// A runner over 10,000 generated messages in `dir`, and its reports.
    async fn bulk_runner(
        dir: &std::path::Path,
    ) -> (DoctorRunner, mpsc::UnboundedReceiver<JobEvent>) {
        let url = format!("sqlite://{}", dir.join("bulk.db").display());
        let store = Store::init(&url).await.unwrap();
        let plan = BulkPlan {
            conversations: 500,
            rows_per_conversation: 20,
            conversations_per_batch: 500,
        };
        for batch in BulkGenerator::new(7, "tenant", plan) {
            store.insert_batch(&batch).await.unwrap();
        }
        let storage = ObjectStore::open(&StorageBackend::Fs {
            root: dir.join("storage"),
        })
        .unwrap();
        let (events, reports) = mpsc::unbounded_channel();
        (
            DoctorRunner::new(Arc::new(store), Some(storage), events),
            reports,
        )
    }

    fn scan() -> DoctorScan {
        DoctorScan {
            counter: TokenCounter::for_model(CounterKind::Raw, "gpt-4o"),
            budget: 2_000,
        }
    }

    #[tokio::test]
    async fn a_finished_scan_reports_its_whole_count_before_its_result() {
        let dir = tempfile::tempdir().unwrap();
        let (mut runner, mut reports) = bulk_runner(dir.path()).await;
        runner.run(1, scan());
        let mut last_count = None;
        loop {
            let Some(JobEvent::Load(Stamped { value, .. })) = reports.recv().await else {
                panic!("the scan ended without a result");
            };
            match value {
                LoadReport::Doctor(DoctorEvent::Progress { scanned, .. }) => {
                    last_count = Some(scanned)
                }
                LoadReport::Doctor(DoctorEvent::Finished { result, .. }) => {
                    assert!(result.is_ok(), "{result:?}");
                    break;
                }
                _ => {}
            }
        }
        assert_eq!(last_count, Some(10_000));
    }

    #[tokio::test]
    async fn cancelling_ends_the_job_without_a_result() {
        let dir = tempfile::tempdir().unwrap();
        let (mut runner, mut reports) = bulk_runner(dir.path()).await;
        runner.run(1, scan());
        // One runtime thread: the scan runs only while this test waits, so it cannot get
        // further than its start before the cancel.
        let started = reports.recv().await;
        assert!(
            matches!(
                started,
                Some(JobEvent::Load(Stamped {
                    generation: 1,
                    value: LoadReport::Doctor(DoctorEvent::Started { total: 10_000, .. })
                }))
            ),
            "{started:?}"
        );
        runner.cancel();
        drop(runner);
        // The job's task is gone (its sender with it) and never reported a result.
        while let Some(event) = reports.recv().await {
            assert!(
                matches!(
                    event,
                    JobEvent::Load(Stamped {
                        value: LoadReport::Doctor(DoctorEvent::Progress { .. }),
                        ..
                    })
                ),
                "{event:?}"
            );
        }
    }
}

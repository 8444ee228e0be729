//! Memory-base work on tokio tasks: loads (latest wins, one slot each), writes and syncs (each
//! its own task, never aborted by a later request), and the watcher. Running jobs report their
//! progress as they go; everything comes back as [`MbEvent`]s on the runner's channel.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::task::JoinHandle;

use crate::inspect::memory_bases as view;
use crate::inspect::syncers::watch_pass;
use crate::kb::embedder::HASHING_MODEL;
use crate::store::Store;
use crate::store::memory_bases::MemoryBaseInfo;
use crate::sync::{CancelFlag, JobProgress, MbSettings, SessionSync, SyncError, Trigger};
use crate::tui::update::{JobEvent, MbEffect, MbEvent, SyncResult};

/// How long quitting waits for a job to roll back or commit before dropping it.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy)]
enum Slot {
    Bases,
    Sessions,
    Jobs,
    Search,
}

const SLOTS: usize = 4;

/// Runs memory-base effects; the watcher is started separately.
pub struct MbRunner {
    store: Arc<Store>,
    config: Arc<MbSettings>,
    events: UnboundedSender<JobEvent>,
    loads: [Option<JoinHandle<()>>; SLOTS],
    /// Writes and syncs in flight, each with the flag that stops it.
    writes: Vec<(JoinHandle<()>, CancelFlag)>,
    watcher: Option<(JoinHandle<()>, CancelFlag)>,
}

fn send(events: &UnboundedSender<JobEvent>, event: MbEvent) {
    let _ = events.send(JobEvent::MemoryBases(event));
}

/// A progress channel whose reports reach the screen, stamped with the time they arrived.
fn progress_to(events: UnboundedSender<JobEvent>, automatic: bool) -> UnboundedSender<JobProgress> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<JobProgress>();
    tokio::spawn(async move {
        while let Some(progress) = receiver.recv().await {
            let event = MbEvent::Progress {
                progress,
                at: Utc::now(),
                automatic,
            };
            if events.send(JobEvent::MemoryBases(event)).is_err() {
                return;
            }
        }
    });
    sender
}

/// A sync's result as the screen reports it; `session_id` when the caller knows it (a whole
/// base's sync reports its sessions' results without their ids).
fn sync_result(
    session_id: Option<&str>,
    result: Result<crate::sync::SyncOutcome, SyncError>,
) -> SyncResult {
    match result {
        Ok(outcome) => SyncResult::from_outcome(outcome),
        Err(SyncError::Conflict { session, .. }) => SyncResult::Conflict {
            session_id: session,
        },
        Err(SyncError::Cancelled(job_id)) => SyncResult::Failed {
            session_id: session_id.map(str::to_owned),
            error: format!("job {job_id} was cancelled"),
            job_id: Some(job_id),
        },
        Err(error) => SyncResult::Failed {
            session_id: session_id.map(str::to_owned),
            job_id: None,
            error: error.to_string(),
        },
    }
}

/// A whole base's results, each with its session.
fn session_results(outcomes: Vec<SessionSync>) -> Vec<SyncResult> {
    outcomes
        .into_iter()
        .map(|(session, result)| sync_result(Some(&session), result))
        .collect()
}

impl MbRunner {
    pub fn new(
        store: Arc<Store>,
        config: MbSettings,
        events: UnboundedSender<JobEvent>,
    ) -> MbRunner {
        MbRunner {
            store,
            config: Arc::new(config),
            events,
            loads: Default::default(),
            writes: Vec::new(),
            watcher: None,
        }
    }

    pub fn run(&mut self, effect: MbEffect) {
        let store = self.store.clone();
        let config = self.config.clone();
        let events = self.events.clone();
        let load =
            |slot: Slot, task: JoinHandle<()>, loads: &mut [Option<JoinHandle<()>>; SLOTS]| {
                if let Some(previous) = loads[slot as usize].replace(task) {
                    previous.abort();
                }
            };
        let cancel = CancelFlag::default();
        let task = match effect {
            MbEffect::LoadBases { generation } => {
                let task = tokio::spawn(async move {
                    let result = view::statuses(&store, &config).await.map_err(report);
                    send(&events, MbEvent::Bases { generation, result });
                });
                return load(Slot::Bases, task, &mut self.loads);
            }
            MbEffect::LoadSessions { generation, base } => {
                let task = tokio::spawn(async move {
                    let result = match config.syncer(Store::clone(&store), &base.embedding_model) {
                        Ok(syncer) => view::sessions(&syncer, &base).await.map_err(report),
                        Err(error) => Err(report(error)),
                    };
                    send(&events, MbEvent::Sessions { generation, result });
                });
                return load(Slot::Sessions, task, &mut self.loads);
            }
            MbEffect::LoadJobs { generation, limit } => {
                let task = tokio::spawn(async move {
                    let mut result = store.ingestion_jobs(None, limit).await.map_err(report);
                    if let Ok(jobs) = &mut result {
                        jobs.sort_by_key(|job| !job.is_active());
                    }
                    let now = Utc::now();
                    send(
                        &events,
                        MbEvent::Jobs {
                            generation,
                            result,
                            now,
                        },
                    );
                });
                return load(Slot::Jobs, task, &mut self.loads);
            }
            MbEffect::Search {
                generation,
                base,
                query,
                top_k,
            } => {
                let task = tokio::spawn(async move {
                    let result = match config.syncer(Store::clone(&store), &base.embedding_model) {
                        Ok(syncer) => view::search(&syncer, &base, &query, None, top_k)
                            .await
                            .map_err(report),
                        Err(error) => Err(report(error)),
                    };
                    send(&events, MbEvent::Hits { generation, result });
                });
                return load(Slot::Search, task, &mut self.loads);
            }
            MbEffect::Sync { base, session } => {
                let flag = cancel.clone();
                tokio::spawn(async move {
                    let progress = progress_to(events.clone(), false);
                    let result =
                        sync(&store, &config, &base, session.as_deref(), &progress, &flag).await;
                    send(
                        &events,
                        MbEvent::Synced {
                            base_name: base.name.clone(),
                            result,
                        },
                    );
                })
            }
            MbEffect::Regenerate(base) => {
                let flag = cancel.clone();
                tokio::spawn(async move {
                    let progress = progress_to(events.clone(), false);
                    let result = match config.syncer(Store::clone(&store), &base.embedding_model) {
                        Ok(syncer) => {
                            match syncer.regenerate(&base, Some(&progress), &flag).await {
                                Ok(outcomes) => Ok(session_results(outcomes)),
                                Err(error) => Err(report(error)),
                            }
                        }
                        Err(error) => Err(report(error)),
                    };
                    send(
                        &events,
                        MbEvent::Synced {
                            base_name: base.name.clone(),
                            result,
                        },
                    );
                })
            }
            MbEffect::Update { base, update } => tokio::spawn(async move {
                let result = store
                    .update_memory_base(&base.id, &update)
                    .await
                    .map(|_| {
                        let mut changes = Vec::new();
                        if let Some(threshold) = update.threshold {
                            let unit = update
                                .unit
                                .map_or(base.threshold_unit.as_str(), |u| u.as_str());
                            changes.push(format!(
                                "threshold {} {unit} (applies at the next check)",
                                crate::inspect::thousands(threshold)
                            ));
                        }
                        if let Some(auto) = update.auto_capture {
                            changes
                                .push(format!("auto-capture {}", if auto { "on" } else { "off" }));
                        }
                        format!("{}: {}", base.name, changes.join(", "))
                    })
                    .map_err(report);
                send(&events, MbEvent::Written { result });
            }),
            MbEffect::CheckCreate(request) => tokio::spawn(async move {
                let result = view::check_new_base(&store, &config, &request)
                    .await
                    .map(|_| ())
                    .map_err(report);
                send(&events, MbEvent::CreateChecked { request, result });
            }),
            MbEffect::Create(request) => tokio::spawn(async move {
                let result = view::create_base(&store, &config, &request)
                    .await
                    .map(|id| format!("created memory base {} ({id})", request.name))
                    .map_err(report);
                send(&events, MbEvent::Created { result });
            }),
            MbEffect::Delete(base) => tokio::spawn(async move {
                let result = match config.syncer(Store::clone(&store), &base.embedding_model) {
                    Ok(syncer) => syncer
                        .delete(&base, config.delete_wait())
                        .await
                        .map(|r| {
                            format!(
                                "deleted memory base {} ({} job(s) cancelled), removed {}",
                                base.name,
                                r.cancelled_jobs.len(),
                                r.kb_path.display()
                            )
                        })
                        .map_err(report),
                    Err(error) => Err(report(error)),
                };
                send(&events, MbEvent::Written { result });
            }),
            MbEffect::CancelJob { job_id } => tokio::spawn(async move {
                // Cancelling marks the job's row; the process running it notices at its next
                // check, so any syncer can cancel any job.
                let result = match config.syncer(Store::clone(&store), HASHING_MODEL) {
                    Ok(syncer) => syncer.cancel_job(&job_id).await.map_err(report),
                    Err(error) => Err(report(error)),
                };
                send(&events, MbEvent::Cancelled { job_id, result });
            }),
        };
        self.writes.retain(|(task, _)| !task.is_finished());
        self.writes.push((task, cancel));
    }

    /// Starts the watcher: every `[memory_bases] watch_interval_secs`, one pass over the auto-capture bases, its
    /// jobs reported like the TUI's own.
    pub fn start_watcher(&mut self) {
        if self.watcher.is_some() {
            return;
        }
        let (store, config, events) =
            (self.store.clone(), self.config.clone(), self.events.clone());
        let stop = CancelFlag::default();
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let progress = progress_to(events.clone(), true);
            while !flag.is_cancelled() {
                match watch_pass(&config, &store, Some(&progress), &flag).await {
                    Ok(checks) => {
                        for check in checks {
                            send(&events, MbEvent::Watched(check));
                        }
                    }
                    Err(error) => send(&events, MbEvent::WatchFailed(report(error))),
                }
                // Sleep in short steps, so quitting does not wait out the interval.
                let until = tokio::time::Instant::now() + config.watch_interval;
                while !flag.is_cancelled() && tokio::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
        self.watcher = Some((task, stop));
    }

    /// Stops the watcher and every running sync: each rolls back at its next check; whatever
    /// has not finished within a few seconds is dropped (its lease then expires).
    pub async fn shutdown(&mut self) {
        let mut tasks = Vec::new();
        for (task, flag) in self.writes.drain(..).chain(self.watcher.take()) {
            flag.cancel();
            tasks.push(task);
        }
        for task in tasks {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_WAIT, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

/// A manual sync of one session, or of every session of the base.
async fn sync(
    store: &Store,
    config: &MbSettings,
    base: &MemoryBaseInfo,
    session: Option<&str>,
    progress: &UnboundedSender<JobProgress>,
    cancel: &CancelFlag,
) -> Result<Vec<SyncResult>, String> {
    let syncer = config
        .syncer(store.clone(), &base.embedding_model)
        .map_err(report)?;
    match session {
        Some(session) => {
            let result = syncer
                .sync_session(
                    base,
                    session,
                    Trigger::Manual,
                    Duration::ZERO,
                    Some(progress),
                    cancel,
                )
                .await;
            Ok(vec![sync_result(Some(session), result)])
        }
        None => {
            let outcomes = syncer
                .sync_base(
                    base,
                    Trigger::Manual,
                    Duration::ZERO,
                    Some(progress),
                    cancel,
                )
                .await
                .map_err(report)?;
            Ok(session_results(outcomes))
        }
    }
}

/// Logs a job failure and turns it into the text the screen shows.
fn report(error: impl std::fmt::Display) -> String {
    super::slot::report(error)
}

//! Memory-base work on tokio tasks: loads (latest wins, one slot each, reported as stamped
//! [`MbLoaded`]s), writes and syncs (each its own task, never aborted by a later request), and
//! the watcher. Running jobs report their progress as they go, as [`MbEvent`]s on the runner's
//! channel.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::sync::mpsc::{self, UnboundedSender};

use super::slot::{Reply, Slot, Tasks, report};
use crate::inspect::memory_bases as view;
use crate::inspect::syncers::watch_pass;
use crate::kb::embedder::HASHING_MODEL;
use crate::store::Store;
use crate::store::memory_bases::{MemoryBaseInfo, MemoryBaseUpdate};
use crate::sync::{CancelFlag, JobProgress, MbSettings, SessionSync, SyncError, Trigger};
use crate::tui::update::{JobEvent, MbEffect, MbEvent, MbLoad, MbLoaded, SyncResult};

/// Runs memory-base effects; the watcher is started separately.
pub struct MbRunner {
    store: Arc<Store>,
    config: Arc<MbSettings>,
    /// The loads, and the writes and syncs in flight with the flags that stop them (the
    /// watcher's too).
    tasks: Tasks,
    watching: bool,
}

/// A progress channel whose reports reach the screen, stamped with the time they arrived.
fn progress_to(reply: Reply, automatic: bool) -> UnboundedSender<JobProgress> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<JobProgress>();
    tokio::spawn(async move {
        while let Some(progress) = receiver.recv().await {
            let event = MbEvent::Progress {
                progress,
                at: Utc::now(),
                automatic,
            };
            if !reply.send(event) {
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
            tasks: Tasks::new(events),
            watching: false,
        }
    }

    /// Starts the load requested as `generation` in its slot.
    pub fn load(&mut self, generation: u64, load: MbLoad) {
        let store = self.store.clone();
        let config = self.config.clone();
        match load {
            MbLoad::Bases => self
                .tasks
                .load(Slot::Bases, generation, |reply| async move {
                    let result = view::statuses(&store, &config).await.map_err(report);
                    reply.send(MbLoaded::Bases(result));
                }),
            MbLoad::Sessions { base } => {
                self.tasks
                    .load(Slot::Sessions, generation, |reply| async move {
                        let syncer = config.syncer(Store::clone(&store), &base.embedding_model);
                        let result = match syncer {
                            Ok(syncer) => view::sessions(&syncer, &base).await.map_err(report),
                            Err(error) => Err(report(error)),
                        };
                        reply.send(MbLoaded::Sessions(result));
                    })
            }
            MbLoad::Jobs { limit } => self.tasks.load(Slot::Jobs, generation, |reply| async move {
                let mut result = store.ingestion_jobs(None, limit).await.map_err(report);
                if let Ok(jobs) = &mut result {
                    jobs.sort_by_key(|job| !job.is_active());
                }
                let now = Utc::now();
                reply.send(MbLoaded::Jobs { result, now });
            }),
            MbLoad::Search { base, query, top_k } => {
                self.tasks
                    .load(Slot::Search, generation, |reply| async move {
                        let result =
                            match config.syncer(Store::clone(&store), &base.embedding_model) {
                                Ok(syncer) => view::search(&syncer, &base, &query, None, top_k)
                                    .await
                                    .map_err(report),
                                Err(error) => Err(report(error)),
                            };
                        reply.send(MbLoaded::Hits(result));
                    })
            }
        }
    }

    pub fn run(&mut self, effect: MbEffect) {
        let store = self.store.clone();
        let config = self.config.clone();
        let reply = self.tasks.reply();
        let flag = CancelFlag::default();
        let cancel = flag.clone();
        match effect {
            MbEffect::Sync { base, session } => self.tasks.write(flag, async move {
                let scope = session.as_deref().map_or(Scope::Base, Scope::Session);
                let progress = progress_to(reply.clone(), false);
                let result = sync(&store, &config, &base, scope, &progress, &cancel).await;
                let base_name = base.name.clone();
                reply.send(MbEvent::Synced { base_name, result });
            }),
            MbEffect::Regenerate(base) => self.tasks.write(flag, async move {
                let progress = progress_to(reply.clone(), false);
                let result = sync(
                    &store,
                    &config,
                    &base,
                    Scope::Regenerate,
                    &progress,
                    &cancel,
                );
                let base_name = base.name.clone();
                let result = result.await;
                reply.send(MbEvent::Synced { base_name, result });
            }),
            MbEffect::Update { base, update } => self.tasks.write(flag, async move {
                let result = store
                    .update_memory_base(&base.id, &update)
                    .await
                    .map(|_| describe_update(&base, &update))
                    .map_err(report);
                reply.send(MbEvent::Written { result });
            }),
            MbEffect::CheckCreate(request) => self.tasks.write(flag, async move {
                let result = view::check_new_base(&store, &config, &request)
                    .await
                    .map(|_| ())
                    .map_err(report);
                reply.send(MbEvent::CreateChecked { request, result });
            }),
            MbEffect::Create(request) => self.tasks.write(flag, async move {
                let result = view::create_base(&store, &config, &request)
                    .await
                    .map(|id| format!("created memory base {} ({id})", request.name))
                    .map_err(report);
                reply.send(MbEvent::Created { result });
            }),
            MbEffect::Delete(base) => self.tasks.write(flag, async move {
                let result = delete(&store, &config, &base).await;
                reply.send(MbEvent::Written { result });
            }),
            MbEffect::CancelJob { job_id } => self.tasks.write(flag, async move {
                // Cancelling marks the job's row; the process running it notices at its next
                // check, so any syncer can cancel any job.
                let result = match config.syncer(Store::clone(&store), HASHING_MODEL) {
                    Ok(syncer) => syncer.cancel_job(&job_id).await.map_err(report),
                    Err(error) => Err(report(error)),
                };
                reply.send(MbEvent::Cancelled { job_id, result });
            }),
        }
    }

    /// Starts the watcher: every `[memory_bases] watch_interval_secs`, one pass over the auto-capture bases, its
    /// jobs reported like the TUI's own.
    pub fn start_watcher(&mut self) {
        if self.watching {
            return;
        }
        self.watching = true;
        let (store, config, reply) = (self.store.clone(), self.config.clone(), self.tasks.reply());
        let stop = CancelFlag::default();
        let flag = stop.clone();
        self.tasks.write(stop, async move {
            let progress = progress_to(reply.clone(), true);
            while !flag.is_cancelled() {
                match watch_pass(&config, &store, Some(&progress), &flag).await {
                    Ok(checks) => {
                        for check in checks {
                            reply.send(MbEvent::Watched(check));
                        }
                    }
                    Err(error) => {
                        reply.send(MbEvent::WatchFailed(report(error)));
                    }
                }
                // Sleep in short steps, so quitting does not wait out the interval.
                let until = tokio::time::Instant::now() + config.watch_interval;
                while !flag.is_cancelled() && tokio::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
    }

    /// Stops the watcher and every running sync (see [`Tasks::shutdown`]).
    pub async fn shutdown(&mut self) {
        self.tasks.shutdown().await;
    }
}

/// What an update changed, as the screen reports it.
fn describe_update(base: &MemoryBaseInfo, update: &MemoryBaseUpdate) -> String {
    let mut changes = Vec::new();
    if let Some(threshold) = update.threshold {
        let unit = update
            .unit
            .map_or(base.threshold_unit.as_str(), |u| u.as_str());
        changes.push(format!(
            "threshold {} {unit} (applies at the next check)",
            crate::format::thousands(threshold)
        ));
    }
    if let Some(auto) = update.auto_capture {
        changes.push(format!("auto-capture {}", if auto { "on" } else { "off" }));
    }
    format!("{}: {}", base.name, changes.join(", "))
}

/// Deletes a base (cancelling its jobs and removing its knowledge base); says what it did.
async fn delete(
    store: &Store,
    config: &MbSettings,
    base: &MemoryBaseInfo,
) -> Result<String, String> {
    let syncer = config
        .syncer(Store::clone(store), &base.embedding_model)
        .map_err(report)?;
    syncer
        .delete(base, config.delete_wait())
        .await
        .map(|r| {
            format!(
                "deleted memory base {} ({} cancelled), removed {}",
                base.name,
                crate::format::count(r.cancelled_jobs.len() as u64, "job"),
                r.kb_path.display()
            )
        })
        .map_err(report)
}

/// What a manual sync covers.
enum Scope<'a> {
    Session(&'a str),
    Base,
    /// The base's chunks dropped and every session synced again.
    Regenerate,
}

/// A manual sync of one session, of every session of the base, or a regenerate.
async fn sync(
    store: &Store,
    config: &MbSettings,
    base: &MemoryBaseInfo,
    scope: Scope<'_>,
    progress: &UnboundedSender<JobProgress>,
    cancel: &CancelFlag,
) -> Result<Vec<SyncResult>, String> {
    let syncer = config
        .syncer(store.clone(), &base.embedding_model)
        .map_err(report)?;
    match scope {
        Scope::Session(session) => {
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
        Scope::Regenerate => match syncer.regenerate(base, Some(progress), cancel).await {
            Ok(outcomes) => Ok(session_results(outcomes)),
            Err(error) => Err(report(error)),
        },
        Scope::Base => {
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

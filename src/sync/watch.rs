//! The watcher: notices messages and runs other processes wrote and starts automatic syncs for
//! auto-capture memory bases whose sessions reached their threshold. It runs in the TUI process
//! and headless as `memscope watch`. Each check reads the thresholds afresh, so an edited
//! threshold applies at the next check; a running job keeps its scope.

use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

use super::error::SyncError;
use super::job::{JobProgress, SyncOutcome, Trigger};
use super::syncer::Syncer;
use crate::kb::embedder::Embedder;
use crate::memory::memory_base::threshold_reached;
use crate::store::CancelFlag;

/// What one check did for one session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatchEvent {
    pub memory_base: String,
    pub session_id: String,
    pub pending: i64,
    pub threshold: i64,
    /// The sync's outcome, or its error.
    pub result: Result<SyncOutcome, String>,
}

impl<E: Embedder> Syncer<E> {
    /// One pass over every auto-capture memory base: tracks sessions that appeared on its flow
    /// and syncs those due.
    pub async fn watch_once(
        &self,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<Vec<WatchEvent>, SyncError> {
        let mut events = Vec::new();
        self.store.sweep_abandoned_jobs(chrono::Utc::now()).await?;
        for base in self.store.memory_bases().await? {
            // Bases built with another embedder are another syncer's to watch.
            if !base.auto_capture || !self.embeds_for(&base) {
                continue;
            }
            for session_id in self.store.flow_sessions(&base.flow_id).await? {
                self.store
                    .ensure_memory_base_session(&base.id, &session_id)
                    .await?;
            }
            for session in self.store.memory_base_sessions(&base.id).await? {
                let pending = self.store.pending_count(&base, &session).await?;
                if !threshold_reached(pending, base.threshold) {
                    continue;
                }
                let result = self
                    .sync_session(
                        &base,
                        &session.session_id,
                        Trigger::Automatic,
                        Duration::ZERO,
                        progress,
                        cancel,
                    )
                    .await
                    .map_err(|e| e.to_string());
                events.push(WatchEvent {
                    memory_base: base.name.clone(),
                    session_id: session.session_id,
                    pending,
                    threshold: base.threshold,
                    result,
                });
            }
        }
        Ok(events)
    }

    /// Checks every `interval` until `stop` is set, sending each event. Stops early on a
    /// database error.
    pub async fn watch(
        &self,
        interval: Duration,
        events: &mpsc::UnboundedSender<WatchEvent>,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        stop: &CancelFlag,
    ) -> Result<(), SyncError> {
        while !stop.is_cancelled() {
            for event in self.watch_once(progress, stop).await? {
                if events.send(event).is_err() {
                    return Ok(());
                }
            }
            tokio::time::sleep(interval).await;
        }
        Ok(())
    }
}

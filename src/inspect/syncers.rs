//! The watcher pass shared by `memscope watch` and the TUI: each memory base embeds with the
//! model it was created with, so the pass runs one syncer per model of the auto-capture bases.

use tokio::sync::mpsc;

use crate::store::Store;
use crate::sync::watch::WatchEvent;
use crate::sync::{CancelFlag, JobProgress, MbSettings, SyncError};

/// One watcher pass over every auto-capture base, each synced with its own embedder: what
/// `memscope watch` runs every interval and the TUI runs as a task.
pub async fn watch_pass(
    settings: &MbSettings,
    store: &Store,
    progress: Option<&mpsc::UnboundedSender<JobProgress>>,
    cancel: &CancelFlag,
) -> Result<Vec<WatchEvent>, SyncError> {
    let mut models: Vec<String> = store
        .memory_bases()
        .await?
        .into_iter()
        .filter(|b| b.auto_capture)
        .map(|b| b.embedding_model)
        .collect();
    models.sort();
    models.dedup();
    let mut events = Vec::new();
    for model in models {
        let syncer = settings.syncer(store.clone(), &model)?;
        events.extend(syncer.watch_once(progress, cancel).await?);
    }
    Ok(events)
}

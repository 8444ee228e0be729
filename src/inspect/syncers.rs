//! How syncers are built, for the CLI and the TUI alike: each memory base embeds with the model
//! it was created with (hashing offline, or an OpenAI-compatible embeddings server), so every
//! action on a base builds the syncer for its model, and the watcher runs one per model.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::kb::embedder::{AnyEmbedder, HASHING_MODEL, HashingEmbedder};
use crate::kb::openai::{API_KEY_ENV, OpenAiConfig, OpenAiEmbedder, OpenAiError};
use crate::store::Store;
use crate::sync::watch::WatchEvent;
use crate::sync::{CancelFlag, DEFAULT_LEASE, JobProgress, SyncError, SyncSettings, Syncer};

/// The embeddings server's URL, for bases whose model is not hashing.
pub const EMBEDDINGS_URL_ENV: &str = "MEMSCOPE_EMBEDDINGS_URL";
/// The dimension of that server's vectors.
pub const EMBEDDINGS_DIMENSION_ENV: &str = "MEMSCOPE_EMBEDDINGS_DIMENSION";
/// The SQLite sync lease in seconds.
pub const LEASE_ENV: &str = "MEMSCOPE_SYNC_LEASE_SECS";

pub const DEFAULT_DIMENSION: usize = 384;
pub const DEFAULT_BATCH: usize = 64;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum SyncerError {
    #[error(
        "embedding model {0} needs an embeddings server: set --embeddings-url or \
         MEMSCOPE_EMBEDDINGS_URL"
    )]
    NoServer(String),
    #[error(transparent)]
    OpenAi(#[from] OpenAiError),
}

/// What a syncer is built from, apart from the store and the base's model.
#[derive(Debug, Clone)]
pub struct SyncerConfig {
    pub kb_root: PathBuf,
    pub embeddings_url: Option<String>,
    pub embeddings_dimension: usize,
    pub embeddings_batch: usize,
    pub embeddings_timeout: Duration,
    pub lease: Duration,
}

impl SyncerConfig {
    /// The defaults, with the embeddings server and lease the environment names (what the TUI
    /// uses; the CLI's flags read the same variables).
    pub fn from_env(kb_root: PathBuf) -> SyncerConfig {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        SyncerConfig {
            kb_root,
            embeddings_url: std::env::var(EMBEDDINGS_URL_ENV)
                .ok()
                .filter(|u| !u.is_empty()),
            embeddings_dimension: number(EMBEDDINGS_DIMENSION_ENV)
                .map_or(DEFAULT_DIMENSION, |d| d as usize),
            embeddings_batch: DEFAULT_BATCH,
            embeddings_timeout: DEFAULT_TIMEOUT,
            lease: number(LEASE_ENV).map_or(DEFAULT_LEASE, Duration::from_secs),
        }
    }

    /// The embedder for a base's model: hashing, or the embeddings server.
    pub fn embedder(&self, model: &str) -> Result<AnyEmbedder, SyncerError> {
        if model.is_empty() || model == HASHING_MODEL {
            return Ok(AnyEmbedder::Hashing(HashingEmbedder::default()));
        }
        let base_url = self
            .embeddings_url
            .clone()
            .ok_or_else(|| SyncerError::NoServer(model.to_owned()))?;
        let embedder = OpenAiEmbedder::new(OpenAiConfig {
            base_url,
            model: model.to_owned(),
            dimension: self.embeddings_dimension,
            api_key: std::env::var(API_KEY_ENV).ok().filter(|k| !k.is_empty()),
            batch_size: self.embeddings_batch,
            timeout: self.embeddings_timeout,
            retries: 3,
        })?;
        Ok(AnyEmbedder::OpenAi(embedder))
    }

    /// A syncer of `store` for bases embedded with `model`.
    pub fn syncer(&self, store: &Store, model: &str) -> Result<Syncer, SyncerError> {
        let settings = SyncSettings {
            lease: self.lease.max(Duration::from_secs(1)),
            ..SyncSettings::new(self.kb_root.clone())
        };
        Ok(Syncer::new(store.clone(), self.embedder(model)?, settings))
    }

    /// How long a delete waits for a running job to let go of its session: one lease and a
    /// margin, so a job of a killed process has expired by then.
    pub fn delete_wait(&self) -> Duration {
        self.lease + Duration::from_secs(5)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Syncer(#[from] SyncerError),
    #[error(transparent)]
    Sync(#[from] SyncError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// One watcher pass over every auto-capture base, each synced with its own embedder: what
/// `memscope watch` runs every interval and the TUI runs as a task.
pub async fn watch_pass(
    config: &SyncerConfig,
    store: &Store,
    progress: Option<&mpsc::UnboundedSender<JobProgress>>,
    cancel: &CancelFlag,
) -> Result<Vec<WatchEvent>, WatchError> {
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
        let syncer = config.syncer(store, &model)?;
        events.extend(syncer.watch_once(progress, cancel).await?);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: Option<&str>) -> SyncerConfig {
        SyncerConfig {
            kb_root: PathBuf::from("/kb"),
            embeddings_url: url.map(str::to_owned),
            embeddings_dimension: DEFAULT_DIMENSION,
            embeddings_batch: DEFAULT_BATCH,
            embeddings_timeout: DEFAULT_TIMEOUT,
            lease: DEFAULT_LEASE,
        }
    }

    #[test]
    fn hashing_needs_no_server_and_other_models_do() {
        use crate::kb::embedder::Embedder;
        let offline = config(None);
        assert_eq!(offline.embedder("").unwrap().model(), HASHING_MODEL);
        assert_eq!(
            offline.embedder(HASHING_MODEL).unwrap().model(),
            HASHING_MODEL
        );
        assert!(matches!(
            offline.embedder("nomic-embed-text"),
            Err(SyncerError::NoServer(m)) if m == "nomic-embed-text"
        ));
        let served = config(Some("http://127.0.0.1:9"));
        assert_eq!(
            served.embedder("nomic-embed-text").unwrap().model(),
            "nomic-embed-text"
        );
    }
}

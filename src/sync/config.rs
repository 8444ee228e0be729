//! Memory-base settings from `config.toml` (`[memory_bases]`, and `[storage] kb_root`) with the
//! CLI's overrides, and the syncers built from them: one function for the CLI and the TUI.

use std::path::PathBuf;
use std::time::Duration;

use super::error::SyncError;
use super::syncer::{SyncSettings, Syncer};
use crate::config::Resolved;
use crate::kb::embedder::{AnyEmbedder, HASHING_MODEL, HashingEmbedder};
use crate::kb::openai::{OpenAiConfig, OpenAiEmbedder};
use crate::store::Store;

/// The memory-base settings in effect.
#[derive(Debug, Clone, PartialEq)]
pub struct MbSettings {
    pub kb_root: PathBuf,
    /// Where Langflow keeps the knowledge bases of a database it made.
    pub langflow_kb_root: PathBuf,
    /// The model of new memory bases.
    pub embedding_model: String,
    pub embeddings_url: Option<String>,
    pub embeddings_dimension: usize,
    pub embeddings_batch: usize,
    pub embeddings_timeout: Duration,
    pub embeddings_retries: u32,
    /// The environment variable holding the embeddings server's API key.
    pub embeddings_api_key_env: String,
    pub lease: Duration,
    pub batch_messages: i64,
    pub watch_interval: Duration,
}

/// Values given on the command line (or by `MEMSCOPE_*` variables); `None` keeps the config's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MbOverrides {
    pub embeddings_url: Option<String>,
    pub embeddings_dimension: Option<usize>,
    pub embeddings_batch: Option<usize>,
    pub embeddings_timeout_secs: Option<u64>,
    pub lease_secs: Option<u64>,
    pub watch_interval_secs: Option<u64>,
}

impl MbSettings {
    /// `[memory_bases]` and the KB root of the resolved configuration.
    pub fn from_config(resolved: &Resolved) -> MbSettings {
        let mb = &resolved.config.memory_bases;
        MbSettings {
            kb_root: resolved.kb_root.clone(),
            langflow_kb_root: langflow_kb_root(&resolved.config.storage.kb_root),
            embedding_model: mb.embedding_model.clone(),
            embeddings_url: Some(mb.embeddings_url.clone()).filter(|u| !u.is_empty()),
            embeddings_dimension: mb.embeddings_dimension,
            embeddings_batch: mb.embeddings_batch,
            embeddings_timeout: Duration::from_secs(mb.embeddings_timeout_secs),
            embeddings_retries: mb.embeddings_retries,
            embeddings_api_key_env: mb.embeddings_api_key_env.clone(),
            lease: Duration::from_secs(mb.lease_secs),
            batch_messages: mb.batch_messages,
            watch_interval: Duration::from_secs(mb.watch_interval_secs),
        }
    }

    /// These settings with the overrides applied.
    pub fn with(mut self, overrides: &MbOverrides) -> MbSettings {
        if let Some(url) = overrides.embeddings_url.clone().filter(|u| !u.is_empty()) {
            self.embeddings_url = Some(url);
        }
        let seconds =
            |value: Option<u64>, current: Duration| value.map_or(current, Duration::from_secs);
        self.embeddings_dimension = overrides
            .embeddings_dimension
            .unwrap_or(self.embeddings_dimension);
        self.embeddings_batch = overrides.embeddings_batch.unwrap_or(self.embeddings_batch);
        self.embeddings_timeout =
            seconds(overrides.embeddings_timeout_secs, self.embeddings_timeout);
        self.lease = seconds(overrides.lease_secs, self.lease);
        self.watch_interval = seconds(overrides.watch_interval_secs, self.watch_interval);
        self
    }

    /// The sync settings: KB root, lease (at least a second) and batch size.
    pub fn sync_settings(&self) -> SyncSettings {
        SyncSettings {
            lease: self.lease.max(Duration::from_secs(1)),
            batch_messages: self.batch_messages.max(1),
            langflow_kb_root: self.langflow_kb_root.clone(),
            ..SyncSettings::new(self.kb_root.clone())
        }
    }

    /// The embedder of `model` (empty: the hashing embedder): hashing, or the embeddings server.
    pub fn embedder(&self, model: &str) -> Result<AnyEmbedder, SyncError> {
        if model.is_empty() || model == HASHING_MODEL {
            return Ok(AnyEmbedder::Hashing(HashingEmbedder::default()));
        }
        let Some(base_url) = self.embeddings_url.clone() else {
            return Ok(AnyEmbedder::Unconfigured {
                model: model.to_owned(),
                dimension: self.embeddings_dimension,
            });
        };
        let api_key = std::env::var(&self.embeddings_api_key_env)
            .ok()
            .filter(|key| !key.is_empty());
        let embedder = OpenAiEmbedder::new(OpenAiConfig {
            base_url,
            model: model.to_owned(),
            dimension: self.embeddings_dimension,
            api_key,
            batch_size: self.embeddings_batch.max(1),
            timeout: self.embeddings_timeout.max(Duration::from_secs(1)),
            retries: self.embeddings_retries,
        })
        .map_err(crate::kb::embedder::EmbedError::from)?;
        Ok(AnyEmbedder::OpenAi(embedder))
    }

    /// How long a delete waits for a running job to let go of its session: one lease and a
    /// margin, so a job of a killed process has expired by then.
    pub fn delete_wait(&self) -> Duration {
        self.lease + Duration::from_secs(5)
    }

    /// A syncer embedding with `model` (a memory base's `embedding_model`). Its KB root is the
    /// database's own (`kb::kb_home`), a copied file's included: no syncer reaches another
    /// database's KBs.
    pub fn syncer(&self, store: Store, model: &str) -> Result<Syncer, SyncError> {
        let home = crate::kb::database_home(&self.kb_root, &store);
        home.prepare().map_err(|source| SyncError::Io {
            path: home.root.clone(),
            source,
        })?;
        let settings = SyncSettings {
            kb_root: home.root,
            ..self.sync_settings()
        };
        Ok(Syncer::new(store, self.embedder(model)?, settings))
    }
}

/// Langflow's knowledge-bases directory: `[storage] kb_root` when the configuration sets it,
/// else Langflow's own `LANGFLOW_KNOWLEDGE_BASES_DIR`, else its default
/// `~/.langflow/knowledge_bases`.
fn langflow_kb_root(configured: &str) -> PathBuf {
    if !configured.is_empty() {
        return PathBuf::from(configured);
    }
    if let Some(dir) = std::env::var_os("LANGFLOW_KNOWLEDGE_BASES_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".langflow").join("knowledge_bases")
}

/// A syncer for the configured default embedding model, from the resolved configuration alone:
/// what the TUI builds. For a base with another model use
/// `MbSettings::from_config(resolved).syncer(store, &base.embedding_model)`.
pub fn syncer_from_config(store: Store, resolved: &Resolved) -> Result<Syncer, SyncError> {
    let settings = MbSettings::from_config(resolved);
    settings.syncer(store, &settings.embedding_model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Dirs, Overrides, resolve};
    use crate::kb::embedder::Embedder;

    fn resolved(user_toml: &str) -> (tempfile::TempDir, Resolved) {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            data: tmp.path().join("data"),
            config: tmp.path().join("config"),
        };
        std::fs::create_dir_all(&dirs.config).unwrap();
        std::fs::write(dirs.user_config_file(), user_toml).unwrap();
        let resolved = resolve(dirs, &Overrides::default()).unwrap();
        (tmp, resolved)
    }

    #[test]
    fn the_documented_defaults() {
        let (_tmp, resolved) = resolved("");
        let settings = MbSettings::from_config(&resolved);
        assert_eq!(settings.embedding_model, HASHING_MODEL);
        assert_eq!(settings.embeddings_url, None);
        assert_eq!(settings.embeddings_dimension, 384);
        assert_eq!(settings.lease, Duration::from_secs(30));
        assert_eq!(settings.watch_interval, Duration::from_secs(2));
        assert_eq!(settings.kb_root, resolved.kb_root);
        let sync = settings.sync_settings();
        assert_eq!(sync.lease, crate::sync::syncer::DEFAULT_LEASE);
        assert_eq!(sync.batch_messages, 2000);
    }

    #[tokio::test]
    async fn config_values_reach_the_syncer_and_flags_override_them() {
        // The syncer records its database file in the KB root: a directory of the test's own.
        let kb = tempfile::tempdir().unwrap();
        let kb_root = kb.path().join("srv-kb");
        let (tmp, resolved) = resolved(&format!(
            "[storage]\nkb_root = {:?}\n\
             [memory_bases]\nembedding_model = \"nomic-embed-text\"\n\
             embeddings_url = \"http://127.0.0.1:9/\"\nembeddings_dimension = 768\n\
             embeddings_batch = 8\nembeddings_timeout_secs = 5\n\
             lease_secs = 7\nbatch_messages = 50\nwatch_interval_secs = 9\n",
            kb_root.display().to_string()
        ));
        let url = crate::config::sqlite_url(&tmp.path().join("m.db"));
        let store = Store::init(&url).await.unwrap();
        let syncer = syncer_from_config(store.clone(), &resolved).unwrap();
        assert_eq!(syncer.embedder.model(), "nomic-embed-text");
        assert_eq!(syncer.embedder.dimension(), 768);
        assert_eq!(
            syncer.settings.kb_root,
            crate::kb::database_kb_root(&kb_root, store.database_id())
        );
        assert!(
            syncer.settings.kb_root.starts_with(&kb_root),
            "the database's own directory under the configured root"
        );
        assert_eq!(syncer.settings.lease, Duration::from_secs(7));
        assert_eq!(syncer.settings.batch_messages, 50);

        let settings = MbSettings::from_config(&resolved).with(&MbOverrides {
            embeddings_dimension: Some(1024),
            lease_secs: Some(3),
            watch_interval_secs: Some(1),
            ..MbOverrides::default()
        });
        assert_eq!(settings.watch_interval, Duration::from_secs(1));
        assert_eq!(settings.embeddings_batch, 8, "not overridden");
        let syncer = settings.syncer(store.clone(), "nomic-embed-text").unwrap();
        assert_eq!(syncer.embedder.dimension(), 1024);
        assert_eq!(syncer.settings.lease, Duration::from_secs(3));
        let hashing = settings.syncer(store.clone(), "").unwrap();
        assert_eq!(hashing.embedder.model(), HASHING_MODEL);

        // Without a server a base of that model still reads; embedding says what to set.
        let (_tmp, plain) = self::resolved("[memory_bases]\nembedding_model = \"bge-m3\"\n");
        let unconfigured = syncer_from_config(store.clone(), &plain).unwrap();
        assert_eq!(unconfigured.embedder.model(), "bge-m3");
        let error = unconfigured
            .embedder
            .embed(&["hello".to_owned()])
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("MEMSCOPE_EMBEDDINGS_URL"),
            "{error}"
        );
        store.close().await;
    }
}

//! Knowledge bases as Langflow lays them out: `{kb_root}/{username}/{kb_name}/` holding
//! `embedding_metadata.json` and the vector store. Memory bases write theirs here.

pub mod embedder;
mod home;
pub mod openai;
pub mod pgvector;
pub mod rows;
pub mod splitter;
pub mod sqlite_vec;
pub mod store;

pub use home::{DATABASE_DIR_PREFIX, KbHome, database_home, database_kb_root, kb_home};

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::memory::memory_base::KbObservation;
use store::{KbLocation, StoreStats, VectorStore, VectorStoreError};

pub const METADATA_FILE: &str = "embedding_metadata.json";

/// A KB still where every database used to share one directory (`{kb_root}/{user}/{kb}`), when
/// the database's own directory for it (`kb_dir`, under [`database_kb_root`]) does not exist:
/// memscope never guesses whose it is, `mb check` and `info` say where it is and what to do.
pub fn left_in_shared_layout(
    kb_root: &Path,
    database_id: Option<&str>,
    kb_dir: &Path,
) -> Option<PathBuf> {
    let own_root = database_kb_root(kb_root, database_id);
    let shared = kb_root.join(kb_dir.strip_prefix(&own_root).ok()?);
    (shared != kb_dir && !kb_dir.exists() && shared.join(METADATA_FILE).exists()).then_some(shared)
}

/// What to do about a KB [`left_in_shared_layout`].
pub fn shared_layout_advice(base_name: &str, shared: &Path, own: &Path) -> String {
    format!(
        "its knowledge base is still at {}, where databases used to share knowledge bases: if \
         it belongs to this database, move it to {}; otherwise `memscope mb regenerate \
         {base_name:?} --yes` rebuilds it here",
        shared.display(),
        own.display()
    )
}

/// A knowledge base's directory.
pub fn kb_dir(kb_root: &Path, username: &str, kb_name: &str) -> PathBuf {
    kb_root.join(username).join(kb_name)
}

/// Reads `embedding_metadata.json`; `None` when it is missing or not a JSON object.
pub fn read_metadata(dir: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = std::fs::read_to_string(dir.join(METADATA_FILE)).ok()?;
    match serde_json::from_str(&text).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The embedder a KB was built with, as recorded in its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingInfo {
    pub provider: String,
    pub model: String,
    pub dimension: usize,
}

/// Writes `embedding_metadata.json` with the store's statistics, keeping the `id` and
/// `created_at` of an earlier file. Written to a temporary file and renamed, so a reader never
/// sees half a file. The directory must exist: a KB deleted meanwhile is not recreated.
pub fn write_metadata(
    dir: &Path,
    embedding: &EmbeddingInfo,
    stats: &StoreStats,
    created_at: DateTime<Utc>,
) -> std::io::Result<()> {
    let previous = read_metadata(dir).unwrap_or_default();
    let keep = |key: &str, default: Value| previous.get(key).cloned().unwrap_or(default);
    let average = if stats.chunks == 0 {
        0.0
    } else {
        (stats.characters as f64 / stats.chunks as f64 * 10.0).round() / 10.0
    };
    let metadata = json!({
        "id": keep("id", Value::String(uuid::Uuid::new_v4().to_string())),
        "embedding_provider": embedding.provider,
        "embedding_model": embedding.model,
        "dimension": embedding.dimension,
        "is_memory_base": true,
        "created_at": keep("created_at", Value::String(created_at.to_rfc3339())),
        "chunks": stats.chunks,
        "words": stats.words,
        "characters": stats.characters,
        "avg_chunk_size": average,
        "size": directory_size(dir),
        "source_types": ["memory"],
        "chunk_size": splitter::CHUNK_SIZE,
        "chunk_overlap": splitter::CHUNK_OVERLAP,
        "separator": null,
    });
    let temporary = dir.join(format!(
        ".{METADATA_FILE}.{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&temporary, serde_json::to_vec_pretty(&metadata)?)?;
    std::fs::rename(&temporary, dir.join(METADATA_FILE))
}

/// Bytes under `dir`, recursively (Langflow's `size`).
pub fn directory_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => directory_size(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

/// What a KB holds (its directory and its vector store), for the mismatch rules. An unreadable
/// store counts as missing.
pub async fn observe(kb: &KbLocation) -> KbObservation {
    let dir = kb.dir.as_path();
    let metadata = read_metadata(dir);
    let field = |key: &str| metadata.as_ref().and_then(|m| m.get(key));
    let stats = match VectorStore::open_existing(kb).await {
        Ok(Some(store)) => {
            let stats = store.stats().await.ok();
            store.close().await;
            stats
        }
        Ok(None) | Err(_) => None,
    };
    KbObservation {
        directory_exists: dir.is_dir(),
        metadata_chunks: field("chunks").and_then(Value::as_i64),
        store_chunks: stats.map(|s| s.chunks),
        store_messages: stats.map(|s| s.messages),
        embedding_model: field("embedding_model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        // The demo writes `embedding_dimension`; memscope's ingestion writes `dimension`.
        dimension: field("dimension")
            .or_else(|| field("embedding_dimension"))
            .and_then(Value::as_i64),
    }
}

/// Removes a KB directory; a missing one is already removed.
pub fn remove_kb_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Removes a whole KB: its vectors wherever they live, then its directory.
pub async fn remove_kb(kb: &KbLocation) -> Result<(), KbError> {
    VectorStore::drop_kb(kb).await?;
    remove_kb_dir(&kb.dir).map_err(|source| KbError::Io {
        path: kb.dir.clone(),
        source,
    })
}

/// One knowledge base found on disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KbListing {
    pub username: String,
    pub kb_name: String,
    pub path: PathBuf,
    /// `is_memory_base: true` or `"memory"` in `source_types`.
    pub is_memory_base: bool,
    pub chunks: Option<i64>,
    pub embedding_model: Option<String>,
}

/// Every KB under `kb_root`, memory bases marked; dot-directories (Langflow's deleted KBs) and
/// the per-database directories of other memscope databases are skipped.
pub fn list_kbs(kb_root: &Path) -> Vec<KbListing> {
    let visible_dirs = |dir: &Path| -> Vec<(String, PathBuf)> {
        let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
            .filter(|(name, _)| !name.starts_with('.'))
            .filter(|(name, _)| !name.starts_with(DATABASE_DIR_PREFIX))
            .collect();
        found.sort();
        found
    };
    let mut listings = Vec::new();
    for (username, user_dir) in visible_dirs(kb_root) {
        for (kb_name, path) in visible_dirs(&user_dir) {
            let metadata = read_metadata(&path).unwrap_or_default();
            let is_memory_base = metadata.get("is_memory_base") == Some(&Value::Bool(true))
                || metadata
                    .get("source_types")
                    .and_then(Value::as_array)
                    .is_some_and(|types| types.iter().any(|t| t == "memory"));
            listings.push(KbListing {
                username: username.clone(),
                kb_name,
                is_memory_base,
                chunks: metadata.get("chunks").and_then(Value::as_i64),
                embedding_model: metadata
                    .get("embedding_model")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                path,
            });
        }
    }
    listings
}

/// Errors of KB file operations.
#[derive(Debug, thiserror::Error)]
pub enum KbError {
    #[error(transparent)]
    Store(#[from] VectorStoreError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_has_its_own_kb_root_and_old_kbs_are_found() {
        let root = Path::new("/kb");
        assert_eq!(database_kb_root(root, None), root);
        assert_eq!(database_kb_root(root, Some("ab12")), root.join("db-ab12"));
        assert_eq!(
            database_kb_root(root, Some("../..")),
            root,
            "never a path outside"
        );
        assert_ne!(
            database_kb_root(root, Some("a")),
            database_kb_root(root, Some("b"))
        );

        let dir = tempfile::tempdir().unwrap();
        let own = kb_dir(&database_kb_root(dir.path(), Some("x1")), "ada", "notes");
        assert_eq!(left_in_shared_layout(dir.path(), Some("x1"), &own), None);
        let shared = kb_dir(dir.path(), "ada", "notes");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(shared.join(METADATA_FILE), "{}").unwrap();
        assert_eq!(
            left_in_shared_layout(dir.path(), Some("x1"), &own),
            Some(shared.clone())
        );
        assert_eq!(left_in_shared_layout(dir.path(), None, &shared), None);
        std::fs::create_dir_all(&own).unwrap();
        assert_eq!(left_in_shared_layout(dir.path(), Some("x1"), &own), None);
    }

    #[test]
    fn metadata_keeps_identity_and_counts_stats() {
        let dir = tempfile::tempdir().unwrap();
        let kb = kb_dir(dir.path(), "alice", "notes_0123abcd");
        std::fs::create_dir_all(&kb).unwrap();
        let info = EmbeddingInfo {
            provider: "memscope".into(),
            model: "hashing-lexical".into(),
            dimension: 384,
        };
        let stats = StoreStats {
            chunks: 4,
            messages: 3,
            words: 10,
            characters: 42,
        };
        write_metadata(&kb, &info, &stats, Utc::now()).unwrap();
        let first = read_metadata(&kb).unwrap();
        write_metadata(&kb, &info, &StoreStats::default(), Utc::now()).unwrap();
        let second = read_metadata(&kb).unwrap();
        assert_eq!(first["id"], second["id"]);
        assert_eq!(first["created_at"], second["created_at"]);
        assert_eq!(first["chunks"], 4);
        assert_eq!(first["avg_chunk_size"], 10.5);
        assert_eq!(first["source_types"], json!(["memory"]));
        assert_eq!(second["chunks"], 0);

        std::fs::create_dir_all(dir.path().join("alice/plain_kb")).unwrap();
        std::fs::create_dir_all(dir.path().join("alice/.deleted_x")).unwrap();
        let listed = list_kbs(dir.path());
        assert_eq!(listed.len(), 2);
        assert!(
            listed
                .iter()
                .any(|k| k.kb_name == "notes_0123abcd" && k.is_memory_base)
        );
        assert!(
            listed
                .iter()
                .any(|k| k.kb_name == "plain_kb" && !k.is_memory_base)
        );
        remove_kb_dir(&kb).unwrap();
        remove_kb_dir(&kb).unwrap();
        assert!(write_metadata(&kb, &info, &stats, Utc::now()).is_err());
        assert!(!kb.exists(), "a deleted KB is not recreated");
    }

    #[tokio::test]
    async fn observation_of_a_missing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let seen = observe(&KbLocation::embedded(dir.path().join("gone"))).await;
        assert!(!seen.directory_exists);
        assert_eq!(seen.store_chunks, None);
    }
}

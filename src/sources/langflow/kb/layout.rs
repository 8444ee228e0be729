//! Where Langflow keeps a knowledge base and how it reads one back, shared by its two backends:
//! the backend names a `knowledge_base` row carries, the sqlite backend's file path, and a
//! stored chunk as a search hit.

use std::path::{Path, PathBuf};

use crate::kb::rows::SearchHit;
use crate::store::memory_bases::LangflowKbRow;

/// Langflow's default knowledge-base backend.
pub const SQLITE_BACKEND: &str = "sqlite";
/// Langflow's pgvector knowledge-base backend.
pub const POSTGRES_BACKEND: &str = "postgres";

/// Where Langflow's sqlite backend keeps a knowledge base's vectors.
pub fn vectors_path(root: &Path, row: &LangflowKbRow) -> PathBuf {
    root.join(SQLITE_BACKEND)
        .join(&row.user_id)
        .join(&row.id)
        .join(row.storage_generation.to_string())
        .join("vectors.sqlite3")
}

/// A result with the message and session its metadata names.
pub(super) fn hit(chunk_id: String, content: String, metadata: &str, distance: f64) -> SearchHit {
    let metadata: serde_json::Value =
        serde_json::from_str(metadata).unwrap_or(serde_json::Value::Null);
    let field = |key: &str| metadata[key].as_str().unwrap_or_default().to_owned();
    SearchHit {
        message_id: field("message_id"),
        session_id: field("session_id"),
        chunk_id,
        content,
        metadata,
        distance,
    }
}

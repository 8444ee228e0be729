//! LangGraph's checkpoint savers (SqliteSaver 3.1, PostgresSaver 3.2): recognising their tables
//! (also beside other tables in one database), the reads the adapter is built on, and a stored
//! checkpoint decoded with `memory::langgraph`. The rows are read as the savers wrote them;
//! memscope writes nothing to a LangGraph database.

mod read;
pub mod saver;
pub mod threads;

use std::collections::BTreeSet;

pub use read::{
    LangGraphPool, StoredBlob, StoredBody, StoredCheckpoint, StoredWrite, ThreadSummary,
};
pub use saver::{LangGraphDb, LangGraphError, Saver};

use super::adapter::{
    Capabilities, ConversationShape, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::dify::schema::DifySchema;
use super::rewrite::Rewrite;
use crate::store::catalog::Catalog;

pub struct LangGraph;

impl MemorySource for LangGraph {
    fn name(&self) -> &'static str {
        "LangGraph checkpoint"
    }

    /// SqliteSaver's `checkpoints` and `writes`, or PostgresSaver's `checkpoints`,
    /// `checkpoint_blobs` and `checkpoint_writes`; other tables may sit beside them.
    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        catalog.has_table("checkpoints")
            && (catalog.has_table("writes")
                || (catalog.has_table("checkpoint_blobs")
                    && catalog.has_table("checkpoint_writes")))
    }

    /// memscope only reads these databases. A LangGraph database holds no memory bases, so
    /// the kinds of ingestion, jobs, locks and knowledge bases never come into play.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            memscope_writes: false,
            ingestion: Ingestion::AppTask,
            jobs: JobOwnership::Heartbeat,
            locks: LockStyle::AppKeys,
            knowledge_bases: KbHome::AppRows,
            conversations: ConversationShape::CheckpointThreads,
        }
    }

    /// memscope's own queries never reach these tables: the reads are this folder's.
    fn rewrite(&self, _conversation_schema: DifySchema) -> Rewrite {
        Rewrite::VERBATIM
    }

    /// Checkpoints keyed on `thread_ts` (before langgraph 0.2).
    fn unreadable(&self, catalog: &Catalog) -> Option<&'static str> {
        catalog.has_column("checkpoints", "thread_ts").then_some(
            "in LangGraph's layout from before 0.2 (checkpoints keyed on `thread_ts`), which \
             memscope does not read; LangGraph 0.2 and later key them on `checkpoint_id`",
        )
    }

    /// PostgresSaver's newest migration (`checkpoint_migrations`); SqliteSaver keeps none.
    fn revision(&self, catalog: &Catalog) -> Option<String> {
        catalog.checkpoint_migration.map(|v| format!("v{v}"))
    }
}

use crate::memory::langgraph::checkpoint::Checkpoint;
use crate::memory::langgraph::{AesKey, DecodeError, Value, Warning, decode_typed};

/// Why a stored checkpoint could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    #[error("checkpoint {id}: {error}")]
    Decode { id: String, error: DecodeError },
    #[error("checkpoint {id}: the `{channel}` value: {error}")]
    Blob {
        id: String,
        channel: String,
        error: DecodeError,
    },
    #[error("checkpoint {id}: {reason}")]
    Body { id: String, reason: String },
}

impl StoredCheckpoint {
    /// The checkpoint body with every channel value, and what was not understood in it.
    pub fn decode(
        &self,
        key: Option<&AesKey>,
    ) -> Result<(Checkpoint, Vec<Warning>), CheckpointError> {
        let id = &self.checkpoint_id;
        let mut warnings = Vec::new();
        let body_error = |reason: String| CheckpointError::Body {
            id: id.clone(),
            reason,
        };
        match &self.body {
            StoredBody::Serialized { type_name, bytes } => {
                let decoded = decode_typed(type_name, bytes, key).map_err(|error| {
                    CheckpointError::Decode {
                        id: id.clone(),
                        error,
                    }
                })?;
                warnings.extend(decoded.warnings);
                let checkpoint = Checkpoint::from_value(&decoded.value).map_err(body_error)?;
                Ok((checkpoint, warnings))
            }
            StoredBody::Json { body, blobs } => {
                let checkpoint =
                    Checkpoint::from_value(&Value::from_json(body)).map_err(body_error)?;
                let mut values = Vec::with_capacity(blobs.len());
                for blob in blobs {
                    let value = match (blob.type_name.as_str(), &blob.bytes) {
                        ("empty", _) => None,
                        (type_name, bytes) => {
                            let decoded =
                                decode_typed(type_name, bytes.as_deref().unwrap_or_default(), key)
                                    .map_err(|error| CheckpointError::Blob {
                                        id: id.clone(),
                                        channel: blob.channel.clone(),
                                        error,
                                    })?;
                            warnings.extend(decoded.warnings);
                            Some(decoded.value)
                        }
                    };
                    values.push((blob.channel.as_str(), blob.version.as_str(), value));
                }
                Ok((checkpoint.with_blobs(values), warnings))
            }
        }
    }
}

impl StoredWrite {
    pub fn decode(
        &self,
        key: Option<&AesKey>,
    ) -> Result<crate::memory::langgraph::Decoded, DecodeError> {
        decode_typed(
            self.type_name.as_deref().unwrap_or("null"),
            self.value.as_deref().unwrap_or_default(),
            key,
        )
    }
}

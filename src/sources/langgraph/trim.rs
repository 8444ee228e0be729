//! A trim written as LangGraph writes `update_state(config, {"messages": [RemoveMessage(id),
//! …]})` (the checkpoint and its write are planned in `decode::removal`), in the
//! saver's own tables and formats, in one transaction; and its undo, which deletes that
//! checkpoint and its write again. memscope's checkpoint is recognised by its metadata alone.

use serde_json::Value as Json;
use sqlx::Row;

use super::read::{LangGraphPool, StoredBody};
use super::saver::{LangGraphDb, LangGraphError};
use crate::sources::checkpoint_trim::{TrimCheckpoint, UndoneTrimCheckpoint};
use crate::sources::langgraph::decode::checkpoint::MESSAGES_CHANNEL;
use crate::sources::langgraph::decode::encode::{EncodeError, encode};
use crate::sources::langgraph::decode::message::LangChainMessage;
use crate::sources::langgraph::decode::removal::{
    Clock, UPDATE_TASK_PATH, is_memscope_trim, pending_channels, plan_removal, update_task_id,
};
use crate::sources::langgraph::decode::tree::ROOT_NAMESPACE;
use crate::sources::langgraph::decode::{Value, decode_typed};

/// Why a trim cannot be written or undone.
#[derive(Debug, thiserror::Error)]
pub enum TrimWriteError {
    #[error(transparent)]
    Read(#[from] LangGraphError),
    #[error("thread {0} has no checkpoint of its root graph")]
    Empty(String),
    #[error(
        "thread {thread} moved on while the trim was planned (its latest checkpoint is now \
         {latest}); preview it again"
    )]
    Moved { thread: String, latest: String },
    #[error(
        "thread {thread}'s run has not ended (pending: {}); trim it once the graph stopped",
        pending.join(", ")
    )]
    Pending {
        thread: String,
        pending: Vec<String>,
    },
    #[error(
        "thread {thread} is stored as `{type_name}`: memscope writes plain msgpack only, never into an encrypted or legacy thread"
    )]
    Format { thread: String, type_name: String },
    #[error("message {index} of thread {thread} has no id, so no RemoveMessage can name it")]
    NoId { thread: String, index: usize },
    #[error(
        "checkpoint {checkpoint} already holds an update's write; apply the trim after the next turn"
    )]
    WriteTaken { checkpoint: String },
    #[error("thread {thread}: {reason}")]
    Plan { thread: String, reason: String },
    #[error(transparent)]
    Encode(#[from] EncodeError),
    #[error(
        "the latest checkpoint of thread {thread} ({checkpoint}) is not a trim memscope wrote; \
         nothing to undo"
    )]
    NothingToUndo { thread: String, checkpoint: String },
    #[error("a run already started from memscope's trim checkpoint {checkpoint}; it stays")]
    Continued { checkpoint: String },
    #[error("{0}")]
    Query(#[from] sqlx::Error),
}

/// The latest state of a thread, as a trim reads it.
#[derive(Debug, Clone)]
pub struct TrimTarget {
    pub thread_id: String,
    pub checkpoint_id: String,
    /// The messages a model sees, in order, each with its id.
    pub messages: Vec<LangChainMessage>,
}

/// The latest root checkpoint as stored, decoded into what a removal is planned from.
struct Latest {
    id: String,
    body: Value,
    metadata: Json,
    messages: Vec<Value>,
    /// PostgresSaver's JSONB body; SqliteSaver keeps none.
    json_body: Option<Json>,
}

impl LangGraphDb {
    /// The latest root checkpoint of a thread with its messages, for a trim's preview and plan.
    pub async fn trim_target(&self, thread: &str) -> Result<TrimTarget, TrimWriteError> {
        let checkpoint_id = self.latest_id(thread).await?;
        let state = self.state_at(thread, &checkpoint_id).await?;
        Ok(TrimTarget {
            thread_id: thread.to_owned(),
            checkpoint_id,
            messages: state
                .messages
                .into_iter()
                .filter(|m| m.role().is_some())
                .collect(),
        })
    }

    async fn latest_id(&self, thread: &str) -> Result<String, TrimWriteError> {
        self.tree(thread)
            .await?
            .latest()
            .map(|c| c.id.clone())
            .ok_or_else(|| TrimWriteError::Empty(thread.to_owned()))
    }

    /// Writes the removal of `remove` (message ids of `target`) as a new checkpoint, child of
    /// `target.checkpoint_id`, which must still be the latest.
    pub async fn apply_trim(
        &self,
        target: &TrimTarget,
        remove: &[String],
    ) -> Result<TrimCheckpoint, TrimWriteError> {
        let thread = target.thread_id.as_str();
        if let Some(index) = target.messages.iter().position(|m| m.id.is_none()) {
            return Err(TrimWriteError::NoId {
                thread: thread.to_owned(),
                index,
            });
        }
        let latest = self.latest_stored(thread, &target.checkpoint_id).await?;
        let pending = pending_channels(&latest.body);
        if !pending.is_empty() {
            return Err(TrimWriteError::Pending {
                thread: thread.to_owned(),
                pending,
            });
        }
        let removal = plan_removal(
            &latest.id,
            &latest.body,
            &latest.metadata,
            &latest.messages,
            remove,
            clock(),
        )
        .map_err(|reason| TrimWriteError::Plan {
            thread: thread.to_owned(),
            reason,
        })?;
        let write = encode(&removal.removals)?;
        let moved = |latest: String| TrimWriteError::Moved {
            thread: thread.to_owned(),
            latest,
        };
        match &self.pool {
            LangGraphPool::Sqlite(pool) => {
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let now: Option<String> = sqlx::query_scalar(
                    "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ''",
                )
                .bind(thread)
                .fetch_one(&mut *tx)
                .await?;
                if now.as_deref() != Some(latest.id.as_str()) {
                    return Err(moved(now.unwrap_or_default()));
                }
                let taken: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM writes WHERE thread_id = ?1 AND checkpoint_ns = '' \
                     AND checkpoint_id = ?2 AND task_id = ?3 AND idx = 0",
                )
                .bind(thread)
                .bind(&latest.id)
                .bind(&removal.task_id)
                .fetch_one(&mut *tx)
                .await?;
                if taken > 0 {
                    return Err(TrimWriteError::WriteTaken {
                        checkpoint: latest.id,
                    });
                }
                sqlx::query(
                    "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, \
                     idx, channel, type, value) VALUES (?1, '', ?2, ?3, ?4, 0, ?5, 'msgpack', ?6)",
                )
                .bind(thread)
                .bind(&latest.id)
                .bind(&removal.task_id)
                .bind(UPDATE_TASK_PATH)
                .bind(MESSAGES_CHANNEL)
                .bind(&write)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                     parent_checkpoint_id, type, checkpoint, metadata) \
                     VALUES (?1, '', ?2, ?3, 'msgpack', ?4, ?5)",
                )
                .bind(thread)
                .bind(&removal.checkpoint_id)
                .bind(&latest.id)
                .bind(encode(&removal.body)?)
                .bind(removal.metadata_text().into_bytes())
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
            }
            LangGraphPool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                // Serialises with another trim or run of this thread until the commit.
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext('memscope langgraph ' || $1))")
                    .bind(thread)
                    .execute(&mut *tx)
                    .await?;
                let now: Option<String> = sqlx::query_scalar(
                    "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''",
                )
                .bind(thread)
                .fetch_one(&mut *tx)
                .await?;
                if now.as_deref() != Some(latest.id.as_str()) {
                    return Err(moved(now.unwrap_or_default()));
                }
                let taken: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = '' \
                     AND checkpoint_id = $2 AND task_id = $3 AND idx = 0",
                )
                .bind(thread)
                .bind(&latest.id)
                .bind(&removal.task_id)
                .fetch_one(&mut *tx)
                .await?;
                if taken > 0 {
                    return Err(TrimWriteError::WriteTaken {
                        checkpoint: latest.id,
                    });
                }
                sqlx::query(
                    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
                     VALUES ($1, '', $2, $3, 'msgpack', $4) ON CONFLICT DO NOTHING",
                )
                .bind(thread)
                .bind(MESSAGES_CHANNEL)
                .bind(&removal.messages_version)
                .bind(encode(&removal.kept)?)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
                     task_path, idx, channel, type, blob) VALUES ($1, '', $2, $3, $4, 0, $5, 'msgpack', $6)",
                )
                .bind(thread)
                .bind(&latest.id)
                .bind(&removal.task_id)
                .bind(UPDATE_TASK_PATH)
                .bind(MESSAGES_CHANNEL)
                .bind(&write)
                .execute(&mut *tx)
                .await?;
                let mut body = removal.body.to_json();
                // The messages live in the blob: the JSONB body keeps only primitive values.
                if let (Some(values), Some(stored)) = (
                    body.get_mut("channel_values"),
                    latest
                        .json_body
                        .as_ref()
                        .and_then(|b| b.get("channel_values")),
                ) {
                    *values = stored.clone();
                }
                sqlx::query(
                    "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                     parent_checkpoint_id, checkpoint, metadata) VALUES ($1, '', $2, $3, $4, $5)",
                )
                .bind(thread)
                .bind(&removal.checkpoint_id)
                .bind(&latest.id)
                .bind(&body)
                .bind(removal.metadata_json())
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
            }
        }
        let messages_after = removal.kept.as_list().map_or(0, <[Value]>::len);
        Ok(TrimCheckpoint {
            thread_id: thread.to_owned(),
            parent_checkpoint_id: latest.id,
            checkpoint_id: removal.checkpoint_id,
            step: removal.step,
            removed: remove.to_vec(),
            messages_after,
        })
    }

    /// The latest checkpoint as stored, which must be `expected`.
    async fn latest_stored(&self, thread: &str, expected: &str) -> Result<Latest, TrimWriteError> {
        let now = self.latest_id(thread).await?;
        if now != expected {
            return Err(TrimWriteError::Moved {
                thread: thread.to_owned(),
                latest: now,
            });
        }
        let stored = self
            .pool
            .checkpoint(thread, ROOT_NAMESPACE, expected)
            .await?
            .ok_or_else(|| TrimWriteError::Empty(thread.to_owned()))?;
        let metadata = self.pool.metadata(thread, expected).await?;
        let format = |type_name: &str| TrimWriteError::Format {
            thread: thread.to_owned(),
            type_name: type_name.to_owned(),
        };
        let messages_of = |value: &Value| -> Vec<Value> {
            value.as_list().map(<[Value]>::to_vec).unwrap_or_default()
        };
        match &stored.body {
            StoredBody::Serialized { type_name, bytes } => {
                if type_name != "msgpack" {
                    return Err(format(type_name));
                }
                let body = decode_typed(type_name, bytes, None)
                    .map_err(|e| {
                        LangGraphError::from(super::CheckpointError::Decode {
                            id: expected.to_owned(),
                            error: e,
                        })
                    })?
                    .value;
                let messages = body
                    .get("channel_values")
                    .and_then(|v| v.get(MESSAGES_CHANNEL))
                    .map(messages_of)
                    .unwrap_or_default();
                Ok(Latest {
                    id: expected.to_owned(),
                    body,
                    metadata,
                    messages,
                    json_body: None,
                })
            }
            StoredBody::Json { body, blobs } => {
                let version = body
                    .get("channel_versions")
                    .and_then(|v| v.get(MESSAGES_CHANNEL))
                    .and_then(Json::as_str);
                let blob = blobs
                    .iter()
                    .find(|b| b.channel == MESSAGES_CHANNEL && Some(b.version.as_str()) == version);
                let messages = match blob {
                    Some(blob) if blob.type_name != "msgpack" && blob.type_name != "empty" => {
                        return Err(format(&blob.type_name));
                    }
                    Some(blob) if blob.type_name == "msgpack" => {
                        let decoded = decode_typed(
                            "msgpack",
                            blob.bytes.as_deref().unwrap_or_default(),
                            None,
                        )
                        .map_err(|error| {
                            LangGraphError::from(super::CheckpointError::Blob {
                                id: expected.to_owned(),
                                channel: MESSAGES_CHANNEL.to_owned(),
                                error,
                            })
                        })?;
                        messages_of(&decoded.value)
                    }
                    _ => Vec::new(),
                };
                Ok(Latest {
                    id: expected.to_owned(),
                    body: Value::from_json(body),
                    metadata,
                    messages,
                    json_body: Some(body.clone()),
                })
            }
        }
    }

    /// Whether the thread's latest checkpoint is memscope's trim (what `undo_trim` deletes).
    pub async fn latest_is_trim(&self, thread: &str) -> Result<bool, TrimWriteError> {
        let latest = self.latest_id(thread).await?;
        Ok(is_memscope_trim(
            &self.pool.metadata(thread, &latest).await?,
        ))
    }

    /// Deletes memscope's trim checkpoint when it is still the thread's latest and no run
    /// started from it, with the write it left on its parent (and, on PostgreSQL, the blob only
    /// it names): the thread is as it was before the trim.
    pub async fn undo_trim(&self, thread: &str) -> Result<UndoneTrimCheckpoint, TrimWriteError> {
        let latest = self.latest_id(thread).await?;
        let metadata = self.pool.metadata(thread, &latest).await?;
        if !is_memscope_trim(&metadata) {
            return Err(TrimWriteError::NothingToUndo {
                thread: thread.to_owned(),
                checkpoint: latest,
            });
        }
        let continued = || TrimWriteError::Continued {
            checkpoint: latest.clone(),
        };
        let parent = match &self.pool {
            LangGraphPool::Sqlite(pool) => {
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let row = sqlx::query(
                    "SELECT parent_checkpoint_id, \
                     (SELECT COUNT(*) FROM writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_id = c.checkpoint_id) \
                     + (SELECT COUNT(*) FROM checkpoints k WHERE k.thread_id = c.thread_id AND k.parent_checkpoint_id = c.checkpoint_id) \
                     FROM checkpoints c WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = ?2",
                )
                .bind(thread)
                .bind(&latest)
                .fetch_one(&mut *tx)
                .await?;
                let (parent, after): (Option<String>, i64) = (row.try_get(0)?, row.try_get(1)?);
                if after > 0 {
                    return Err(continued());
                }
                let parent = parent.unwrap_or_default();
                sqlx::query(
                    "DELETE FROM writes WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = ?2 \
                     AND task_id = ?3 AND task_path = ?4 AND idx = 0",
                )
                .bind(thread)
                .bind(&parent)
                .bind(update_task_id(&parent))
                .bind(UPDATE_TASK_PATH)
                .execute(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = ?2")
                    .bind(thread)
                    .bind(&latest)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                parent
            }
            LangGraphPool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext('memscope langgraph ' || $1))")
                    .bind(thread)
                    .execute(&mut *tx)
                    .await?;
                let row = sqlx::query(
                    "SELECT parent_checkpoint_id, checkpoint -> 'channel_versions' ->> 'messages', \
                     (SELECT COUNT(*) FROM checkpoint_writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_id = c.checkpoint_id) \
                     + (SELECT COUNT(*) FROM checkpoints k WHERE k.thread_id = c.thread_id AND k.parent_checkpoint_id = c.checkpoint_id) \
                     FROM checkpoints c WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2",
                )
                .bind(thread)
                .bind(&latest)
                .fetch_one(&mut *tx)
                .await?;
                let (parent, version, after): (Option<String>, Option<String>, i64) =
                    (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
                if after > 0 {
                    return Err(continued());
                }
                let parent = parent.unwrap_or_default();
                sqlx::query(
                    "DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = '' \
                     AND checkpoint_id = $2 AND task_id = $3 AND task_path = $4 AND idx = 0",
                )
                .bind(thread)
                .bind(&parent)
                .bind(update_task_id(&parent))
                .bind(UPDATE_TASK_PATH)
                .execute(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2")
                    .bind(thread)
                    .bind(&latest)
                    .execute(&mut *tx)
                    .await?;
                // The trim's blob, unless another checkpoint names the same version.
                sqlx::query(
                    "DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1 AND b.checkpoint_ns = '' \
                     AND b.channel = 'messages' AND b.version = $2 AND NOT EXISTS (\
                       SELECT 1 FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = '' \
                       AND c.checkpoint -> 'channel_versions' ->> 'messages' = $2)",
                )
                .bind(thread)
                .bind(version)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                parent
            }
        };
        Ok(UndoneTrimCheckpoint {
            thread_id: thread.to_owned(),
            checkpoint_id: latest,
            latest_checkpoint_id: parent,
        })
    }
}

/// Now, with a random UUID node and version suffix (from a v4 UUID's random bits).
fn clock() -> Clock {
    let random = uuid::Uuid::new_v4().as_u128();
    let fraction = ((random >> 64) & ((1 << 52) - 1)) as f64 / (1u64 << 52) as f64;
    Clock {
        unix_nanos: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
        node: (random as u64) & 0xFFFF_FFFF_FFFF,
        version_hash: 1e-4 + fraction * (1.0 - 1e-4),
    }
}

impl LangGraphPool {
    /// A root checkpoint's metadata document.
    async fn metadata(&self, thread: &str, checkpoint: &str) -> sqlx::Result<Json> {
        Ok(match self {
            LangGraphPool::Sqlite(pool) => {
                let bytes: Option<Vec<u8>> = sqlx::query_scalar(
                    "SELECT CAST(metadata AS BLOB) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = '' AND checkpoint_id = ?2",
                )
                .bind(thread)
                .bind(checkpoint)
                .fetch_optional(pool)
                .await?
                .flatten();
                bytes
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or(Json::Null)
            }
            LangGraphPool::Postgres(pool) => sqlx::query_scalar(
                "SELECT metadata FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2",
            )
            .bind(thread)
            .bind(checkpoint)
            .fetch_optional(pool)
            .await?
            .unwrap_or(Json::Null),
        })
    }
}

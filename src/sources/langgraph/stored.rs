//! A stored checkpoint and its writes decoded with `decode`, and why one could not
//! be read.

use super::read::{StoredBody, StoredCheckpoint, StoredWrite};
use crate::sources::langgraph::decode::checkpoint::Checkpoint;
use crate::sources::langgraph::decode::glance::{Glance, GlanceError, glance_typed};
use crate::sources::langgraph::decode::{AesKey, DecodeError, Value, Warning, decode_typed};

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
                let checkpoint = Checkpoint::from_owned(decoded.value).map_err(body_error)?;
                Ok((checkpoint, warnings))
            }
            StoredBody::Json { body, blobs } => {
                let checkpoint =
                    Checkpoint::from_owned(Value::from_json(body)).map_err(body_error)?;
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

impl StoredCheckpoint {
    /// The `ts` and message count a list shows: SqliteSaver's body counted in place,
    /// PostgresSaver's read whole (its messages are a blob of their own, decoded anyway).
    pub fn glance(&self, key: Option<&AesKey>) -> Result<Glance, CheckpointError> {
        let StoredBody::Serialized { type_name, bytes } = &self.body else {
            return Ok(Glance::of(&self.decode(key)?.0));
        };
        let id = self.checkpoint_id.clone();
        glance_typed(type_name, bytes, key).map_err(|error| match error {
            GlanceError::Decode(error) => CheckpointError::Decode { id, error },
            GlanceError::Body(reason) => CheckpointError::Body { id, reason },
        })
    }
}

impl StoredWrite {
    pub fn decode(
        &self,
        key: Option<&AesKey>,
    ) -> Result<crate::sources::langgraph::decode::Decoded, DecodeError> {
        decode_typed(
            self.type_name.as_deref().unwrap_or("null"),
            self.value.as_deref().unwrap_or_default(),
            key,
        )
    }
}

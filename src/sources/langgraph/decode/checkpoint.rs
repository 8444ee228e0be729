//! A checkpoint's body: `{v, id, ts, channel_values, channel_versions, versions_seen,
//! updated_channels}`. SqliteSaver stores it whole as one serialized value; PostgresSaver stores
//! it as JSONB with only primitive channel values inline, the others in `checkpoint_blobs` under
//! the channel's version ([`Checkpoint::with_blobs`] puts them back).

use std::collections::BTreeMap;

use serde::Serialize;

use super::message::LangChainMessage;
use super::value::Value;

/// The channel that holds the conversation in `MessagesState` graphs.
pub const MESSAGES_CHANNEL: &str = "messages";

#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The format version (4 since langgraph 0.3); `None` when not stored.
    pub v: Option<i64>,
    pub id: String,
    pub ts: String,
    pub channel_values: BTreeMap<String, Value>,
    /// Versions as LangGraph prints them (`str(version)`): strings on both savers, integers in
    /// some older checkpoints.
    pub channel_versions: BTreeMap<String, String>,
    pub versions_seen: BTreeMap<String, BTreeMap<String, String>>,
    pub updated_channels: Option<Vec<String>>,
}

/// A message of the `messages` channel that could not be read, by position.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnreadMessage {
    pub index: usize,
    pub reason: String,
}

impl Checkpoint {
    /// The body of a decoded checkpoint value (SqliteSaver) or of PostgresSaver's JSONB column
    /// ([`Value::from_json`]); an error names what is missing.
    pub fn from_value(body: &Value) -> Result<Checkpoint, String> {
        if !matches!(body, Value::Map(_)) {
            return Err("the checkpoint is not a map".to_owned());
        }
        let text = |key: &str| -> Result<String, String> {
            match body.get(key) {
                Some(Value::Str(s)) => Ok(s.clone()),
                Some(other) => Ok(other.to_json().to_string()),
                None => Err(format!("the checkpoint has no `{key}`")),
            }
        };
        let channel_values = body
            .get("channel_values")
            .map(|values| {
                values
                    .str_entries()
                    .map(|(k, v)| (k.to_owned(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let versions_seen = body
            .get("versions_seen")
            .map(|seen| {
                seen.str_entries()
                    .map(|(node, versions)| (node.to_owned(), versions_of(versions)))
                    .collect()
            })
            .unwrap_or_default();
        let updated_channels = body.get("updated_channels").and_then(|channels| {
            channels.as_list().map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
        });
        Ok(Checkpoint {
            v: body.get("v").and_then(Value::as_i64),
            id: text("id")?,
            ts: text("ts")?,
            channel_values,
            channel_versions: body
                .get("channel_versions")
                .map(versions_of)
                .unwrap_or_default(),
            versions_seen,
            updated_channels,
        })
    }

    /// As [`Checkpoint::from_value`], moving the channel values out of `body` rather than
    /// copying them: a long thread's `messages` are nearly all of a checkpoint.
    pub fn from_owned(mut body: Value) -> Result<Checkpoint, String> {
        let values = match &mut body {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(key, _)| key.as_str() == Some("channel_values"))
                .map(|(_, values)| std::mem::replace(values, Value::Null)),
            _ => None,
        };
        let mut checkpoint = Checkpoint::from_value(&body)?;
        if let Some(Value::Map(entries)) = values {
            checkpoint.channel_values = entries
                .into_iter()
                .filter_map(|(key, value)| match key {
                    Value::Str(key) => Some((key, value)),
                    _ => None,
                })
                .collect();
        }
        Ok(checkpoint)
    }

    /// Puts PostgresSaver's blob values back: each `(channel, version, value)` whose version is
    /// the checkpoint's version of that channel. `None` is a blob of type `empty`: no value.
    pub fn with_blobs<'a>(
        mut self,
        blobs: impl IntoIterator<Item = (&'a str, &'a str, Option<Value>)>,
    ) -> Checkpoint {
        for (channel, version, value) in blobs {
            if self.channel_versions.get(channel).map(String::as_str) != Some(version) {
                continue;
            }
            match value {
                Some(value) => self.channel_values.insert(channel.to_owned(), value),
                None => self.channel_values.remove(channel),
            };
        }
        self
    }

    /// The `messages` channel read as LangChain messages, with the entries that are not; a
    /// channel never written is an empty conversation.
    pub fn messages(&self) -> (Vec<LangChainMessage>, Vec<UnreadMessage>) {
        let mut messages = Vec::new();
        let mut unread = Vec::new();
        let stored = match self.channel_values.get(MESSAGES_CHANNEL) {
            // A DeltaChannel stores no value between its snapshots, though it has a version.
            None if self.channel_versions.contains_key(MESSAGES_CHANNEL) => {
                unread.push(UnreadMessage {
                    index: 0,
                    reason: "the channel has a version but no stored value: a DeltaChannel \
                             rebuilds it from earlier writes, which memscope does not replay"
                        .to_owned(),
                });
                return (messages, unread);
            }
            None | Some(Value::Null) => return (messages, unread),
            Some(Value::List(items)) => items.as_slice(),
            Some(Value::DeltaSnapshot(_)) => {
                unread.push(UnreadMessage {
                    index: 0,
                    reason: "the channel is a DeltaChannel snapshot; its messages are rebuilt \
                             from writes, which memscope does not replay"
                        .to_owned(),
                });
                return (messages, unread);
            }
            Some(_) => {
                unread.push(UnreadMessage {
                    index: 0,
                    reason: "the channel does not hold a list".to_owned(),
                });
                return (messages, unread);
            }
        };
        for (index, value) in stored.iter().enumerate() {
            match LangChainMessage::from_value(value) {
                Some(Ok(message)) => messages.push(message),
                Some(Err(reason)) => unread.push(UnreadMessage { index, reason }),
                None => unread.push(UnreadMessage {
                    index,
                    reason: "not a LangChain message".to_owned(),
                }),
            }
        }
        (messages, unread)
    }
}

fn versions_of(value: &Value) -> BTreeMap<String, String> {
    value
        .str_entries()
        .map(|(channel, version)| {
            let version = match version {
                Value::Str(s) => s.clone(),
                Value::Float(f) => python_float(*f),
                other => other.to_json().to_string(),
            };
            (channel.to_owned(), version)
        })
        .collect()
}

/// `str(float)` for the versions some savers keep as floats: `1.0`, not `1`.
fn python_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

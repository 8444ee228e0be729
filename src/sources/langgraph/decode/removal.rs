//! The checkpoint LangGraph saves for `update_state(config, {"messages": [RemoveMessage(id),
//! …]})` on a thread whose run has ended (langgraph 1.2's `bulk_update_state`): a child of the
//! latest checkpoint, step + 1, its id a UUIDv6 whose clock sequence is that step, the
//! `messages` channel without the removed messages under a new version (one above the
//! greatest, as the savers' `get_next_version` makes it), `versions_seen` as it was,
//! `updated_channels` null, metadata `{source: "update", step, parents}`; and the one write
//! it keeps on the latest checkpoint: channel `messages`, the list of `RemoveMessage`s, by the
//! task `uuid5(latest id, "__interrupt__")` at path `~__interrupt__, 0000000000`.
//!
//! memscope's checkpoint carries `"memscope": "trim"` in its metadata, as any key of the
//! `configurable` config passed to `update_state` would be copied there, so undo recognises it
//! without anything else stored.

use std::collections::HashSet;

use serde_json::Value as Json;
use uuid::Uuid;

use super::checkpoint::MESSAGES_CHANNEL;
use super::encode::{python_json_object, remove_message};
use super::value::Value;
use crate::memory::trim::{Step, TrimPlan};

/// The task path of an `update_state` write (`task_path_str((INTERRUPT, 0))`).
pub const UPDATE_TASK_PATH: &str = "~__interrupt__, 0000000000";
/// The metadata key and value that mark memscope's trim checkpoint.
pub const MARKER_KEY: &str = "memscope";
pub const MARKER_VALUE: &str = "trim";
/// 100 ns intervals from 1582-10-15 (UUID time) to 1970-01-01.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// What varies between two runs: the clock, the UUID's node and the version's random part.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub unix_nanos: u64,
    pub node: u64,
    /// `random.random()` of the version string, in [1e-4, 1).
    pub version_hash: f64,
}

/// The new checkpoint and its write, ready for a saver's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    pub checkpoint_id: String,
    pub step: i64,
    pub messages_version: String,
    /// The body as stored: the messages inline where the latest one held them inline.
    pub body: Value,
    /// The kept messages: PostgresSaver's blob of the new version.
    pub kept: Value,
    /// The write: `[RemoveMessage(id), …]`.
    pub removals: Value,
    pub task_id: String,
    metadata: Vec<(String, Json)>,
}

impl Removal {
    /// SqliteSaver's metadata text.
    pub fn metadata_text(&self) -> String {
        let entries: Vec<(&str, &Json)> =
            self.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
        python_json_object(&entries)
    }

    /// PostgresSaver's metadata document.
    pub fn metadata_json(&self) -> Json {
        Json::Object(self.metadata.iter().cloned().collect())
    }
}

/// Whether a checkpoint's metadata is that of memscope's trim.
pub fn is_memscope_trim(metadata: &Json) -> bool {
    metadata.get(MARKER_KEY).and_then(Json::as_str) == Some(MARKER_VALUE)
        && metadata.get("source").and_then(Json::as_str) == Some("update")
}

/// The channels of a stored body that say a run has not ended (a node triggered, a pending
/// start or task): `update_state` would then reuse their tasks, which memscope does not plan.
pub fn pending_channels(body: &Value) -> Vec<String> {
    body.get("channel_values")
        .map(|values| {
            values
                .str_entries()
                .filter(|(k, v)| (k.starts_with("branch:") || k.starts_with("__")) && !v.is_null())
                .map(|(k, _)| k.to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The checkpoint removing `remove` from `messages` (the latest checkpoint's `messages` list),
/// child of `latest_id` whose stored `body` and `metadata` are given.
pub fn plan_removal(
    latest_id: &str,
    body: &Value,
    metadata: &Json,
    messages: &[Value],
    remove: &[String],
    clock: Clock,
) -> Result<Removal, String> {
    let latest =
        Uuid::try_parse(latest_id).map_err(|e| format!("checkpoint id {latest_id}: {e}"))?;
    let Value::Map(entries) = body else {
        return Err("the latest checkpoint is not a map".to_owned());
    };
    let step = metadata.get("step").and_then(Json::as_i64).unwrap_or(-1) + 1;
    let removing: HashSet<&str> = remove.iter().map(String::as_str).collect();
    let kept = Value::List(
        messages
            .iter()
            .filter(|m| !message_id(m).is_some_and(|id| removing.contains(id)))
            .cloned()
            .collect(),
    );
    let messages_version = next_version(body, clock.version_hash);
    let checkpoint_id = uuid6(uuid_time(&latest), clock, step).to_string();

    let mut fields: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
    let set = |fields: &mut Vec<(Value, Value)>, key: &str, value: Value| {
        fields.push((Value::Str(key.to_owned()), value));
    };
    set(
        &mut fields,
        "v",
        body.get("v").cloned().unwrap_or(Value::Int(4)),
    );
    set(&mut fields, "ts", Value::Str(iso_ts(clock.unix_nanos)));
    set(&mut fields, "id", Value::Str(checkpoint_id.clone()));
    let values = replace_entry(body.get("channel_values"), MESSAGES_CHANNEL, |held| {
        held.map(|_| kept.clone())
    });
    set(&mut fields, "channel_values", values);
    let versions = replace_entry(body.get("channel_versions"), MESSAGES_CHANNEL, |_| {
        Some(Value::Str(messages_version.clone()))
    });
    set(&mut fields, "channel_versions", versions);
    set(
        &mut fields,
        "versions_seen",
        body.get("versions_seen")
            .cloned()
            .unwrap_or(Value::Map(Vec::new())),
    );
    set(&mut fields, "updated_channels", Value::Null);

    let parents = metadata
        .get("parents")
        .cloned()
        .unwrap_or_else(|| Json::Object(Default::default()));
    Ok(Removal {
        checkpoint_id,
        step,
        messages_version,
        body: Value::Map(fields),
        kept,
        removals: Value::List(remove.iter().map(|id| remove_message(id)).collect()),
        task_id: update_task_id(latest_id),
        metadata: vec![
            ("source".to_owned(), Json::from("update")),
            ("step".to_owned(), Json::from(step)),
            ("parents".to_owned(), parents),
            (MARKER_KEY.to_owned(), Json::from(MARKER_VALUE)),
        ],
    })
}

/// The task id of a lone `update_state` on `checkpoint_id` (`uuid5(checkpoint id,
/// "__interrupt__")`); the checkpoint id itself when it is no UUID.
pub fn update_task_id(checkpoint_id: &str) -> String {
    Uuid::try_parse(checkpoint_id)
        .map(|id| Uuid::new_v5(&id, b"__interrupt__").to_string())
        .unwrap_or_else(|_| checkpoint_id.to_owned())
}

/// Why a trim cannot be written as removals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this trim changes or adds messages (a partial message, a cleared tool result, a stubbed \
     image or a summary); on a LangGraph thread apply writes removals only, as RemoveMessage \
     does: preview it, or drop those options"
)]
pub struct NotOnlyRemovals;

/// The indices a trim plan removes, when removing is all it does: what `update_state` with
/// `RemoveMessage`s can write (a changed or added message would be appended at the end by
/// `add_messages`, not put where the plan puts it).
pub fn removal_indices(plan: &TrimPlan) -> Result<Vec<usize>, NotOnlyRemovals> {
    let only_removals = plan.steps.iter().all(|step| match step {
        Step::Keep { .. } | Step::Remove { .. } => true,
        Step::Modify { .. } => false,
        Step::Summary => plan.summary.is_none(),
    });
    if !only_removals {
        return Err(NotOnlyRemovals);
    }
    Ok(plan.removed().map(|(index, _)| index).collect())
}

/// A stored message's `id`.
pub fn message_id(message: &Value) -> Option<&str> {
    message.as_object()?.data.get("id")?.as_str()
}

/// A map with `key`'s entry replaced in place (or appended) by what `change` makes of it;
/// `None` leaves it out.
fn replace_entry(
    map: Option<&Value>,
    key: &str,
    change: impl FnOnce(Option<&Value>) -> Option<Value>,
) -> Value {
    let mut entries = match map {
        Some(Value::Map(entries)) => entries.clone(),
        _ => Vec::new(),
    };
    let at = entries.iter().position(|(k, _)| k.as_str() == Some(key));
    let replaced = change(at.map(|i| &entries[i].1));
    match (at, replaced) {
        (Some(i), Some(value)) => entries[i].1 = value,
        (Some(i), None) => {
            entries.remove(i);
        }
        (None, Some(value)) => entries.push((Value::Str(key.to_owned()), value)),
        (None, None) => {}
    }
    Value::Map(entries)
}

/// `get_next_version(max(channel_versions), None)` of both savers: the greatest version's
/// integer part + 1, 32 digits, then `.` and a random float padded to 16 characters.
fn next_version(body: &Value, hash: f64) -> String {
    let greatest = body
        .get("channel_versions")
        .map(|versions| {
            versions
                .str_entries()
                .filter_map(|(_, v)| match v {
                    Value::Str(s) => s.split('.').next()?.parse::<u64>().ok(),
                    other => other.as_i64().and_then(|n| u64::try_from(n).ok()),
                })
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    format!("{:032}.{:016}", greatest + 1, hash)
}

fn uuid_time(id: &Uuid) -> u64 {
    let n = id.as_u128();
    let high_mid = ((n >> 80) & 0xFFFF_FFFF_FFFF) as u64;
    let low = ((n >> 64) & 0x0FFF) as u64;
    (high_mid << 12) | low
}

/// LangGraph's `uuid6(clock_seq=step)`, later than the latest checkpoint's so it sorts after it.
fn uuid6(after: u64, clock: Clock, step: i64) -> Uuid {
    let now = clock.unix_nanos / 100 + UUID_EPOCH_OFFSET;
    let timestamp = now.max(after + 1);
    let mut n: u128 = u128::from((timestamp >> 12) & 0xFFFF_FFFF_FFFF) << 80;
    n |= u128::from(timestamp & 0x0FFF) << 64;
    n |= u128::from((step as u64) & 0x3FFF) << 48;
    n |= u128::from(clock.node & 0xFFFF_FFFF_FFFF);
    n &= !(0xC000u128 << 48);
    n |= 0x8000u128 << 48;
    n &= !(0xF000u128 << 64);
    n |= 6u128 << 76;
    Uuid::from_u128(n)
}

/// `datetime.now(timezone.utc).isoformat()`: microseconds unless there are none.
fn iso_ts(unix_nanos: u64) -> String {
    let at = chrono::DateTime::from_timestamp_nanos(unix_nanos as i64);
    let micros = at.timestamp_subsec_micros();
    if micros == 0 {
        at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()
    } else {
        format!("{}.{micros:06}+00:00", at.format("%Y-%m-%dT%H:%M:%S"))
    }
}

/// When a checkpoint was saved, from its UUIDv6 id (nanoseconds since 1970), without reading
/// its body.
pub fn checkpoint_unix_nanos(checkpoint_id: &str) -> Option<u64> {
    let id = Uuid::try_parse(checkpoint_id).ok()?;
    (id.get_version_num() == 6).then(|| uuid_time(&id).saturating_sub(UUID_EPOCH_OFFSET) * 100)
}

#[cfg(test)]
#[path = "removal_tests.rs"]
mod tests;

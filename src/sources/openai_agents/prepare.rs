//! What the Runner makes of a session's history before the model sees it, as
//! `prepare_input_with_session` (`agents/run_internal/session_persistence.py`, 0.24.0) does it
//! without a `session_input_callback` and with the default reasoning-id policy:
//! 1. each item read by `get_items` has its metadata keys stripped
//!    (`strip_internal_input_item_metadata`);
//! 2. `drop_orphan_function_calls`, with every history item prunable: a call (of any type that
//!    has an output type) whose output is nowhere in the history is dropped, and so is whatever
//!    a `program` call without output issued; only when a limit is set, an output whose call is
//!    not (or no longer) there is dropped too; then a reasoning item is dropped when the first
//!    item after it that is not reasoning is a call dropped as unanswered;
//! 3. `normalize_input_items_for_api` strips the keys again (nothing is left to strip);
//! 4. `deduplicate_input_items_preferring_latest`: items with the same stable identity (a call or
//!    output by type and `call_id`, else an item by type and `id`, else by `approval_request_id`;
//!    messages with a role never) are sent once, with the latest value, at the earliest place
//!    for calls, reasoning and approval requests and at the latest place for everything else.
//!
//! The new turn's input, appended after the history, takes part in none of this but as a
//! follower: a user message, which is no call, so the history decides alone.

use std::collections::{HashMap, HashSet};

use serde_json::Value as Json;

use super::item::{StoredItem, is_output_type, output_type_of};

/// The placeholder id the SDK gives items it made up; never an identity.
const FAKE_RESPONSES_ID: &str = "__fake_id__";

/// Why a stored item is not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Older than the `--limit` window.
    PastLimit,
    /// Its row is not JSON: `get_items` skips it.
    Unreadable,
    CallWithoutOutput,
    OutputWithoutCall,
    ReasoningOfDroppedCall,
    /// Replaced by a later item of the same identity.
    Duplicate,
    /// A plaintext item in an encrypted session: `EncryptedSession` skips it.
    NotEncrypted,
    /// An envelope the key does not open.
    Unauthenticated,
    /// An envelope older than `--ttl`.
    Expired,
}

impl Reason {
    /// The reason for scripts.
    pub fn key(self) -> &'static str {
        match self {
            Reason::PastLimit => "past_limit",
            Reason::Unreadable => "unreadable",
            Reason::CallWithoutOutput => "call_without_output",
            Reason::OutputWithoutCall => "output_without_call",
            Reason::ReasoningOfDroppedCall => "reasoning_of_dropped_call",
            Reason::Duplicate => "duplicate",
            Reason::NotEncrypted => "not_encrypted",
            Reason::Unauthenticated => "unauthenticated",
            Reason::Expired => "expired",
        }
    }

    /// The items it leaves out, in words that follow a count.
    pub fn description(self) -> &'static str {
        match self {
            Reason::PastLimit => "older stored rows outside the --limit window",
            Reason::Unreadable => "rows that are not JSON, which the SDK skips",
            Reason::CallWithoutOutput => {
                "tool calls stored without their output (a run that stopped), which the SDK drops"
            }
            Reason::OutputWithoutCall => {
                "tool outputs whose call is outside the window, which the SDK drops"
            }
            Reason::ReasoningOfDroppedCall => "reasoning items of a dropped tool call",
            Reason::Duplicate => "items sent once, as their latest copy",
            Reason::NotEncrypted => "plaintext items, which EncryptedSession skips",
            Reason::Unauthenticated => "envelopes the key does not open, which the SDK skips",
            Reason::Expired => "envelopes older than --ttl, which the SDK skips",
        }
    }
}

/// The history as the model is handed it, and what was left out of it, counted by reason.
#[derive(Debug, Default)]
pub struct Prepared {
    pub items: Vec<StoredItem>,
    pub left_out: HashMap<Reason, usize>,
    /// The rows dropped as orphans (not as duplicates), with why, in their order.
    pub dropped: Vec<(i64, Reason)>,
}

/// `prepare_input_with_session`'s work on `history`, the items `get_items` returned; `limited`
/// says a limit was set, which lets outputs whose call fell outside the window be dropped.
pub fn prepare(mut history: Vec<StoredItem>, limited: bool) -> Prepared {
    for item in &mut history {
        item.strip_metadata();
    }
    let mut left_out = HashMap::new();
    let dropped = orphans(&history, limited);
    for reason in dropped.values() {
        *left_out.entry(*reason).or_insert(0) += 1;
    }
    let mut dropped_rows: Vec<(i64, Reason)> = dropped
        .iter()
        .map(|(index, reason)| (history[*index].row, *reason))
        .collect();
    dropped_rows.sort();
    let kept: Vec<StoredItem> = history
        .into_iter()
        .enumerate()
        .filter(|(index, _)| !dropped.contains_key(index))
        .map(|(_, item)| item)
        .collect();
    let before = kept.len();
    let items = deduplicate_preferring_latest(kept);
    if items.len() < before {
        left_out.insert(Reason::Duplicate, before - items.len());
    }
    Prepared {
        items,
        left_out,
        dropped: dropped_rows,
    }
}

fn call_id(value: &Json) -> Option<&str> {
    value.get("call_id").and_then(Json::as_str)
}

fn item_type(value: &Json) -> Option<&str> {
    value.get("type").and_then(Json::as_str)
}

/// The `program` call that issued an item (`caller: {type: "program", caller_id}`).
fn program_caller(value: &Json) -> Option<&str> {
    let caller = value.get("caller")?;
    (caller.get("type").and_then(Json::as_str) == Some("program"))
        .then(|| caller.get("caller_id").and_then(Json::as_str))
        .flatten()
}

/// A hosted shell call that may stay pending without an output.
fn pending_hosted_shell(value: &Json) -> bool {
    item_type(value) == Some("shell_call")
        && match value.get("status") {
            None | Some(Json::Null) => true,
            Some(status) => status.as_str() == Some("in_progress"),
        }
}

/// `drop_orphan_function_calls` with every index prunable: the indexes it drops, with why.
fn orphans(items: &[StoredItem], limited: bool) -> HashMap<usize, Reason> {
    let is_object = |index: usize| items[index].value.is_object();
    let mut completed: HashMap<&str, HashSet<&str>> = HashMap::new();
    for item in items.iter().filter(|item| item.value.is_object()) {
        if let (Some(kind), Some(id)) = (item_type(&item.value), call_id(&item.value))
            && is_output_type(kind)
        {
            completed.entry(kind).or_default().insert(id);
        }
    }
    let answered =
        |output: &str, id: &str| completed.get(output).is_some_and(|ids| ids.contains(id));
    let anonymous_searches = matched_anonymous_tool_searches(items);
    // With every item prunable, no item keeps a program without output alive.
    let orphan_programs: HashSet<&str> = items
        .iter()
        .filter(|item| item.value.is_object() && item_type(&item.value) == Some("program"))
        .filter_map(|item| call_id(&item.value))
        .filter(|id| !answered("program_output", id))
        .collect();

    let mut dropped: HashMap<usize, Reason> = HashMap::new();
    let mut triggers: HashSet<usize> = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        let value = &item.value;
        let Some(kind) = item_type(value).filter(|_| is_object(index)) else {
            continue;
        };
        let caller = program_caller(value);
        if caller.is_some_and(|id| orphan_programs.contains(id)) {
            dropped.insert(index, Reason::CallWithoutOutput);
            triggers.insert(index);
            continue;
        }
        let Some(output) = output_type_of(kind) else {
            continue;
        };
        if caller.is_some() && pending_hosted_shell(value) {
            continue;
        }
        if call_id(value).is_some_and(|id| answered(output, id)) {
            continue;
        }
        if kind == "tool_search_call"
            && call_id(value).is_none()
            && anonymous_searches.contains(&index)
        {
            continue;
        }
        dropped.insert(index, Reason::CallWithoutOutput);
        triggers.insert(index);
    }

    if limited {
        let mut available: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            if dropped.contains_key(&index) || !is_object(index) {
                continue;
            }
            if let (Some(output), Some(id)) = (
                item_type(&item.value).and_then(output_type_of),
                call_id(&item.value),
            ) {
                available.entry(output).or_default().insert(id);
            }
        }
        for (index, item) in items.iter().enumerate() {
            if dropped.contains_key(&index) || !is_object(index) {
                continue;
            }
            if let (Some(kind), Some(id)) = (item_type(&item.value), call_id(&item.value))
                && is_output_type(kind)
                && !available.get(kind).is_some_and(|ids| ids.contains(id))
            {
                dropped.insert(index, Reason::OutputWithoutCall);
            }
        }
    }

    if dropped.is_empty() {
        return dropped;
    }
    let is_reasoning =
        |index: usize| is_object(index) && item_type(&items[index].value) == Some("reasoning");
    let mut reasoning_dropped: HashSet<usize> = HashSet::new();
    for index in (0..items.len()).rev() {
        if !is_reasoning(index) || dropped.contains_key(&index) {
            continue;
        }
        let follower = (index + 1..items.len())
            .find(|&next| !reasoning_dropped.contains(&next) && !is_reasoning(next));
        if follower.is_some_and(|next| triggers.contains(&next)) {
            reasoning_dropped.insert(index);
        }
    }
    for index in reasoning_dropped {
        dropped.insert(index, Reason::ReasoningOfDroppedCall);
    }
    dropped
}

/// Anonymous `tool_search_call`s (no `call_id`) each answered by a later anonymous output.
fn matched_anonymous_tool_searches(items: &[StoredItem]) -> HashSet<usize> {
    let mut matched = HashSet::new();
    let mut pending_outputs = 0usize;
    for (index, item) in items.iter().enumerate().rev() {
        if !item.value.is_object() || call_id(&item.value).is_some() {
            continue;
        }
        match item_type(&item.value) {
            Some("tool_search_output") => pending_outputs += 1,
            Some("tool_search_call") if pending_outputs > 0 => {
                matched.insert(index);
                pending_outputs -= 1;
            }
            _ => {}
        }
    }
    matched
}

/// The types whose first place is kept when a later copy replaces them: a call must stay
/// before its output, reasoning before what it reasoned about.
fn anchored_at_first_place(kind: Option<&str>) -> bool {
    kind.is_some_and(|kind| {
        output_type_of(kind).is_some() || kind == "mcp_approval_request" || kind == "reasoning"
    })
}

/// How Python's f-string writes a `type` (or `role`) value into an identity key.
fn key_text(value: Option<&Json>) -> String {
    match value {
        None | Some(Json::Null) => "None".to_owned(),
        Some(Json::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// Python's truthiness of a JSON value (`payload.get("type") or role`).
fn truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

/// `_dedupe_key`: the stable identity of an item, `None` for messages and items without one.
fn dedupe_key(value: &Json) -> Option<String> {
    let fields = value.as_object()?;
    let role = fields.get("role").filter(|role| !role.is_null());
    let kind = fields.get("type").filter(|kind| truthy(kind)).or(role);
    if role.is_some() || kind.and_then(Json::as_str) == Some("message") {
        return None;
    }
    let kind_text = key_text(kind);
    let text = |key: &str| fields.get(key).and_then(Json::as_str);
    let call_id = text("call_id");
    if let Some(id) = call_id
        && kind
            .and_then(Json::as_str)
            .is_some_and(|k| output_type_of(k).is_some() || is_output_type(k))
    {
        return Some(format!("call_id:{kind_text}:{id}"));
    }
    if let Some(id) = text("id").filter(|id| *id != FAKE_RESPONSES_ID) {
        return Some(format!("id:{kind_text}:{id}"));
    }
    if let Some(id) = call_id {
        return Some(format!("call_id:{kind_text}:{id}"));
    }
    text("approval_request_id").map(|id| format!("approval_request_id:{kind_text}:{id}"))
}

/// `deduplicate_input_items_preferring_latest`.
fn deduplicate_preferring_latest(items: Vec<StoredItem>) -> Vec<StoredItem> {
    let keys: Vec<Option<String>> = items.iter().map(|item| dedupe_key(&item.value)).collect();
    let mut latest: HashMap<&str, usize> = HashMap::new();
    let mut place: HashMap<&str, usize> = HashMap::new();
    for (index, key) in keys.iter().enumerate() {
        let Some(key) = key.as_deref() else { continue };
        latest.insert(key, index);
        if !place.contains_key(key) || !anchored_at_first_place(item_type(&items[index].value)) {
            place.insert(key, index);
        }
    }
    if latest.len() == keys.iter().flatten().count() {
        return items;
    }
    let order: Vec<usize> = keys
        .iter()
        .enumerate()
        .filter_map(|(index, key)| match key.as_deref() {
            None => Some(index),
            Some(key) => (place[key] == index).then(|| latest[key]),
        })
        .collect();
    let mut slots: Vec<Option<StoredItem>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|index| slots[index].take())
        .collect()
}

#[cfg(test)]
#[path = "prepare_tests.rs"]
mod tests;

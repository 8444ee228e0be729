//! Where a trim of a session may cut, pure: a trim keeps the newest items from a cut on, and a
//! cut must never separate what the Responses API takes only together. A tool call and its
//! output (the same `call_id`), an item a `program` call issued and that call, and a reasoning
//! item and the item after it stay on one side: the SDK would drop the half that is left
//! (`drop_orphan_function_calls`), or the provider would refuse the request.

use serde_json::Value as Json;

use super::item::{CALL_OUTPUT_TYPES, StoredItem, is_output_type, output_type_of};
use crate::sources::stored_trim::Keep;

/// Where a trim cuts `items`: the index of the first kept item (`items.len()` keeps none), and
/// how many items it moved the cut by to keep a call with its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub first_kept: usize,
    /// Items dropped beyond what the limit alone would drop.
    pub moved: usize,
}

/// The cut `keep` asks for, moved forward to the nearest place where no pair is split;
/// `tokens_from(i)` is what the list counts from item `i` on, 0 past the end (only
/// [`Keep::MaxTokens`] asks it).
pub fn cut(items: &[StoredItem], tokens_from: impl Fn(usize) -> u64, keep: Keep) -> Cut {
    let wanted = match keep {
        Keep::Last(n) => items.len().saturating_sub(n),
        // What a list counts only shrinks as its start moves on.
        Keep::MaxTokens(limit) => (0..=items.len())
            .find(|&start| tokens_from(start) <= limit)
            .unwrap_or(items.len()),
    };
    let safe = safe_cuts(items);
    let first_kept = (wanted..=items.len())
        .find(|&at| safe[at])
        .unwrap_or(items.len());
    Cut {
        first_kept,
        moved: first_kept - wanted,
    }
}

/// For each place `0..=items.len()`, whether a cut there keeps every pair whole.
pub fn safe_cuts(items: &[StoredItem]) -> Vec<bool> {
    // A pair spanning items `a..=b` forbids every cut in `a+1..=b`: one more at a+1, one
    // fewer after b, summed as we go.
    let mut spans = vec![0i64; items.len() + 2];
    let mut forbid = |a: usize, b: usize| {
        if a < b {
            spans[a + 1] += 1;
            spans[b + 1] -= 1;
        }
    };
    let mut first_seen: std::collections::HashMap<(&str, &str), usize> = Default::default();
    let mut last_seen: std::collections::HashMap<(&str, &str), usize> = Default::default();
    for (index, item) in items.iter().enumerate() {
        if let Some(key) = pair_key(&item.value) {
            first_seen.entry(key).or_insert(index);
            last_seen.insert(key, index);
        }
        if is_reasoning(&item.value) && index + 1 < items.len() {
            forbid(index, index + 1);
        }
    }
    for (key, first) in &first_seen {
        forbid(*first, last_seen[key]);
    }
    let mut open = 0;
    (0..=items.len())
        .map(|at| {
            open += spans[at];
            open == 0
        })
        .collect()
}

/// What ties an item to others: the call family and id of a call or of its output, or the
/// `program` call that issued it.
fn pair_key(value: &Json) -> Option<(&'static str, &str)> {
    let kind = value.get("type").and_then(Json::as_str)?;
    if let Some(caller) = value.get("caller")
        && caller.get("type").and_then(Json::as_str) == Some("program")
        && let Some(id) = caller.get("caller_id").and_then(Json::as_str)
    {
        return Some(("program", id));
    }
    let call_id = value.get("call_id").and_then(Json::as_str)?;
    let family = match output_type_of(kind) {
        Some(_) => CALL_OUTPUT_TYPES.iter().find(|(call, _)| *call == kind)?.0,
        None if is_output_type(kind) => CALL_OUTPUT_TYPES.iter().find(|(_, out)| *out == kind)?.0,
        None => return None,
    };
    Some((family, call_id))
}

fn is_reasoning(value: &Json) -> bool {
    value.get("type").and_then(Json::as_str) == Some("reasoning")
}

#[cfg(test)]
#[path = "cut_tests.rs"]
mod tests;

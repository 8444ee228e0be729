//! ADK 2.13's pairing of function calls with their responses (`flows/llm_flows/tools/
//! _rearranger.py`), on the items of a contents build: orphaned responses dropped, the latest
//! response moved beside its call, async responses merged after theirs, calls without a response
//! dropped. Pure.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value as Json;

use super::item::{Item, call_of, response_of, truthy_text};

/// A response with no call before it (by id, or by name when neither has an id), dropped part by
/// part; an item left with no part is dropped whole and returned apart.
pub fn drop_orphaned_responses(items: Vec<Item>, dropped: &mut Vec<Item>) -> Vec<Item> {
    let mut seen_ids: HashSet<String> = HashSet::new();
    let mut seen_names: HashSet<String> = HashSet::new();
    let mut result = Vec::with_capacity(items.len());
    for item in items {
        let mut current = item.clone();
        if !item.parts().is_empty() && item.has_responses() {
            let kept: Vec<Json> = item
                .parts()
                .iter()
                .filter(|part| match response_of(part) {
                    None => true,
                    Some(response) => match truthy_text(response, "id") {
                        Some(id) => seen_ids.contains(id),
                        None => truthy_text(response, "name")
                            .is_some_and(|name| seen_names.contains(name)),
                    },
                })
                .cloned()
                .collect();
            if kept.is_empty() {
                dropped.push(item.clone());
            } else {
                if kept.len() != item.parts().len() {
                    current = item.with_parts(kept);
                }
                result.push(current.clone());
            }
        } else {
            result.push(current.clone());
        }
        for (id, name) in current.calls() {
            match (id.filter(|i| !i.is_empty()), name.filter(|n| !n.is_empty())) {
                (Some(id), _) => {
                    seen_ids.insert(id.to_owned());
                }
                (None, Some(name)) => {
                    seen_names.insert(name.to_owned());
                }
                _ => {}
            }
        }
    }
    result
}

/// `merge_function_response_events`: the first item with each later response replacing the
/// part of the same id, and every other part appended.
fn merge(items: &[&Item]) -> Item {
    let mut merged = items[0].clone();
    let mut parts: Vec<Json> = merged.parts().to_vec();
    let mut index: HashMap<Option<String>, usize> = HashMap::new();
    for (n, part) in parts.iter().enumerate() {
        if let Some(response) = response_of(part) {
            index.insert(id_of(response), n);
        }
    }
    for item in &items[1..] {
        for part in item.parts() {
            match response_of(part) {
                Some(response) => {
                    let id = id_of(response);
                    match index.get(&id) {
                        Some(&n) => parts[n] = part.clone(),
                        None => {
                            parts.push(part.clone());
                            index.insert(id, parts.len() - 1);
                        }
                    }
                }
                None => parts.push(part.clone()),
            }
        }
        for from in &item.from {
            if !merged.from.contains(from) {
                merged.from.push(*from);
            }
        }
    }
    merged.with_parts(parts)
}

fn id_of(value: &Json) -> Option<String> {
    value.get("id").and_then(Json::as_str).map(str::to_owned)
}

fn is_stale_text_reply(item: &Item, invocation_id: &str) -> bool {
    item.invocation_id == invocation_id
        && item.author != "user"
        && item.role() == Some("model")
        && !item.has_calls()
        && !item.compaction
        && item
            .parts()
            .iter()
            .any(|p| truthy_text(p, "text").is_some())
}

/// `rearrange_events_for_async_function_responses_in_history`: each call followed by the last
/// response attributed to it (several merged), responses elsewhere dropped, and the stale text
/// replies between two updates of one call in one invocation dropped.
pub fn rearrange_async(items: Vec<Item>, dropped: &mut Vec<Item>) -> Vec<Item> {
    let mut calls_by_id: HashMap<Option<String>, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        if item.has_responses() {
            continue;
        }
        for part in item.parts() {
            if let Some(call) = call_of(part) {
                calls_by_id.entry(id_of(call)).or_default().push(i);
            }
        }
    }
    let mut responses_by_call: BTreeMap<(Option<String>, usize), Vec<usize>> = BTreeMap::new();
    let mut any_response = false;
    for (i, item) in items.iter().enumerate() {
        for part in item.parts() {
            let Some(response) = response_of(part) else {
                continue;
            };
            any_response = true;
            let id = id_of(response);
            let Some(calls) = calls_by_id.get(&id).filter(|c| !c.is_empty()) else {
                continue;
            };
            let preceding = calls.partition_point(|&c| c < i);
            let owner = calls[preceding.saturating_sub(1)];
            responses_by_call.entry((id, owner)).or_default().push(i);
        }
    }
    if !any_response {
        return items;
    }
    let mut stale: BTreeSet<usize> = BTreeSet::new();
    for indices in responses_by_call.values() {
        for pair in indices.windows(2) {
            let (cur, next) = (pair[0], pair[1]);
            let (a, b) = (&items[cur], &items[next]);
            if a.invocation_id != b.invocation_id || a.author != b.author || a.asks {
                continue;
            }
            let run = cur + 1..next;
            if !run.is_empty()
                && run
                    .clone()
                    .all(|k| is_stale_text_reply(&items[k], &a.invocation_id))
            {
                stale.extend(run);
            }
        }
    }
    let mut placed: BTreeSet<usize> = BTreeSet::new();
    let mut result = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if stale.contains(&i) || item.has_responses() {
            continue;
        }
        if !item.has_calls() {
            result.push(item.clone());
            continue;
        }
        let mut answers: BTreeSet<usize> = BTreeSet::new();
        for part in item.parts() {
            if let Some(call) = call_of(part)
                && let Some(indices) = responses_by_call.get(&(id_of(call), i))
                && let Some(last) = indices.last()
            {
                answers.insert(*last);
            }
        }
        result.push(item.clone());
        match answers.len() {
            0 => {}
            1 => result.push(items[*answers.first().unwrap_or(&0)].clone()),
            _ => {
                let group: Vec<&Item> = answers.iter().map(|&n| &items[n]).collect();
                result.push(merge(&group));
            }
        }
        placed.extend(answers);
    }
    for (i, item) in items.into_iter().enumerate() {
        if stale.contains(&i) || (item.has_responses() && !placed.contains(&i)) {
            dropped.push(item);
        }
    }
    result
}

/// The item whose call a response answers: the latest with its id, or, neither having one, its
/// name.
fn owning_call(history: &[Item], response: &Json) -> Option<usize> {
    let id = truthy_text(response, "id");
    let name = truthy_text(response, "name");
    (0..history.len()).rev().find(|&idx| {
        history[idx].parts().iter().filter_map(call_of).any(|call| {
            let call_id = truthy_text(call, "id");
            match id {
                Some(id) => call_id == Some(id),
                None => call_id.is_none() && name.is_some() && truthy_text(call, "name") == name,
            }
        })
    })
}

/// `rearrange_events_for_latest_function_response`: when the last item answers calls further
/// back, each answer is moved beside its call (merged with the updates between), and what sat
/// between the latest of those calls and the end is dropped.
pub fn rearrange_latest(
    items: Vec<Item>,
    orphans: &mut Vec<Item>,
    dropped: &mut Vec<Item>,
) -> Vec<Item> {
    let items = drop_orphaned_responses(items, orphans);
    let n = items.len();
    if n < 2 || !items[n - 1].has_responses() {
        return items;
    }
    let trailing = &items[n - 1];
    if trailing.parts().is_empty() {
        return items;
    }
    let history = &items[..n - 1];
    let mut by_call: BTreeMap<usize, Vec<Json>> = BTreeMap::new();
    let mut others: Vec<Json> = Vec::new();
    for part in trailing.parts() {
        match response_of(part) {
            Some(response) => {
                if let Some(idx) = owning_call(history, response) {
                    by_call.entry(idx).or_default().push(part.clone());
                }
            }
            None => others.push(part.clone()),
        }
    }
    let Some(&latest) = by_call.keys().next_back() else {
        return items;
    };
    by_call.entry(latest).or_default().extend(others);
    if latest == n - 2 && by_call.len() == 1 {
        return items;
    }
    let merged_for = |call_idx: usize| -> Item {
        let split = trailing.with_parts(by_call[&call_idx].clone());
        let mut group: Vec<Item> = Vec::new();
        for ev_idx in call_idx + 1..n - 1 {
            let ev = &items[ev_idx];
            if ev.parts().is_empty() || !ev.has_responses() {
                continue;
            }
            let is_call = ev.has_calls();
            let matched: Vec<Json> = ev
                .parts()
                .iter()
                .filter(|p| match response_of(p) {
                    Some(r) => owning_call(&items[..ev_idx], r) == Some(call_idx),
                    None => !is_call,
                })
                .cloned()
                .collect();
            if matched.iter().any(|p| response_of(p).is_some()) {
                if matched.len() == ev.parts().len() {
                    group.push(ev.clone());
                } else {
                    group.push(ev.with_parts(matched));
                }
            }
        }
        group.push(split);
        if group.len() > 1 {
            merge(&group.iter().collect::<Vec<_>>())
        } else {
            group.remove(0)
        }
    };
    let mut result = Vec::new();
    for idx in 0..=latest {
        let ev = &items[idx];
        let mut current = ev.clone();
        if !ev.parts().is_empty() && ev.has_responses() {
            let kept: Vec<Json> = ev
                .parts()
                .iter()
                .filter(|p| match response_of(p) {
                    None => true,
                    Some(r) => {
                        owning_call(&items[..idx], r).is_none_or(|o| !by_call.contains_key(&o))
                    }
                })
                .cloned()
                .collect();
            if !kept
                .iter()
                .any(|p| response_of(p).is_some() || call_of(p).is_some())
            {
                continue;
            }
            if kept.len() != ev.parts().len() {
                current = ev.with_parts(kept);
            }
        }
        result.push(current);
        if by_call.contains_key(&idx) {
            result.push(merged_for(idx));
        }
    }
    let kept: BTreeSet<usize> = result.iter().flat_map(|i| i.from.clone()).collect();
    dropped.extend(
        items
            .into_iter()
            .filter(|i| i.from.iter().all(|f| !kept.contains(f))),
    );
    result
}

/// `drop_orphaned_function_calls`: a call with an id no response answers, and not a pending
/// long-running one, is dropped (its item too when nothing else is left). Returns the calls
/// dropped, by the event that made them and their id.
pub fn drop_orphaned_calls(
    items: Vec<Item>,
    dropped: &mut Vec<Item>,
) -> (Vec<Item>, Vec<(usize, String)>) {
    let answered: HashSet<String> = items
        .iter()
        .flat_map(|i| i.responses())
        .filter_map(|(id, _)| id.filter(|i| !i.is_empty()).map(str::to_owned))
        .collect();
    let long_running: HashSet<String> = items
        .iter()
        .flat_map(|i| i.long_running.iter().cloned())
        .collect();
    let mut unanswered = Vec::new();
    let mut result = Vec::with_capacity(items.len());
    for item in items {
        if item.parts().is_empty() || !item.has_calls() {
            result.push(item);
            continue;
        }
        let mut kept = Vec::new();
        for part in item.parts() {
            if let Some(call) = call_of(part)
                && let Some(id) = truthy_text(call, "id")
                && !answered.contains(id)
                && !long_running.contains(id)
            {
                unanswered.push((item.from[0], id.to_owned()));
                continue;
            }
            kept.push(part.clone());
        }
        if kept.is_empty() {
            dropped.push(item);
        } else if kept.len() != item.parts().len() {
            result.push(item.with_parts(kept));
        } else {
            result.push(item);
        }
    }
    (result, unanswered)
}

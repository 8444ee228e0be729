//! Compaction as ADK 2.13 applies it to contents (`flows/llm_flows/context/_compaction.py`):
//! each summary not contained in a later one stands at its end for what it summarised, and a
//! call a summary swallowed while its response survived is put back before that response. Pure.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::Value as Json;

use super::item::{Item, Made};

/// A compaction's range and summary: start, end, the summarised content.
pub type Range = (f64, f64, Json);

/// `_get_compaction_ranges` then `_process_compaction_events`: each summary not contained in a
/// later one stands at its end, and every event inside a summarised range is dropped.
pub fn compact(
    items: Vec<(Item, Option<Range>)>,
    agent: &str,
    compacted: &mut Vec<usize>,
) -> Vec<Item> {
    let ranges: Vec<(usize, f64, f64)> = items
        .iter()
        .enumerate()
        .filter_map(|(n, (_, c))| c.as_ref().map(|(s, e, _)| (n, *s, *e)))
        .collect();
    let mut retained: BTreeSet<usize> = ranges
        .iter()
        .filter(|(_, s, e)| s.is_nan() || e.is_nan())
        .map(|(n, _, _)| *n)
        .collect();
    let mut comparable: Vec<(usize, f64, f64)> = ranges
        .iter()
        .copied()
        .filter(|(_, s, e)| !s.is_nan() && !e.is_nan())
        .collect();
    comparable.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then(b.2.total_cmp(&a.2))
            .then(b.0.cmp(&a.0))
    });
    let mut max_end: Option<f64> = None;
    for (n, _, end) in comparable {
        if max_end.is_none_or(|m| end > m) {
            retained.insert(n);
            max_end = Some(end);
        }
    }
    let mut spans: Vec<(f64, f64)> = ranges
        .iter()
        .filter(|(n, s, e)| retained.contains(n) && s <= e)
        .map(|(_, s, e)| (*s, *e))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut coverage: Vec<(f64, f64)> = Vec::new();
    for (start, end) in spans {
        match coverage.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => coverage.push((start, end)),
        }
    }
    let covered = |ts: f64| {
        let index = coverage.partition_point(|(start, _)| *start <= ts);
        index > 0 && ts <= coverage[index - 1].1
    };
    let mut placed: Vec<(f64, usize, Item)> = Vec::new();
    for (n, (item, compaction)) in items.into_iter().enumerate() {
        if item.compaction {
            match compaction {
                Some((_, end, summary)) if retained.contains(&n) => {
                    let mut summary_item = item.clone();
                    summary_item.author = if agent.is_empty() { "model" } else { agent }.to_owned();
                    summary_item.timestamp = end;
                    summary_item.content = Some(summary);
                    summary_item.made = Made::Summary;
                    summary_item.long_running = Vec::new();
                    placed.push((end, n, summary_item));
                }
                _ => {
                    compacted.push(item.from[0]);
                }
            }
        } else if covered(item.timestamp) {
            compacted.push(item.from[0]);
        } else {
            placed.push((item.timestamp, n, item));
        }
    }
    placed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    placed.into_iter().map(|(_, _, item)| item).collect()
}

/// `_recover_compacted_function_calls`: a response that survived compaction while the event of
/// its call did not gets that event back just before it (and the call's sibling responses the
/// compaction removed), so the pair stays whole. `source` is the items before compaction.
pub fn recover_calls(items: Vec<Item>, source: &[Item]) -> Vec<Item> {
    if !items.iter().any(Item::has_responses) {
        return items;
    }
    let present: HashSet<usize> = items
        .iter()
        .filter(|i| i.made != Made::Summary)
        .map(|i| i.from[0])
        .collect();
    let index: HashMap<usize, usize> = source
        .iter()
        .enumerate()
        .map(|(n, i)| (i.from[0], n))
        .collect();
    let mut latest_call: HashMap<String, usize> = HashMap::new();
    let mut call_of_response: HashMap<(usize, String), usize> = HashMap::new();
    let mut response_of_call: HashMap<(usize, String), usize> = HashMap::new();
    let mut surviving: HashSet<(usize, String)> = HashSet::new();
    for (n, item) in source.iter().enumerate() {
        for (id, _) in item.calls() {
            if let Some(id) = id.filter(|i| !i.is_empty()) {
                latest_call.insert(id.to_owned(), n);
            }
        }
        for (id, _) in item.responses() {
            let Some(id) = id.filter(|i| !i.is_empty()) else {
                continue;
            };
            let Some(&call) = latest_call.get(id) else {
                continue;
            };
            call_of_response.insert((n, id.to_owned()), call);
            let key = (call, id.to_owned());
            if present.contains(&item.from[0]) {
                surviving.insert(key.clone());
            }
            let later = response_of_call
                .get(&key)
                .is_none_or(|&e| item.timestamp >= source[e].timestamp);
            if later {
                response_of_call.insert(key, n);
            }
        }
    }
    let mut result = Vec::with_capacity(items.len());
    let mut calls_back: HashSet<usize> = HashSet::new();
    let mut responses_back: HashSet<usize> = HashSet::new();
    for item in &items {
        for (id, _) in item.responses() {
            let Some(id) = id.filter(|i| !i.is_empty()) else {
                continue;
            };
            let Some(&call) = index
                .get(&item.from[0])
                .and_then(|n| call_of_response.get(&(*n, id.to_owned())))
            else {
                continue;
            };
            if present.contains(&source[call].from[0]) || calls_back.contains(&call) {
                continue;
            }
            result.push(source[call].clone());
            calls_back.insert(call);
            for (sibling, _) in source[call].calls() {
                let Some(sibling) = sibling.filter(|i| !i.is_empty()) else {
                    continue;
                };
                let key = (call, sibling.to_owned());
                if surviving.contains(&key) {
                    continue;
                }
                if let Some(&response) = response_of_call.get(&key)
                    && responses_back.insert(response)
                {
                    result.push(source[response].clone());
                }
            }
        }
        result.push(item.clone());
    }
    if calls_back.is_empty() { items } else { result }
}

//! Which checkpoints of a thread a prune deletes, from its rows alone (no body decoded): each
//! namespace of the root graph or of a `checkpointer=True` subgraph keeps its `keep_last`
//! newest checkpoints (and, with a cut-off, every checkpoint saved at or after it); a subgraph
//! call's namespace (`node:task_id`) goes with the root checkpoint its call started from, as
//! PostgresSaver's own `prune` does. A kept checkpoint whose parent goes loses its parent,
//! as there too.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value as Json;

use super::removal::checkpoint_unix_nanos;
use super::tree::{CheckpointRow, ROOT_NAMESPACE};
use crate::sources::checkpoint_prune::KeepRule;

/// A checkpoint by namespace and id.
pub type CheckpointKey = (String, String);

/// The checkpoints a prune deletes, and the kept ones whose parent it deletes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub deleted: Vec<CheckpointKey>,
    pub orphaned: Vec<CheckpointKey>,
    pub kept: usize,
}

/// The selection for one thread's rows (every namespace).
pub fn select(rows: &[CheckpointRow], rule: KeepRule) -> Selection {
    let mut by_namespace: BTreeMap<&str, Vec<&CheckpointRow>> = BTreeMap::new();
    for row in rows {
        by_namespace
            .entry(row.checkpoint_ns.as_str())
            .or_default()
            .push(row);
    }
    let keep_last = rule.keep_last.max(1);
    let mut deleted: HashSet<(&str, &str)> = HashSet::new();
    for (ns, rows) in &mut by_namespace {
        if is_call_namespace(ns) {
            continue;
        }
        rows.sort_by(|a, b| b.checkpoint_id.cmp(&a.checkpoint_id));
        for row in rows.iter().skip(keep_last) {
            let old_enough = match rule.before_unix_nanos {
                None => true,
                Some(cut) => checkpoint_unix_nanos(&row.checkpoint_id).is_some_and(|t| t < cut),
            };
            if old_enough {
                deleted.insert((ns, row.checkpoint_id.as_str()));
            }
        }
    }
    for (ns, rows) in &by_namespace {
        if !is_call_namespace(ns) {
            continue;
        }
        let Some(head) = rows
            .iter()
            .max_by(|a, b| a.checkpoint_id.cmp(&b.checkpoint_id))
        else {
            continue;
        };
        let root = head
            .metadata
            .get("parents")
            .and_then(|p| p.get(ROOT_NAMESPACE))
            .and_then(Json::as_str);
        if root.is_some_and(|root| deleted.contains(&(ROOT_NAMESPACE, root))) {
            deleted.extend(rows.iter().map(|r| (*ns, r.checkpoint_id.as_str())));
        }
    }
    let mut selection = Selection::default();
    for row in rows {
        let key = (row.checkpoint_ns.as_str(), row.checkpoint_id.as_str());
        if deleted.contains(&key) {
            selection.deleted.push(owned(key));
            continue;
        }
        selection.kept += 1;
        let parent_gone = row
            .parent_checkpoint_id
            .as_deref()
            .is_some_and(|parent| deleted.contains(&(key.0, parent)));
        if parent_gone {
            selection.orphaned.push(owned(key));
        }
    }
    selection
}

/// A subgraph call's namespace has the task id after a `:`; a `checkpointer=True`
/// subgraph's, whose state outlives each call, has none.
fn is_call_namespace(ns: &str) -> bool {
    ns.contains(':')
}

fn owned((ns, id): (&str, &str)) -> CheckpointKey {
    (ns.to_owned(), id.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// UUIDv6 ids one second apart, from 2026-01-01.
    fn id(second: u64) -> String {
        let time = (1_767_225_600 + second) * 10_000_000 + 0x01B2_1DD2_1381_4000;
        let n: u128 = (u128::from(time >> 12) << 80)
            | (u128::from(time & 0x0FFF) << 64)
            | (0x6u128 << 76)
            | (0x8000u128 << 48);
        uuid::Uuid::from_u128(n).to_string()
    }

    fn row(ns: &str, id: String, parent: Option<String>, root: Option<&str>) -> CheckpointRow {
        CheckpointRow {
            checkpoint_ns: ns.to_owned(),
            checkpoint_id: id,
            parent_checkpoint_id: parent,
            metadata: match root {
                Some(root) => json!({"parents": {"": root}}),
                None => json!({"parents": {}}),
            },
        }
    }

    fn chain() -> Vec<CheckpointRow> {
        let mut rows: Vec<CheckpointRow> = (0..5)
            .map(|s| row("", id(s), (s > 0).then(|| id(s - 1)), None))
            .collect();
        // A call started from the second checkpoint, and one from the last.
        rows.push(row("worker:1", id(10), None, Some(&id(1))));
        rows.push(row("worker:1", id(11), Some(id(10)), Some(&id(1))));
        rows.push(row("worker:4", id(12), None, Some(&id(4))));
        rows
    }

    #[test]
    fn keeps_the_newest_and_the_calls_they_started() {
        let selection = select(
            &chain(),
            KeepRule {
                keep_last: 2,
                before_unix_nanos: None,
            },
        );
        let ids: Vec<&str> = selection
            .deleted
            .iter()
            .map(|(_, id)| id.as_str())
            .collect();
        assert_eq!(ids, [id(0), id(1), id(2), id(10), id(11)]);
        assert_eq!(selection.orphaned, [(String::new(), id(3))]);
        assert_eq!(selection.kept, 3);
    }

    #[test]
    fn a_cut_off_keeps_what_is_newer() {
        let cut = (1_767_225_600 + 1) * 1_000_000_000;
        let selection = select(
            &chain(),
            KeepRule {
                keep_last: 1,
                before_unix_nanos: Some(cut),
            },
        );
        let ids: Vec<&str> = selection
            .deleted
            .iter()
            .map(|(_, id)| id.as_str())
            .collect();
        assert_eq!(ids, [id(0)]);
        assert_eq!(selection.orphaned, [(String::new(), id(1))]);
    }

    #[test]
    fn the_latest_always_stays() {
        let selection = select(
            &chain(),
            KeepRule {
                keep_last: 0,
                before_unix_nanos: None,
            },
        );
        assert!(!selection.deleted.contains(&(String::new(), id(4))));
        assert!(!selection.deleted.contains(&("worker:4".to_owned(), id(12))));
    }
}

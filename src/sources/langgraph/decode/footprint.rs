//! What one thread costs its database and what is wrong with its rows, from the rows' sizes and
//! links alone (no value decoded): bytes and checkpoints, what keeping only the newest `N` root
//! checkpoints would free, writes whose checkpoint is gone, PostgreSQL blobs no checkpoint names,
//! parents that are not there, and the values whose stored type cannot be read (pickle, an
//! encrypted value without its key, a type LangGraph never writes).
//!
//! Keeping the newest `N` keeps what `checkpoints prune --keep-last N` keeps
//! ([`select`](super::prune::select)): each namespace's `N` greatest ids, a subgraph call's
//! namespace with the root checkpoint it started from; every other checkpoint goes with its
//! writes, and a blob goes when no kept checkpoint names its version.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::prune::{CheckpointKey, select};
use super::tree::{CheckpointRow, CheckpointTree, ROOT_NAMESPACE};
use crate::memory::tree::TreeAnomaly;
use crate::sources::checkpoint_prune::KeepRule;

/// One checkpoint's row: its links, stored type and size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizedCheckpoint {
    pub row: CheckpointRow,
    /// The body's serializer type (SqliteSaver); `None` for PostgresSaver's JSONB.
    pub type_name: Option<String>,
    /// Bytes of the body and metadata as stored.
    pub bytes: i64,
    /// PostgresSaver: the body's `channel_versions`, which name its blobs.
    pub channel_versions: BTreeMap<String, String>,
}

/// The writes of one (checkpoint, type), counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteGroup {
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub type_name: Option<String>,
    pub writes: i64,
    pub bytes: i64,
}

/// One PostgresSaver blob, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobSize {
    pub checkpoint_ns: String,
    pub channel: String,
    pub version: String,
    pub type_name: String,
    pub bytes: i64,
}

/// What removing rows frees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Freed {
    pub checkpoints: usize,
    pub writes: i64,
    pub blobs: usize,
    pub bytes: i64,
}

/// Writes keyed to a checkpoint the thread does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrphanWrites {
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub writes: i64,
    pub bytes: i64,
}

/// Values of a stored type memscope cannot read, by what they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ValueTypes {
    pub pickle: usize,
    /// `…+aes`: readable with the key only.
    pub encrypted: usize,
    /// Types LangGraph's serializer does not write, by name.
    pub unknown: BTreeMap<String, usize>,
}

impl ValueTypes {
    fn note(&mut self, type_name: &str, count: usize) {
        let plain = match type_name.split_once('+') {
            Some((inner, "aes")) => {
                self.encrypted += count;
                inner
            }
            Some(_) => {
                *self.unknown.entry(type_name.to_owned()).or_default() += count;
                return;
            }
            None => type_name,
        };
        match plain {
            "pickle" => self.pickle += count,
            "null" | "bytes" | "bytearray" | "msgpack" | "json" | "empty" => {}
            other => *self.unknown.entry(other.to_owned()).or_default() += count,
        }
    }
}

/// One thread's rows, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadFootprint {
    /// Checkpoints of every namespace.
    pub checkpoints: usize,
    /// Checkpoints of the root graph: each holds the whole state again.
    pub root_checkpoints: usize,
    pub writes: i64,
    pub blobs: usize,
    /// Checkpoints, writes and blobs.
    pub bytes: i64,
    /// What keeping the newest `keep_last` root checkpoints frees.
    pub keep_last: usize,
    pub freed: Freed,
    pub orphan_writes: Vec<OrphanWrites>,
    /// Blobs no checkpoint's channel versions name.
    pub unreferenced_blobs: Freed,
    /// Parents that are not in the database, and cycles.
    pub anomalies: Vec<String>,
    pub value_types: ValueTypes,
}

impl ThreadFootprint {
    pub fn measure(
        checkpoints: &[SizedCheckpoint],
        writes: &[WriteGroup],
        blobs: &[BlobSize],
        keep_last: usize,
    ) -> ThreadFootprint {
        let rows: Vec<CheckpointRow> = checkpoints.iter().map(|c| c.row.clone()).collect();
        let tree = CheckpointTree::build(&rows, &[]);
        let rule = KeepRule {
            keep_last,
            before_unix_nanos: None,
        };
        let deleted: BTreeSet<CheckpointKey> = select(&rows, rule).deleted.into_iter().collect();
        let key = |ns: &str, id: &str| (ns.to_owned(), id.to_owned());
        let known: BTreeSet<(String, String)> = checkpoints
            .iter()
            .map(|c| key(&c.row.checkpoint_ns, &c.row.checkpoint_id))
            .collect();
        let kept = |owner: &CheckpointKey| known.contains(owner) && !deleted.contains(owner);

        let mut value_types = ValueTypes::default();
        let mut freed = Freed::default();
        let mut bytes = 0;
        for checkpoint in checkpoints {
            bytes += checkpoint.bytes;
            if let Some(type_name) = &checkpoint.type_name {
                value_types.note(type_name, 1);
            }
            if !kept(&key(
                &checkpoint.row.checkpoint_ns,
                &checkpoint.row.checkpoint_id,
            )) {
                freed.checkpoints += 1;
                freed.bytes += checkpoint.bytes;
            }
        }

        let mut orphans: BTreeMap<(String, String), OrphanWrites> = BTreeMap::new();
        let mut write_count = 0;
        for group in writes {
            write_count += group.writes;
            bytes += group.bytes;
            if let Some(type_name) = &group.type_name {
                value_types.note(type_name, group.writes as usize);
            }
            let owner = key(&group.checkpoint_ns, &group.checkpoint_id);
            if !kept(&owner) {
                freed.writes += group.writes;
                freed.bytes += group.bytes;
            }
            if !known.contains(&owner) {
                let orphan = orphans.entry(owner).or_insert_with(|| OrphanWrites {
                    checkpoint_ns: group.checkpoint_ns.clone(),
                    checkpoint_id: group.checkpoint_id.clone(),
                    writes: 0,
                    bytes: 0,
                });
                orphan.writes += group.writes;
                orphan.bytes += group.bytes;
            }
        }

        let named_by = |only_kept: bool| -> BTreeSet<(&str, &str, &str)> {
            checkpoints
                .iter()
                .filter(|c| !only_kept || kept(&key(&c.row.checkpoint_ns, &c.row.checkpoint_id)))
                .flat_map(|c| {
                    c.channel_versions.iter().map(|(channel, version)| {
                        (
                            c.row.checkpoint_ns.as_str(),
                            channel.as_str(),
                            version.as_str(),
                        )
                    })
                })
                .collect()
        };
        let (named, named_after) = (named_by(false), named_by(true));
        let mut unreferenced_blobs = Freed::default();
        for blob in blobs {
            bytes += blob.bytes;
            value_types.note(&blob.type_name, 1);
            let name = (
                blob.checkpoint_ns.as_str(),
                blob.channel.as_str(),
                blob.version.as_str(),
            );
            if !named.contains(&name) {
                unreferenced_blobs.blobs += 1;
                unreferenced_blobs.bytes += blob.bytes;
            }
            if !named_after.contains(&name) {
                freed.blobs += 1;
                freed.bytes += blob.bytes;
            }
        }

        let anomalies =
            std::iter::once(&tree.root)
                .chain(&tree.subgraphs)
                .flat_map(|ns| {
                    ns.anomalies().iter().filter_map(move |anomaly| match anomaly {
                    // Ids are the table's primary key: a duplicate cannot be stored.
                    TreeAnomaly::DuplicateId { .. } => None,
                    TreeAnomaly::DanglingParent { id, missing_parent } => Some(format!(
                        "checkpoint {id}{} names parent {missing_parent}, which is not in the \
                         database: its history stops there",
                        namespace_label(&ns.name)
                    )),
                    other => Some(format!("{other}{}", namespace_label(&ns.name))),
                })
                })
                .collect();

        ThreadFootprint {
            checkpoints: checkpoints.len(),
            root_checkpoints: tree.root.checkpoints.len(),
            writes: write_count,
            blobs: blobs.len(),
            bytes,
            keep_last,
            freed,
            orphan_writes: orphans.into_values().collect(),
            unreferenced_blobs,
            anomalies,
            value_types,
        }
    }
}

fn namespace_label(name: &str) -> String {
    if name == ROOT_NAMESPACE {
        String::new()
    } else {
        format!(" (subgraph {name})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checkpoint(ns: &str, id: &str, parent: Option<&str>, bytes: i64) -> SizedCheckpoint {
        let parents = if ns.is_empty() {
            json!({})
        } else {
            json!({"": "c2"})
        };
        SizedCheckpoint {
            row: CheckpointRow {
                checkpoint_ns: ns.into(),
                checkpoint_id: id.into(),
                parent_checkpoint_id: parent.map(Into::into),
                metadata: json!({"source": "loop", "step": 0, "parents": parents}),
            },
            type_name: Some("msgpack".into()),
            bytes,
            channel_versions: BTreeMap::new(),
        }
    }

    fn writes(ns: &str, id: &str, type_name: &str, writes: i64, bytes: i64) -> WriteGroup {
        WriteGroup {
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            type_name: Some(type_name.into()),
            writes,
            bytes,
        }
    }

    #[test]
    fn keeping_the_newest_frees_the_rest_with_their_writes_and_subgraphs() {
        let rows = [
            checkpoint("", "c1", None, 100),
            checkpoint("", "c2", Some("c1"), 200),
            checkpoint("", "c3", Some("c2"), 300),
            checkpoint("", "c4", Some("c3"), 400),
            // A subgraph run from c2, which the prune drops.
            checkpoint("worker:1", "s1", None, 50),
            checkpoint("worker:1", "s2", Some("s1"), 60),
        ];
        let groups = [
            writes("", "c1", "msgpack", 2, 10),
            writes("", "c3", "msgpack", 1, 20),
            writes("", "gone", "pickle", 3, 30),
        ];
        let footprint = ThreadFootprint::measure(&rows, &groups, &[], 2);
        assert_eq!(footprint.checkpoints, 6);
        assert_eq!(footprint.root_checkpoints, 4);
        assert_eq!(footprint.bytes, 1_110 + 60);
        assert_eq!(
            footprint.freed,
            Freed {
                checkpoints: 4,
                writes: 5,
                blobs: 0,
                bytes: 100 + 200 + 50 + 60 + 10 + 30,
            }
        );
        assert_eq!(
            footprint.orphan_writes,
            [OrphanWrites {
                checkpoint_ns: String::new(),
                checkpoint_id: "gone".into(),
                writes: 3,
                bytes: 30,
            }]
        );
        assert_eq!(footprint.value_types.pickle, 3);
        assert!(footprint.anomalies.is_empty(), "{:?}", footprint.anomalies);

        let all = ThreadFootprint::measure(&rows, &groups, &[], 10);
        // Only the writes of no checkpoint go when every checkpoint stays.
        assert_eq!(all.freed.checkpoints, 0);
        assert_eq!(all.freed.writes, 3);
    }

    #[test]
    fn blobs_go_when_no_kept_checkpoint_names_their_version() {
        let mut old = checkpoint("", "c1", None, 10);
        old.channel_versions = BTreeMap::from([("messages".into(), "1".into())]);
        let mut new = checkpoint("", "c2", Some("c1"), 10);
        new.channel_versions = BTreeMap::from([("messages".into(), "2".into())]);
        let blob = |version: &str, bytes| BlobSize {
            checkpoint_ns: String::new(),
            channel: "messages".into(),
            version: version.into(),
            type_name: "msgpack+aes".into(),
            bytes,
        };
        let blobs = [blob("1", 100), blob("2", 200), blob("9", 400)];
        let footprint = ThreadFootprint::measure(&[old, new], &[], &blobs, 1);
        assert_eq!(
            footprint.unreferenced_blobs,
            Freed {
                blobs: 1,
                bytes: 400,
                ..Freed::default()
            }
        );
        assert_eq!(footprint.freed.blobs, 2);
        assert_eq!(footprint.freed.bytes, 10 + 100 + 400);
        assert_eq!(footprint.value_types.encrypted, 3);
    }

    #[test]
    fn a_missing_parent_and_an_unknown_type_are_named() {
        let mut odd = checkpoint("", "c2", Some("c1"), 10);
        odd.type_name = Some("yaml".into());
        let footprint = ThreadFootprint::measure(&[odd], &[], &[], 5);
        assert_eq!(footprint.anomalies.len(), 1);
        assert!(
            footprint.anomalies[0].contains("parent c1"),
            "{:?}",
            footprint.anomalies
        );
        assert_eq!(
            footprint.value_types.unknown,
            BTreeMap::from([("yaml".into(), 1)])
        );
    }
}

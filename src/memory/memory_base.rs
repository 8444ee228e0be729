//! Memory bases (seed 003, Langflow's shipped version): the pure rules. Which messages are
//! pending, when a session is due for a sync, how a knowledge base is named, when a knowledge
//! base no longer matches what the database says was ingested, and what a job is given.

use std::cmp::Ordering;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Langflow's default threshold.
pub const DEFAULT_THRESHOLD: i64 = 50;

/// What a memory base's threshold counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdUnit {
    /// Output messages after the cursor (the seed).
    Messages,
    /// Completed flow runs ("strides") not yet ingested (Langflow as shipped).
    Runs,
}

impl ThresholdUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            ThresholdUnit::Messages => "messages",
            ThresholdUnit::Runs => "runs",
        }
    }

    /// The unit a `threshold_unit` column names; anything else is `None`.
    pub fn parse(text: &str) -> Option<ThresholdUnit> {
        match text {
            "messages" => Some(ThresholdUnit::Messages),
            "runs" => Some(ThresholdUnit::Runs),
            _ => None,
        }
    }
}

impl fmt::Display for ThresholdUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an automatic check should start a sync. A threshold below 1 behaves as 1: a session
/// with nothing pending never syncs.
pub fn threshold_reached(pending: i64, threshold: i64) -> bool {
    pending > 0 && pending >= threshold.max(1)
}

/// A message's place in a session: messages are ordered by the instant of their timestamp, then
/// by id. The seed compared ids alone, which cannot work for random UUIDs; Langflow ships this
/// tuple order. The timestamp is an instant (see [`crate::memory::instant`]), never text, and ids
/// compare in their [`canonical_id`] form, so every writer's spelling orders alike.
#[derive(Debug, Clone, Serialize)]
pub struct MessagePosition {
    pub timestamp: DateTime<Utc>,
    pub id: String,
}

impl Ord for MessagePosition {
    fn cmp(&self, other: &Self) -> Ordering {
        self.timestamp
            .cmp(&other.timestamp)
            .then_with(|| compare_ids(&self.id, &other.id))
    }
}

impl PartialOrd for MessagePosition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for MessagePosition {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MessagePosition {}

impl MessagePosition {
    /// Whether this message comes strictly after the cursor (everything does when there is none).
    pub fn is_after(&self, cursor: Option<&MessagePosition>) -> bool {
        cursor.is_none_or(|cursor| self > cursor)
    }
}

/// The one form every stored message id is compared in: lowercase hex without dashes. Langflow's
/// SQLite stores 32-hex uuids, PostgreSQL a native uuid (printed with dashes), memscope dashed
/// text; all name the same message.
pub fn canonical_id(id: &str) -> String {
    canonical_id_bytes(id).map(char::from).collect()
}

fn canonical_id_bytes(id: &str) -> impl Iterator<Item = u8> + '_ {
    id.trim()
        .bytes()
        .filter(|b| *b != b'-')
        .map(|b| b.to_ascii_lowercase())
}

/// Two stored ids in [`canonical_id`] order, without allocating.
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    canonical_id_bytes(a).cmp(canonical_id_bytes(b))
}

/// One message of a session as the sync sees it: its place, and what the counts need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEntry {
    pub position: MessagePosition,
    pub is_output: bool,
    /// Error messages (`error` set, or category `error`) are never ingested, as in Langflow.
    pub is_error: bool,
}

/// A session's messages in (instant, id) order: the one order the cursor, the pending counts and
/// a job's scope are read from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionTimeline {
    entries: Vec<TimelineEntry>,
}

impl SessionTimeline {
    pub fn new(mut entries: Vec<TimelineEntry>) -> SessionTimeline {
        entries.sort_by(|a, b| a.position.cmp(&b.position));
        SessionTimeline { entries }
    }

    pub fn entries(&self) -> &[TimelineEntry] {
        &self.entries
    }

    /// The message with this id, in any spelling of it.
    pub fn find(&self, id: &str) -> Option<&MessagePosition> {
        self.entries
            .iter()
            .map(|e| &e.position)
            .find(|p| compare_ids(&p.id, id) == Ordering::Equal)
    }

    /// The messages strictly after the cursor.
    pub fn after(&self, cursor: Option<&MessagePosition>) -> &[TimelineEntry] {
        let start = self
            .entries
            .partition_point(|e| !e.position.is_after(cursor));
        &self.entries[start..]
    }

    /// The messages a sync would ingest: after the cursor, errors left out.
    pub fn pending(
        &self,
        cursor: Option<&MessagePosition>,
    ) -> impl DoubleEndedIterator<Item = &MessagePosition> {
        self.after(cursor)
            .iter()
            .filter(|e| !e.is_error)
            .map(|e| &e.position)
    }

    /// Pending output messages: the `messages` unit's count.
    pub fn pending_outputs(&self, cursor: Option<&MessagePosition>) -> i64 {
        self.after(cursor)
            .iter()
            .filter(|e| e.is_output && !e.is_error)
            .count() as i64
    }

    /// The newest message among `ids` (canonical ids): where a cursor whose message was deleted
    /// falls back to.
    pub fn newest_of(&self, ids: &std::collections::HashSet<String>) -> Option<&MessagePosition> {
        self.entries
            .iter()
            .rev()
            .map(|e| &e.position)
            .find(|p| ids.contains(&canonical_id(&p.id)))
    }
}

/// Langflow's `kb_name`: [`kb_name_stem`], then `_` and eight hex digits.
pub fn kb_name(name: &str, suffix: &uuid::Uuid) -> String {
    format!(
        "{}_{}",
        kb_name_stem(name),
        &suffix.simple().to_string()[..8]
    )
}

/// The name part of Langflow's `kb_name`: the name lowercased, runs of whitespace and `-` turned
/// into `_`, other non-word characters dropped (`memory` when nothing is left).
pub fn kb_name_stem(name: &str) -> String {
    let stem: String = name
        .trim()
        .to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-')
        .filter(|part| !part.is_empty())
        .map(|part| {
            part.chars()
                .filter(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if stem.is_empty() {
        "memory".to_owned()
    } else {
        stem
    }
}

/// Whether a `kb_name` is safe as one directory name under the user's folder.
pub fn is_safe_kb_name(kb_name: &str) -> bool {
    !kb_name.is_empty()
        && !kb_name.starts_with('.')
        && kb_name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The job table's dedupe key, as Langflow writes it: one ingestion per (base, session, latest
/// pending unit). `latest_pending` is the newest pending run's job id (unit `runs`) or message id
/// (unit `messages`).
pub fn dedupe_key(memory_base_id: &str, session_id: &str, latest_pending: &str) -> String {
    format!("ingestion:{memory_base_id}:{session_id}:{latest_pending}")
}

/// The name of the per-(base, session) lock: the lease row's key on SQLite.
pub fn lock_name(memory_base_id: &str, session_id: &str) -> String {
    format!("{memory_base_id}:{session_id}")
}

/// The PostgreSQL advisory lock key of a lock name: 63 bits of a name-based UUID, so every
/// process computes the same key.
pub fn advisory_lock_key(lock_name: &str) -> i64 {
    let digest = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, lock_name.as_bytes());
    let bytes: [u8; 8] = digest.as_bytes()[..8]
        .try_into()
        .expect("a UUID has 16 bytes");
    (u64::from_be_bytes(bytes) >> 1) as i64
}

/// The id of one chunk in the knowledge base: the same message and chunk always get the same
/// id, so re-ingesting after a crash overwrites instead of duplicating.
pub fn chunk_id(memory_base_id: &str, message_id: &str, chunk_index: usize) -> String {
    let name = format!("{memory_base_id}/{message_id}/{chunk_index}");
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, name.as_bytes()).to_string()
}

/// What an ingestion job is given when it is created. It never changes afterwards: a threshold
/// edited meanwhile applies to the next check, not to this job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobArgs {
    pub job_id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub flow_id: String,
    pub threshold: i64,
    pub unit: ThresholdUnit,
    /// The cursor when the job was created (the job re-reads it under the lock).
    pub cursor_at_dispatch: Option<String>,
    pub dedupe_key: String,
    /// Manual triggers report a conflict; automatic ones stay quiet.
    pub manual: bool,
}

/// What the knowledge base on disk says about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KbObservation {
    pub directory_exists: bool,
    /// `chunks` of `embedding_metadata.json`; `None` when the file is missing or unreadable.
    pub metadata_chunks: Option<i64>,
    /// Chunks in the vector store; `None` when it is missing or unreadable.
    pub store_chunks: Option<i64>,
    /// Distinct messages with chunks in the vector store.
    pub store_messages: Option<i64>,
    pub embedding_model: Option<String>,
    pub dimension: Option<i64>,
}

/// What the database says a memory base's knowledge base should hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KbExpectation {
    pub total_processed: i64,
    pub ingestion_records: i64,
    pub embedding_model: String,
    pub dimension: i64,
}

/// Why a knowledge base does not match its memory base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mismatch {
    /// The seed's rule: messages were processed but the directory is gone.
    DirectoryMissing,
    /// The seed's rule: processed, but the metadata says 0 chunks.
    MetadataEmpty,
    /// The seed's rule: processed, but the vector store is empty or missing.
    StoreEmpty,
    /// The ingestion records and the messages in the store disagree.
    RecordsDisagree { records: i64, stored_messages: i64 },
    /// The KB was built with another embedding model.
    ModelChanged {
        configured: String,
        built_with: String,
    },
    /// The KB was built with another dimension.
    DimensionChanged { configured: i64, built_with: i64 },
    /// Processed, but the base has no knowledge-base row (Langflow keeps its KBs in the
    /// database's `knowledge_base` table).
    KnowledgeBaseRowMissing,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::DirectoryMissing => f.write_str("knowledge-base directory missing"),
            Mismatch::MetadataEmpty => f.write_str("embedding_metadata.json says 0 chunks"),
            Mismatch::StoreEmpty => f.write_str("vector store empty or missing"),
            Mismatch::KnowledgeBaseRowMissing => {
                f.write_str("no knowledge-base row for the base in the database")
            }
            Mismatch::RecordsDisagree {
                records,
                stored_messages,
            } => write!(
                f,
                "{records} ingestion records but {stored_messages} messages in the vector store"
            ),
            Mismatch::ModelChanged {
                configured,
                built_with,
            } => write!(
                f,
                "embedding model {configured}, KB built with {built_with}"
            ),
            Mismatch::DimensionChanged {
                configured,
                built_with,
            } => write!(f, "dimension {configured}, KB built with {built_with}"),
        }
    }
}

/// Every way the knowledge base disagrees with the database; empty when they agree.
/// What memscope found of a knowledge base Langflow keeps: its row in the database and the
/// chunks of its vector store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangflowKb {
    /// The base's `knowledge_base` row exists (matched by owner and name).
    pub row_exists: bool,
    /// The row's backend (`sqlite`, `postgres`, `chroma`, …).
    pub backend: Option<String>,
    /// Where the vector store is, for the backends memscope reads: its file (`sqlite`), or its
    /// table and database (`postgres`).
    pub path: Option<std::path::PathBuf>,
    /// Chunks in the vector store, or why they could not be counted.
    pub chunks: Result<i64, String>,
}

/// Langflow's own mismatch rule (`MemoryBaseService.check_mismatch`): a base that processed
/// messages mismatches when it has no knowledge-base row or its vector store holds no chunk. A
/// store that cannot be read is not a mismatch there, so it is none here either; the report
/// says why it could not be read.
pub fn langflow_mismatches(total_processed: i64, kb: &LangflowKb) -> Vec<Mismatch> {
    if total_processed <= 0 {
        Vec::new()
    } else if !kb.row_exists {
        vec![Mismatch::KnowledgeBaseRowMissing]
    } else if kb.chunks == Ok(0) {
        vec![Mismatch::StoreEmpty]
    } else {
        Vec::new()
    }
}

impl From<LangflowKb> for KbObservation {
    fn from(kb: LangflowKb) -> KbObservation {
        KbObservation {
            directory_exists: kb.chunks.is_ok(),
            metadata_chunks: None,
            store_chunks: kb.chunks.ok(),
            store_messages: None,
            embedding_model: None,
            dimension: None,
        }
    }
}

pub fn mismatches(expected: &KbExpectation, observed: &KbObservation) -> Vec<Mismatch> {
    let mut found = Vec::new();
    if expected.total_processed > 0 {
        if !observed.directory_exists {
            // Nothing else can be said about a directory that is not there.
            return vec![Mismatch::DirectoryMissing];
        }
        if observed.metadata_chunks.is_none_or(|chunks| chunks == 0) {
            found.push(Mismatch::MetadataEmpty);
        }
        if observed.store_chunks.is_none_or(|chunks| chunks == 0) {
            found.push(Mismatch::StoreEmpty);
        }
    }
    if let Some(stored_messages) = observed.store_messages
        && stored_messages != expected.ingestion_records
        && !(stored_messages == 0 && found.contains(&Mismatch::StoreEmpty))
    {
        found.push(Mismatch::RecordsDisagree {
            records: expected.ingestion_records,
            stored_messages,
        });
    }
    if let Some(built_with) = &observed.embedding_model
        && !expected.embedding_model.is_empty()
        && built_with != &expected.embedding_model
    {
        found.push(Mismatch::ModelChanged {
            configured: expected.embedding_model.clone(),
            built_with: built_with.clone(),
        });
    }
    if let Some(built_with) = observed.dimension
        && built_with != expected.dimension
    {
        found.push(Mismatch::DimensionChanged {
            configured: expected.dimension,
            built_with,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn at(seconds: i64, id: &str) -> MessagePosition {
        MessagePosition {
            timestamp: Utc.timestamp_opt(seconds, 0).unwrap(),
            id: id.to_owned(),
        }
    }

    #[test]
    fn positions_order_by_timestamp_then_id() {
        assert!(at(1, "z") < at(2, "a"));
        assert!(at(2, "a") < at(2, "b"));
        assert!(at(2, "b").is_after(Some(&at(2, "a"))));
        assert!(!at(2, "a").is_after(Some(&at(2, "a"))));
        assert!(at(0, "a").is_after(None));
    }

    proptest! {
        #[test]
        fn pending_messages_are_exactly_those_after_the_cursor(
            stamps in proptest::collection::vec((0i64..5, 0u8..20), 1..40),
            cursor_index in 0usize..40,
        ) {
            let mut messages: Vec<MessagePosition> =
                stamps.iter().map(|(s, id)| at(*s, &format!("{id:02}"))).collect();
            messages.sort();
            messages.dedup();
            let cursor = messages.get(cursor_index % messages.len()).cloned();
            let pending: Vec<_> =
                messages.iter().filter(|m| m.is_after(cursor.as_ref())).collect();
            let cursor = cursor.unwrap();
            let position = messages.iter().position(|m| *m == cursor).unwrap();
            prop_assert_eq!(pending.len(), messages.len() - position - 1);
            prop_assert!(pending.iter().all(|m| **m > cursor));
        }
    }

    #[test]
    fn threshold_needs_something_pending() {
        assert!(!threshold_reached(0, 0));
        assert!(threshold_reached(1, 0));
        assert!(!threshold_reached(4, 5));
        assert!(threshold_reached(5, 5));
        assert!(threshold_reached(6, 5));
    }

    #[test]
    fn units_round_trip() {
        for unit in [ThresholdUnit::Messages, ThresholdUnit::Runs] {
            assert_eq!(ThresholdUnit::parse(unit.as_str()), Some(unit));
        }
        assert_eq!(ThresholdUnit::parse("strides"), None);
    }

    #[test]
    fn kb_names_are_sanitised_with_eight_hex_digits() {
        let suffix = uuid::Uuid::parse_str("0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(
            kb_name("  Support memory - EU ", &suffix),
            "support_memory_eu_01234567"
        );
        assert_eq!(kb_name("!!", &suffix), "memory_01234567");
        assert_eq!(kb_name("a/../b", &suffix), "ab_01234567");
        assert!(is_safe_kb_name(&kb_name("../../etc", &suffix)));
        assert!(!is_safe_kb_name("../etc"));
        assert!(!is_safe_kb_name(".hidden"));
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(
            advisory_lock_key("a:1"),
            advisory_lock_key(&lock_name("a", "1"))
        );
        assert_ne!(advisory_lock_key("a:1"), advisory_lock_key("a:2"));
        assert!(advisory_lock_key("a:1") >= 0);
        assert_eq!(chunk_id("b", "m", 0), chunk_id("b", "m", 0));
        assert_ne!(chunk_id("b", "m", 0), chunk_id("b", "m", 1));
        assert_eq!(dedupe_key("b", "s", "r"), "ingestion:b:s:r");
    }

    fn expected(total: i64, records: i64) -> KbExpectation {
        KbExpectation {
            total_processed: total,
            ingestion_records: records,
            embedding_model: "hashing-lexical".into(),
            dimension: 384,
        }
    }

    fn healthy(chunks: i64, messages: i64) -> KbObservation {
        KbObservation {
            directory_exists: true,
            metadata_chunks: Some(chunks),
            store_chunks: Some(chunks),
            store_messages: Some(messages),
            embedding_model: Some("hashing-lexical".into()),
            dimension: Some(384),
        }
    }

    #[test]
    fn a_matching_kb_has_no_mismatch() {
        assert!(mismatches(&expected(10, 10), &healthy(12, 10)).is_empty());
        assert!(mismatches(&expected(0, 0), &KbObservation::default()).is_empty());
    }

    #[test]
    fn the_seeds_rules_apply_once_something_was_processed() {
        assert_eq!(
            mismatches(&expected(3, 3), &KbObservation::default()),
            vec![Mismatch::DirectoryMissing]
        );
        let mut empty = healthy(0, 0);
        empty.store_messages = Some(0);
        assert_eq!(
            mismatches(&expected(3, 3), &empty),
            vec![Mismatch::MetadataEmpty, Mismatch::StoreEmpty]
        );
    }

    #[test]
    fn drift_is_reported() {
        assert_eq!(
            mismatches(&expected(10, 10), &healthy(12, 9)),
            vec![Mismatch::RecordsDisagree {
                records: 10,
                stored_messages: 9
            }]
        );
        let mut other = healthy(12, 10);
        other.embedding_model = Some("text-embedding-3-small".into());
        other.dimension = Some(1536);
        assert_eq!(mismatches(&expected(10, 10), &other).len(), 2);
    }
}

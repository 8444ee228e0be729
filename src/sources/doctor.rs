//! The doctor capability: how a source's conversations are scanned for what makes a bot
//! forget, leak or overflow, and each finding as every front end shows it, whatever the source.
//! `inspect/doctor.rs` runs the scan of the source that made the database.

use std::fmt::Debug;
use std::sync::Arc;

use serde::Serialize;

use super::conversation::{Extra, SourceFuture, SourceOptions};
use super::opened::ConversationKey;
use crate::memory::tokens::TokenCounter;
use crate::storage::ObjectStore;
use crate::store::{CancelFlag, Store};

/// The root checkpoints each LangGraph thread keeps in the figure of what a prune frees, unless
/// `doctor --keep-last` says otherwise: enough to step back through a thread's last turns.
pub const DEFAULT_KEEP_LAST: usize = 10;

/// What `doctor` checks histories against.
#[derive(Debug, Clone)]
pub struct DoctorSettings {
    pub counter: TokenCounter,
    pub budget: i64,
    /// Dify's object storage, for node memory files, offloaded outputs and uploaded files;
    /// `None` (no storage configured) skips the checks that read files, and the report says so.
    pub storage: Option<ObjectStore>,
    /// The newest root checkpoints a LangGraph thread keeps in the figure of what a prune frees.
    pub keep_last: usize,
    /// The settings only the source's scan takes (the OpenAI Agents SDK's `--limit`), as typed.
    pub options: SourceOptions,
}

/// One problem a source's scan found.
pub trait SourceFinding: Debug + Send + Sync {
    /// What it is, for counts and scripts: "over_budget".
    fn kind(&self) -> &'static str;
    /// The conversation it is about, as `history` takes it; `None` for the whole database.
    fn conversation(&self) -> Option<&str>;
    /// One line for a terminal.
    fn describe(&self) -> String;
    /// The rest of what it says, by name (never its kind or conversation again).
    fn extra(&self) -> Extra;
    /// Where a view goes from it.
    fn leads_to(&self) -> FindingTarget;
}

/// Where a view goes from a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingTarget {
    /// The conversation it is about.
    Conversation(ConversationKey),
    /// The list, searched: several conversations share what the finding is about, and `why`
    /// says so.
    Search { text: String, why: String },
}

/// A source's finding as a value front ends keep, compare and print.
#[derive(Debug, Clone)]
pub struct Found(pub Arc<dyn SourceFinding>);

impl Found {
    pub fn new(finding: impl SourceFinding + 'static) -> Self {
        Found(Arc::new(finding))
    }
}

impl std::ops::Deref for Found {
    type Target = dyn SourceFinding;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

impl PartialEq for Found {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind()
            && self.conversation() == other.conversation()
            && self.extra() == other.extra()
    }
}

impl Eq for Found {}

/// What one scan found.
#[derive(Debug, Clone, Default)]
pub struct SourceScan {
    /// Conversations scanned.
    pub conversations: usize,
    /// Entries read, in the unit the progress counts.
    pub messages: usize,
    pub findings: Vec<Found>,
    /// Conversations the source deleted, left out of the scan as the source leaves them out.
    pub deleted_skipped: i64,
    /// Entries whose run the source archived out of the database: gone on purpose, so not
    /// findings.
    pub archived_runs: i64,
    /// The files the rows point to were not checked: no object storage is configured.
    pub files_not_checked: bool,
}

/// How a source's conversations are scanned.
pub trait ConversationDoctor: Sync {
    /// What the progress counts, singular: "message", "checkpoint".
    fn unit(&self) -> &'static str {
        "message"
    }

    /// How many entries a scan reads, for a progress gauge: a count, so entries written since
    /// may take a scan past it.
    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64>;

    /// Scans every conversation until `stop` is cancelled (then `None`), telling `progress`
    /// how many entries it has read after each.
    fn scan<'a>(
        &'a self,
        store: &'a Store,
        settings: &'a DoctorSettings,
        stop: &'a CancelFlag,
        progress: &'a mut (dyn FnMut(u64) + Send),
    ) -> SourceFuture<'a, Option<SourceScan>>;
}

/// `finding`'s serialized fields without its kind and conversation: its extra.
pub fn extra_of(finding: &impl Serialize, conversation_key: &str) -> Extra {
    let mut extra = match serde_json::to_value(finding) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => Extra::new(),
    };
    extra.remove("kind");
    extra.remove(conversation_key);
    extra
}

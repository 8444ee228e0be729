//! A write waiting for yes or no: one popup for every kind of write the TUI asks about (a chat
//! memory's, a LangGraph thread's, a session's trim in place, a memory base's), with its
//! question and the write yes starts.

use super::chat_memories::Write;
use super::checkpoints::CheckpointWrite;
use super::memory_bases::MemoryBaseWrite;
use crate::memory::budget_view::BudgetSettings;
use crate::sources::stored_trim::Keep;

/// The confirmation popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    pub question: String,
    pub write: PendingWrite,
}

/// The write a confirmation starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingWrite {
    /// A change of a chat memory (a trim, an undo, a delete, an added message).
    ChatMemory(Write),
    /// A trim, its undo or a restore of a LangGraph thread.
    Checkpoint(CheckpointWrite),
    /// A trim of a stored session in place, or its undo.
    StoredTrim(StoredTrimWrite),
    /// A memory base created, deleted or regenerated.
    MemoryBase(MemoryBaseWrite),
}

impl Confirm {
    /// Asks whether to make `change` to a memory base.
    pub fn memory_base(change: MemoryBaseWrite) -> Confirm {
        Confirm {
            question: change.question(),
            write: PendingWrite::MemoryBase(change),
        }
    }
}

/// A write to a session its source trims in place (an OpenAI Agents SDK session).
#[derive(Debug, Clone)]
pub enum StoredTrimWrite {
    /// Keep `keep` of session `id`, counted under `settings`; the older rows are archived,
    /// then deleted.
    Apply {
        id: String,
        keep: Keep,
        settings: BudgetSettings,
    },
    /// Put back the rows of the session's last trim.
    Undo { id: String },
}

impl StoredTrimWrite {
    pub fn id(&self) -> &str {
        match self {
            StoredTrimWrite::Apply { id, .. } | StoredTrimWrite::Undo { id } => id,
        }
    }
}

/// Two writes are the same when they would write the same: the settings only count.
impl PartialEq for StoredTrimWrite {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                StoredTrimWrite::Apply { id, keep, .. },
                StoredTrimWrite::Apply {
                    id: other_id,
                    keep: other_keep,
                    ..
                },
            ) => id == other_id && keep == other_keep,
            (StoredTrimWrite::Undo { id }, StoredTrimWrite::Undo { id: other_id }) => {
                id == other_id
            }
            _ => false,
        }
    }
}

impl Eq for StoredTrimWrite {}

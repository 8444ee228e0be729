//! A write waiting for yes or no: one popup for every kind of write the TUI asks about, with
//! its question and the write yes starts.

use super::chat_memories::Write;
use super::checkpoints::CheckpointWrite;

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
}

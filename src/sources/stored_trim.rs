//! The stored-trim capability: a source whose conversations are stored as a list memscope may
//! shorten in place (the OpenAI Agents SDK's sessions) previews a trim, applies it after
//! archiving what it deletes, and undoes it from that archive. A source without it is trimmed
//! through its own writes (a LangGraph thread's checkpoint, a chat memory's change log) or not
//! at all.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::conversation::{HistoryRequest, SourceFuture, SourceHistory};
use crate::store::Store;

/// What a trim keeps of a conversation: its newest entries, by count or by tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The newest N entries.
    Last(usize),
    /// The newest entries whose tokens add up to at most N.
    MaxTokens(u64),
}

impl Keep {
    /// "the newest 20 items", "the newest items within 2,000 tokens".
    pub fn describe(self, unit: &str) -> String {
        match self {
            Keep::Last(n) => format!("the newest {}", crate::format::count(n as u64, unit)),
            Keep::MaxTokens(n) => format!(
                "the newest {unit}s within {} tokens",
                crate::format::thousands(n)
            ),
        }
    }
}

/// A trim asked of one conversation: which, what to keep, counted under the request's budget.
#[derive(Debug, Clone)]
pub struct TrimRequest {
    pub history: HistoryRequest,
    pub keep: Keep,
}

/// What a trim would do: every stored entry, counted, with the trim's cut as the budget's cut
/// (the entries before it are the ones deleted), and what else the delete takes.
#[derive(Debug, Clone)]
pub struct TrimProposal {
    pub history: SourceHistory,
    /// Stored rows the trim deletes, readable or not.
    pub rows_deleted: usize,
    /// Entries dropped beyond what `keep` alone drops, so that no tool call is parted from its
    /// output.
    pub moved: usize,
    /// What one entry is called: "item".
    pub unit: &'static str,
}

/// A trim written: what it deleted, and the archive its undo puts back.
#[derive(Debug, Clone)]
pub struct AppliedTrim {
    pub proposal: TrimProposal,
    /// `None` when the trim deleted nothing, so nothing was written.
    pub archive: Option<PathBuf>,
}

/// A trim undone: the rows put back, with their ids, from its archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndoneTrim {
    pub id: String,
    pub archive: PathBuf,
    pub rows_restored: usize,
}

/// Trims of the conversations a source stores as a list.
pub trait StoredTrim: Sync {
    /// The trim `request` asks for, changing nothing.
    fn preview<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TrimRequest,
    ) -> SourceFuture<'a, TrimProposal>;

    /// Writes the deleted rows to a new archive in `archives`, then deletes them in one
    /// transaction; a failure removes the archive and changes nothing.
    fn apply<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TrimRequest,
        archives: &'a Path,
    ) -> SourceFuture<'a, AppliedTrim>;

    /// Puts back the rows of the newest trim of conversation `id` in this database whose
    /// archive is in `archives`, with their ids, in one transaction.
    fn undo<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        archives: &'a Path,
    ) -> SourceFuture<'a, UndoneTrim>;
}

/// Where memscope keeps the archives of stored trims, under its data directory.
pub fn archive_dir(data_dir: &Path) -> std::io::Result<PathBuf> {
    std::path::absolute(data_dir.join("trim-archives"))
}

//! `trim preview|apply|undo --conversation ID` on a source that stores its conversations as a
//! list memscope may shorten in place (its stored-trim capability): one document for both
//! front ends, each stored entry in the message shape `history` prints, `kept` saying which
//! the trim keeps.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::InspectError;
use super::document::{DocumentHead, conversations_of};
use super::history::{FedMessage, document};
use crate::sources;
use crate::sources::conversation::{Command, Extra, LeftOutCount};
use crate::sources::stored_trim::{Keep, StoredTrim, TrimProposal, TrimRequest, UndoneTrim};
use crate::store::Store;

/// A trim as `trim preview|apply --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct TrimDocument {
    #[serde(flatten)]
    pub head: DocumentHead,
    pub id: String,
    pub keep: Keep,
    /// The rule that chose the cut, in words.
    pub rule: String,
    /// The counter in words, and the model it counts for.
    pub counter: String,
    pub model: String,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Stored rows the trim deletes, readable or not.
    pub rows_deleted: usize,
    /// Entries dropped beyond what `keep` alone drops, to keep calls with their outputs.
    pub moved: usize,
    pub left_out: Vec<LeftOutCount>,
    pub warnings: Vec<String>,
    /// Every stored entry, oldest first; `kept` is false for those the trim deletes.
    pub messages: Vec<FedMessage>,
    /// Set by apply: the archive undo puts back (`None`: nothing was deleted).
    pub archive: Option<PathBuf>,
    pub extra: Extra,
    /// The lines the text output opens with.
    #[serde(skip)]
    pub header: Vec<String>,
}

/// The open database's stored-trim capability, or why a conversation here is not trimmed in
/// place; `None` when the source trims its conversations another way (or not at all).
pub fn stored_trim_of(store: &Store) -> Option<&'static dyn StoredTrim> {
    sources::trim_of(store.profile().source)
}

fn checked(store: &Store, request: &TrimRequest) -> Result<(), InspectError> {
    let source = conversations_of(store)?;
    request.history.options.check(
        store.profile().source.name(),
        source.settings(),
        Command::History,
    )?;
    Ok(())
}

fn trim_document(head: DocumentHead, keep: Keep, proposal: TrimProposal) -> TrimDocument {
    let moved = proposal.moved;
    let rows_deleted = proposal.rows_deleted;
    let history = document(head, proposal.history);
    TrimDocument {
        id: history.id,
        keep,
        rule: history.rule,
        counter: history.budget.counter,
        model: history.budget.model,
        messages_before: history.messages.len(),
        messages_after: history.kept,
        tokens_before: history.budget.tokens_before,
        tokens_after: history.budget.tokens_after,
        rows_deleted,
        moved,
        left_out: history.left_out,
        warnings: history.warnings,
        messages: history.messages,
        archive: None,
        extra: history.extra,
        header: history.header,
        head: history.head,
    }
}

/// What `request`'s trim would do, changing nothing.
pub async fn preview(
    store: &Store,
    trim: &dyn StoredTrim,
    request: &TrimRequest,
) -> Result<TrimDocument, InspectError> {
    checked(store, request)?;
    let proposal = trim.preview(store, request).await?;
    Ok(trim_document(
        DocumentHead::of(store),
        request.keep,
        proposal,
    ))
}

/// Applies `request`'s trim, archiving what it deletes in `archives`.
pub async fn apply(
    store: &Store,
    trim: &dyn StoredTrim,
    request: &TrimRequest,
    archives: &Path,
) -> Result<TrimDocument, InspectError> {
    checked(store, request)?;
    let applied = trim.apply(store, request, archives).await?;
    let mut document = trim_document(DocumentHead::of(store), request.keep, applied.proposal);
    document.archive = applied.archive;
    Ok(document)
}

/// A trim undone, as `trim undo --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct UndoneDocument {
    #[serde(flatten)]
    pub head: DocumentHead,
    #[serde(flatten)]
    pub undone: UndoneTrim,
}

/// Puts back the newest trim of conversation `id` archived in `archives`.
pub async fn undo(
    store: &Store,
    trim: &dyn StoredTrim,
    id: &str,
    archives: &Path,
) -> Result<UndoneDocument, InspectError> {
    let undone = trim.undo(store, id, archives).await?;
    Ok(UndoneDocument {
        head: DocumentHead::of(store),
        undone,
    })
}

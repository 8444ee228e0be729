//! A trim of a plain session (`SQLiteSession`, `SQLAlchemySession`): its newest items kept, by
//! count or by tokens, never a tool call without its output (`cut.rs`), and the older rows
//! deleted, as the SDK's own compaction deletes a session's oldest rows. What is left is what
//! `get_items` then returns. An `AdvancedSQLiteSession`'s branches share their items, and an
//! `EncryptedSession`'s items cannot be read without its key: both are refused with the reason.

use std::path::Path;

use serde_json::json;

use super::conversation::{history_of, resolve};
use super::cut::cut;
use super::encrypted;
use super::item::StoredItem;
use super::read::{self, Row, Scope, Writer};
use super::trim_write;
use crate::memory::budget_view::BudgetView;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{Extra, LeftOutCount, SourceError, SourceFuture, SourceHistory};
use crate::sources::stored_trim::{AppliedTrim, StoredTrim, TrimProposal, TrimRequest, UndoneTrim};
use crate::store::Store;

/// Trims of the plain sessions of an OpenAI Agents SDK database.
pub struct SessionTrims;

/// A trim planned on the rows as read: the proposal, and the rows it deletes.
pub(super) struct Planned {
    pub proposal: TrimProposal,
    /// The rows the trim deletes, in the session's order.
    pub deleted: Vec<Row>,
}

/// The trim `request` asks of its session, read now.
pub(super) async fn plan(store: &Store, request: &TrimRequest) -> Result<Planned, SourceError> {
    let session = resolve(store, &request.history.id).await?;
    let branches = read::branches(store, &session).await?;
    if !branches.is_empty() {
        return Err(SourceError::usage(format!(
            "session {session} is an AdvancedSQLiteSession with {} branches: they share their \
             items, so deleting one branch's oldest items would change the others; memscope \
             trims plain sessions only",
            branches.len()
        ))
        .with_hint(format!(
            "`memscope thread {session}` draws its branches; the SDK's delete_branch removes one"
        )));
    }
    let writer = Writer::of(store).await?;
    if encrypted::is_encrypted(store, &session, Scope::Session(writer)).await? {
        return Err(SourceError::usage(format!(
            "session {session} is an EncryptedSession: which of its items are tool calls and \
             outputs is sealed, so memscope cannot cut it without parting one from the other; \
             memscope trims plain sessions only"
        )));
    }
    let rows = read::stored_rows(store, &session, writer).await?;
    let mut items = Vec::with_capacity(rows.len());
    let mut positions = Vec::with_capacity(rows.len());
    for (position, (id, text, at)) in rows.iter().enumerate() {
        if let Some(item) = StoredItem::decode(*id, read::instant(at.as_deref()), text.clone()) {
            items.push(item);
            positions.push(position);
        }
    }
    let (history, facts) = history_of(&items, items.len(), &request.history);
    let mut view =
        BudgetView::for_history(history, &request.history.budget, &mut CountCache::default());
    let trim = cut(&items, |start| view.totals.from(start), request.keep);
    view.cut_at(trim.first_kept);
    let rows_deleted = positions
        .get(trim.first_kept)
        .copied()
        .unwrap_or(rows.len());
    let unreadable_deleted = rows_deleted - trim.first_kept;

    let kept = items.len() - trim.first_kept;
    let mut header = vec![format!(
        "session {session} ({}): {} stored; keeping {}",
        writer.class(),
        crate::format::count(rows.len() as u64, "row"),
        request.keep.describe("item"),
    )];
    header.push(format!(
        "deletes {} (the oldest), keeps {}",
        crate::format::count(rows_deleted as u64, "row"),
        crate::format::count(kept as u64, "item"),
    ));
    let mut warnings = Vec::new();
    if trim.moved > 0 {
        warnings.push(format!(
            "{} {} dropped beyond the limit, so that no tool call is kept without its output \
             (or its reasoning)",
            crate::format::count(trim.moved as u64, "item"),
            if trim.moved == 1 { "is" } else { "are" },
        ));
    }
    let left_out = (unreadable_deleted > 0)
        .then(|| LeftOutCount {
            reason: "unreadable".to_owned(),
            description: "rows that are not JSON, which the SDK skips; older than the cut, \
                          they are deleted too"
                .to_owned(),
            short: "unreadable".to_owned(),
            messages: unreadable_deleted,
        })
        .into_iter()
        .collect();
    let deleted = rows[..rows_deleted].to_vec();
    Ok(Planned {
        proposal: TrimProposal {
            history: SourceHistory {
                id: session.clone(),
                title: None,
                header,
                rule: format!(
                    "a trim keeps {} of what get_items returns and deletes the older rows; \
                     a tool call and its output are kept or deleted together",
                    request.keep.describe("item")
                ),
                view,
                messages: facts,
                kept_above_cut: None,
                left_out,
                warnings,
                extra: Extra::from_iter([
                    ("session_class".to_owned(), json!(writer.class())),
                    ("stored_rows".to_owned(), json!(rows.len())),
                ]),
            },
            rows_deleted,
            moved: trim.moved,
            unit: "item",
        },
        deleted,
    })
}

impl StoredTrim for SessionTrims {
    fn preview<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TrimRequest,
    ) -> SourceFuture<'a, TrimProposal> {
        Box::pin(async move { Ok(plan(store, request).await?.proposal) })
    }

    fn apply<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TrimRequest,
        archives: &'a Path,
    ) -> SourceFuture<'a, AppliedTrim> {
        Box::pin(async move {
            store.ensure_writable_in_place()?;
            let planned = plan(store, request).await?;
            let session = &planned.proposal.history.id;
            let archive = trim_write::delete(store, session, &planned.deleted, archives).await?;
            Ok(AppliedTrim {
                proposal: planned.proposal,
                archive,
            })
        })
    }

    fn undo<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        archives: &'a Path,
    ) -> SourceFuture<'a, UndoneTrim> {
        Box::pin(async move {
            store.ensure_writable_in_place()?;
            trim_write::restore(store, id, archives).await
        })
    }
}

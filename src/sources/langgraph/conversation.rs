//! LangGraph's threads through the conversation capability: one conversation per thread,
//! listed by its latest checkpoint, whose history is the `messages` channel at a checkpoint
//! under the trim LangGraph's documentation recommends.

use std::ops::ControlFlow;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde_json::json;

use super::budget::checkpoint_budget;
use super::decode::budget::{RECOMMENDED_TRIM, channel_budget};
use super::decode::message::LangChainMessage;
use super::saver::{LangGraphDb, LangGraphError};
use super::threads::ThreadRow;
use super::{checkpoint_tree, figures, opened};
use crate::memory::tokens::CountCache;
use crate::sources::adapter::Part;
use crate::sources::conversation::{
    Census, Command, ConversationSource, Extra, HistoryRequest, ListColumn, ListQuery,
    ListedConversation, ListedPage, MessageFacts, MessageKind, Refusal, Setting, SourceError,
    SourceFuture, SourceHistory, SourceTree, TreeRequest,
};
use crate::sources::opened::{ConversationKey, OpenConversation};
use crate::sources::stored_figures::StoredFigures;
use crate::store::{CancelFlag, Store, StoreError};

/// The threads of a LangGraph checkpoint database.
pub struct LangGraphThreads;

const SETTINGS: &[Setting] = &[Setting {
    flag: "leaf",
    commands: &[Command::History, Command::Thread],
    help: "the checkpoint to read the thread at (default: its latest)",
}];

const COLUMNS: &[ListColumn] = &[ListColumn {
    header: "checkpoints",
    key: "checkpoints",
    width: 11,
    brief: true,
    searched: false,
}];

impl From<LangGraphError> for SourceError {
    fn from(error: LangGraphError) -> Self {
        let message = error.to_string();
        match error {
            LangGraphError::UnknownThread(_) => SourceError::not_found(message),
            LangGraphError::UnknownCheckpoint { error, .. } if !error.candidates.is_empty() => {
                SourceError::new(Refusal::Ambiguous(error.candidates), message)
            }
            LangGraphError::UnknownCheckpoint { thread, .. } => {
                SourceError::new(Refusal::NotFound, message).with_hint(format!(
                    "`memscope thread {thread}` lists the thread's checkpoints; name one by its \
                     whole id, a unique start or end of it, or the 1f1ea8…43e9d8 form a tree shows"
                ))
            }
            LangGraphError::BadKey(_) => SourceError::new(Refusal::Config, message),
            LangGraphError::Query { .. } => SourceError::new(Refusal::Database, message),
            LangGraphError::Checkpoint(_) => SourceError::failure(message),
        }
    }
}

/// A checkpoint's `ts` as an instant; `None` when it is not one.
fn instant(ts: Option<&str>) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(ts?)
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

fn listed(t: ThreadRow) -> ListedConversation {
    let extra = Extra::from_iter([
        ("checkpoints".to_owned(), json!(t.checkpoints)),
        ("latest_checkpoint".to_owned(), json!(t.latest_checkpoint)),
    ]);
    ListedConversation {
        last_activity: instant(t.last_activity.as_deref()),
        id: t.id,
        title: None,
        messages: t.messages.map(|n| n as u64),
        deleted: false,
        problem: t.error,
        extra,
        scope: None,
    }
}

async fn list(
    store: &Store,
    query: &ListQuery,
    found: &mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
) -> Result<ListedPage, SourceError> {
    let db = LangGraphDb::open(store)?;
    let offset = match query.after.as_deref() {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| {
            SourceError::usage(format!(
                "`{text}` is not a cursor printed by `conversations`"
            ))
        })?,
    };
    let limit = query.limit.max(1) as usize;
    let Some(search) = query.search.as_deref().filter(|s| !s.is_empty()) else {
        let page = db.thread_page(None, offset, limit).await?;
        let rows: Vec<ListedConversation> = page.threads.into_iter().map(listed).collect();
        for row in &rows {
            if found(row).is_break() {
                break;
            }
        }
        return Ok(ListedPage {
            next: page.has_more.then(|| (offset + rows.len()).to_string()),
            conversations: rows,
        });
    };
    // A search reads every thread's latest checkpoint: each match is handed on as it is found.
    let (mut skipped, mut rows, mut more) = (0, Vec::new(), false);
    db.scan_threads(Some(search), &CancelFlag::default(), |row| {
        if skipped < offset {
            skipped += 1;
            return ControlFlow::Continue(());
        }
        if rows.len() == limit {
            more = true;
            return ControlFlow::Break(());
        }
        let row = listed(row);
        let flow = found(&row);
        rows.push(row);
        flow
    })
    .await?;
    Ok(ListedPage {
        next: more.then(|| (offset + rows.len()).to_string()),
        conversations: rows,
    })
}

fn kind(message: &LangChainMessage) -> MessageKind {
    match message.kind.as_str() {
        "tool" | "function" => MessageKind::ToolResult,
        "ai" if !message.tool_calls.is_empty() => MessageKind::ToolCall,
        _ => MessageKind::Message,
    }
}

async fn history(store: &Store, request: &HistoryRequest) -> Result<SourceHistory, SourceError> {
    let thread = &request.id;
    let db = LangGraphDb::open(store)?;
    let checkpoint = match request.options.get("leaf") {
        Some(leaf) => db
            .tree(thread)
            .await?
            .resolve(leaf)
            .map(str::to_owned)
            .map_err(|error| LangGraphError::UnknownCheckpoint {
                thread: thread.clone(),
                error,
            })?,
        None => db.latest_checkpoint(thread).await?.ok_or_else(|| {
            SourceError::not_found(format!(
                "thread {thread} has no checkpoint of its root graph"
            ))
        })?,
    };
    let state = db.state_at(thread, &checkpoint).await?;
    let settings = &request.budget;
    let trimmed = channel_budget(&state.messages, &settings.counter, settings.max_tokens)
        .map_err(|e| SourceError::failure(e.to_string()))?;
    let seen: Vec<&LangChainMessage> = state
        .messages
        .iter()
        .filter(|m| m.role().is_some())
        .collect();
    let ids = seen
        .iter()
        .enumerate()
        .map(|(index, m)| m.id.clone().unwrap_or_else(|| format!("#{index}")))
        .collect();
    let budget = checkpoint_budget(trimmed, ids, settings, &mut CountCache::default());
    let messages = seen
        .iter()
        .map(|m| MessageFacts {
            kind: kind(m),
            at: None,
            raw: request.raw(m),
            shown: None,
            extra: request.details(
                || json!({"type": m.kind, "name": m.name, "tool_call_id": m.tool_call_id}),
            ),
        })
        .collect();
    let mut warnings: Vec<String> = state
        .unread
        .iter()
        .map(|u| format!("message {}: {}", u.index, u.reason))
        .collect();
    warnings.extend(state.warnings);
    warnings.extend(budget.warnings);
    Ok(SourceHistory {
        id: thread.clone(),
        title: None,
        header: vec![format!(
            "thread {thread} at checkpoint {} ({})",
            state.checkpoint_id, state.ts
        )],
        rule: budget.rule,
        view: budget.view,
        messages,
        kept_above_cut: budget.kept_above_cut,
        left_out: Vec::new(),
        warnings,
        extra: Extra::from_iter([
            ("checkpoint_id".to_owned(), json!(state.checkpoint_id)),
            (
                "checkpoint_at".to_owned(),
                json!(
                    instant(Some(&state.ts))
                        .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
                ),
            ),
            ("trim".to_owned(), json!(RECOMMENDED_TRIM)),
        ]),
    })
}

/// The conversations and the entries they hold.
const CENSUS: &str = "SELECT COUNT(DISTINCT thread_id), COUNT(*) FROM checkpoints";

impl ConversationSource for LangGraphThreads {
    fn noun(&self) -> &'static str {
        "thread"
    }

    fn requires(&self) -> &'static [Part] {
        &[Part::Checkpoints]
    }

    fn settings(&self) -> &'static [Setting] {
        SETTINGS
    }

    fn list_columns(&self) -> &'static [ListColumn] {
        COLUMNS
    }

    fn list_scans(&self, _: &Store, query: &ListQuery) -> bool {
        query.search.as_deref().is_some_and(|s| !s.is_empty())
    }

    fn list<'a>(
        &'a self,
        store: &'a Store,
        query: &'a ListQuery,
        found: &'a mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
    ) -> SourceFuture<'a, ListedPage> {
        Box::pin(list(store, query, found))
    }

    fn history<'a>(
        &'a self,
        store: &'a Store,
        request: &'a HistoryRequest,
    ) -> SourceFuture<'a, SourceHistory> {
        Box::pin(history(store, request))
    }

    fn tree<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TreeRequest,
    ) -> SourceFuture<'a, SourceTree> {
        Box::pin(checkpoint_tree::tree(store, request))
    }

    fn open<'a>(
        &'a self,
        store: &'a Store,
        key: &'a ConversationKey,
    ) -> Option<SourceFuture<'a, OpenConversation>> {
        Some(Box::pin(opened::open(store, key)))
    }

    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>> {
        Box::pin(Census::read(store, CENSUS, "checkpoint"))
    }

    fn stored_figures<'a>(
        &'a self,
        store: &'a Store,
    ) -> Option<BoxFuture<'a, Result<StoredFigures, StoreError>>> {
        Some(Box::pin(figures::stored_figures(store)))
    }

    /// A thread is named by its whole id, and has checkpoints.
    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String> {
        Box::pin(async move {
            LangGraphDb::open(store)?.tree(given).await?;
            Ok(given.to_owned())
        })
    }
}

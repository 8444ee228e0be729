//! The OpenAI Agents SDK's sessions through the conversation capability: one conversation per
//! session, whose history is exactly what `Runner.run(agent, input, session=…)` sends the model
//! of it: `get_items` under `SessionSettings(limit)` (`read.rs`), then the Runner's preparation
//! (`prepare.rs`). The SDK keeps no token window of its own: the budget's cut is memscope's
//! panel, as for every source.

use std::ops::ControlFlow;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::encrypted;
use super::item::{self, StoredItem, prompt_of};
use super::list;
use super::prepare::{Reason, prepare};
use super::read::{self, Scope, Writer};
use super::tree;
use crate::memory::budget_view::BudgetView;
use crate::memory::history::{History, HistoryMessage, Side};
use crate::memory::model::Role;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{
    Census, Command, ConversationSource, Extra, HistoryRequest, LeftOutCount, ListColumn,
    ListQuery, ListedConversation, ListedPage, MessageFacts, Setting, SourceError, SourceFuture,
    SourceHistory, SourceOptions, SourceTree, TreeRequest,
};
use crate::sources::opened::{ConversationKey, Views};
use crate::store::{Store, StoreError};

/// The sessions of an OpenAI Agents SDK database.
pub struct AgentSessions;

const SETTINGS: &[Setting] = &[
    Setting {
        flag: "limit",
        commands: &[Command::History, Command::Doctor],
        help: "SessionSettings(limit=N): the newest N items the Runner reads (default: all)",
    },
    Setting {
        flag: "branch",
        commands: &[Command::History, Command::Thread],
        help: "an AdvancedSQLiteSession branch (default: main)",
    },
    Setting {
        flag: "ttl",
        commands: &[Command::History],
        help: "EncryptedSession's ttl in seconds: older items are skipped (default: none skipped)",
    },
];

/// The session's rows as the SDK reads them: which branch, if the session keeps branches.
async fn scope<'a>(
    store: &Store,
    session: &str,
    branch: Option<&'a str>,
) -> Result<(Scope<'a>, &'static str), SourceError> {
    let branches = read::branches(store, session).await?;
    if branches.is_empty() {
        if branch.is_some() {
            return Err(SourceError::usage(format!(
                "session {session} keeps no branches (only AdvancedSQLiteSession's do): \
                 leave out --branch"
            )));
        }
        let writer = Writer::of(store).await?;
        return Ok((Scope::Session(writer), writer.class()));
    }
    let wanted = branch.unwrap_or("main");
    if !branches.iter().any(|b| b.branch_id == wanted) {
        let names: Vec<&str> = branches.iter().map(|b| b.branch_id.as_str()).collect();
        return Err(SourceError::not_found(format!(
            "session {session} has no branch {wanted}; its branches: {}",
            names.join(", ")
        ))
        .with_hint(format!("`memscope thread {session}` draws its branches")));
    }
    let wanted: &'a str = match branch {
        Some(branch) => branch,
        None => "main",
    };
    Ok((Scope::Branch(wanted), "AdvancedSQLiteSession"))
}

/// `--limit` as the Runner takes it: a count of items, 0 or more.
fn limit_of(request: &HistoryRequest) -> Result<Option<i64>, SourceError> {
    match request.options.number::<i64>("limit")? {
        Some(limit) if limit < 0 => Err(SourceError::usage(format!(
            "--limit takes a number of items, 0 or more, not {limit}"
        ))),
        limit => Ok(limit),
    }
}

async fn history(store: &Store, request: &HistoryRequest) -> Result<SourceHistory, SourceError> {
    let session = &request.id;
    resolve(store, session).await?;
    let limit = limit_of(request)?;
    let branch = request.options.get("branch");
    let (scope, class) = scope(store, session, branch).await?;
    let (read, sealed) = if encrypted::is_encrypted(store, session, scope).await? {
        let ttl = request.options.number::<i64>("ttl")?;
        let opened = encrypted::get_items(store, session, scope, limit, ttl).await?;
        let skipped = [
            (Reason::NotEncrypted, opened.plaintext),
            (Reason::Unauthenticated, opened.unauthenticated),
            (Reason::Expired, opened.expired),
        ];
        (opened.read, Some(skipped))
    } else if request.options.is_set("ttl") {
        return Err(SourceError::usage(format!(
            "session {session} is not encrypted: --ttl applies to EncryptedSession's items only"
        )));
    } else {
        (read::get_items(store, session, scope, limit).await?, None)
    };
    let stored_items = read.items.len();
    let class = match sealed {
        Some(_) => format!("EncryptedSession over {class}"),
        None => class.to_owned(),
    };
    let prepared = prepare(read.items, limit.is_some());

    let (history, facts) = history_of(&prepared.items, stored_items, request);
    let view = BudgetView::for_history(history, &request.budget, &mut CountCache::default());

    let mut left_out: Vec<(Reason, usize)> = prepared.left_out.into_iter().collect();
    left_out.push((Reason::PastLimit, read.past_limit));
    left_out.push((Reason::Unreadable, read.unreadable));
    left_out.extend(sealed.into_iter().flatten());
    left_out.retain(|(_, count)| *count > 0);
    left_out.sort();
    let mut warnings = Vec::new();
    if let Some((_, calls)) = left_out
        .iter()
        .find(|(r, _)| *r == Reason::CallWithoutOutput)
    {
        warnings.push(format!(
            "{} stored without {} output: a run stopped before its tool answered; the SDK \
             drops {} silently",
            crate::format::count(*calls as u64, "tool call"),
            if *calls == 1 { "its" } else { "their" },
            if *calls == 1 { "it" } else { "them" },
        ));
    }
    warnings.extend(view.warnings());

    let window = match limit {
        Some(limit) => format!("the newest {}", crate::format::count(limit, "item")),
        None => "every item".to_owned(),
    };
    let mut header = vec![format!(
        "session {session} ({class}{}): {} stored, {window} read",
        match scope {
            Scope::Branch(branch) => format!(", branch {branch}"),
            Scope::Session(_) => String::new(),
        },
        crate::format::count(read.stored as u64, "row"),
    )];
    if view.history.messages.is_empty() {
        header.push("nothing to send: the model is handed only the new turn's input".to_owned());
    }
    Ok(SourceHistory {
        id: session.clone(),
        title: None,
        header,
        rule: format!(
            "what the Runner sends the model: get_items({}) then the SDK's preparation \
             (metadata stripped, unanswered calls dropped, duplicates resolved); the SDK keeps \
             no token window, so the cut is memscope's budget",
            limit.map_or_else(|| "no limit".to_owned(), |l| format!("limit={l}"))
        ),
        view,
        messages: facts,
        kept_above_cut: None,
        left_out: left_out
            .into_iter()
            .map(|(reason, messages)| LeftOutCount {
                reason: reason.key().to_owned(),
                description: reason.description().to_owned(),
                short: reason.key().replace('_', " "),
                messages,
            })
            .collect(),
        warnings,
        extra: Extra::from_iter([
            ("session_class".to_owned(), json!(class)),
            ("limit".to_owned(), json!(limit)),
            (
                "branch".to_owned(),
                json!(match scope {
                    Scope::Branch(branch) => Some(branch),
                    Scope::Session(_) => None,
                }),
            ),
            ("stored_rows".to_owned(), json!(read.stored)),
            ("encrypted".to_owned(), json!(sealed.is_some())),
        ]),
    })
}

/// `items` as the history the budget counts, oldest first, and what each adds to its message;
/// `rows_given` is how many items the read returned.
pub(super) fn history_of(
    items: &[StoredItem],
    rows_given: usize,
    request: &HistoryRequest,
) -> (History, Vec<MessageFacts>) {
    let mut messages = Vec::with_capacity(items.len());
    let mut facts = Vec::with_capacity(items.len());
    for stored in items {
        let (kind, message) = prompt_of(&stored.value);
        let shown = item::shown(kind, &message);
        messages.push(HistoryMessage {
            side: match message.role {
                Role::User => Side::Query,
                _ => Side::Answer,
            },
            message,
            source_id: stored.row.to_string(),
        });
        facts.push(MessageFacts {
            kind,
            at: stored.at,
            raw: if request.details {
                stored.sent()
            } else {
                request.raw(&())
            },
            shown,
            extra: request.details(|| item::details(stored)),
        });
    }
    let ids: Vec<String> = messages.iter().map(|m| m.source_id.clone()).collect();
    let history = History {
        window: ids.len(),
        rows_given,
        thread: ids,
        popped: None,
        paused: Vec::new(),
        messages,
    };
    (history, facts)
}

/// A session is named by its whole id.
pub(super) async fn resolve(store: &Store, given: &str) -> Result<String, SourceError> {
    if read::session_exists(store, given).await? {
        Ok(given.to_owned())
    } else {
        Err(SourceError::not_found(format!(
            "no session {given} in this database"
        )))
    }
}

const CENSUS: &str =
    "SELECT (SELECT COUNT(*) FROM agent_sessions), (SELECT COUNT(*) FROM agent_messages)";

impl ConversationSource for AgentSessions {
    fn noun(&self) -> &'static str {
        "session"
    }

    fn key_options(&self, key: &ConversationKey) -> SourceOptions {
        SourceOptions::default().with("branch", key.view.as_deref())
    }

    fn settings(&self) -> &'static [Setting] {
        SETTINGS
    }

    fn list_columns(&self) -> &'static [ListColumn] {
        list::COLUMNS
    }

    fn list<'a>(
        &'a self,
        store: &'a Store,
        query: &'a ListQuery,
        found: &'a mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
    ) -> SourceFuture<'a, ListedPage> {
        Box::pin(list::list(store, query, found))
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
        Box::pin(async move {
            resolve(store, &request.id).await?;
            tree::tree(store, request).await
        })
    }

    /// An advanced session's branches, each what the Runner sends on that branch.
    fn views<'a>(&'a self, store: &'a Store, id: &'a str) -> SourceFuture<'a, Option<Views>> {
        Box::pin(async move {
            let branches = read::branches(store, id).await?;
            Ok((!branches.is_empty()).then(|| Views {
                noun: "branch",
                setting: "branch",
                names: branches.into_iter().map(|b| b.branch_id).collect(),
                default: "main".to_owned(),
            }))
        })
    }

    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>> {
        Box::pin(Census::read(store, CENSUS, "item"))
    }

    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String> {
        Box::pin(resolve(store, given))
    }
}

//! What `doctor` finds in one session, computed from what was read of it (pure, so that
//! whichever scan reads the sessions can ask it): rows the SDK skips because they are not
//! JSON; tool calls stored without their output (a run that stopped: the SDK drops them
//! silently); under a `--limit`, a window that starts between a call and its output (the SDK
//! drops the output, and the model never sees what the tool said); a history over the model's
//! context window; an advanced session's structure rows pointing at items that are gone.

use serde_json::{Value as Json, json};

use super::item::{StoredItem, prompt_of};
use super::prepare::{Reason, prepare};
use super::read::{self, Scope, Writer};
use crate::memory::context_windows::ContextWindow;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{Extra, SourceError, SourceFuture};
use crate::sources::doctor::{
    ConversationDoctor, DoctorSettings, FindingTarget, Found, SourceFinding, SourceScan,
};
use crate::sources::opened::ConversationKey;
use crate::store::pool::on_pool;
use crate::store::{CancelFlag, Store};

/// One session as a scan read it.
#[derive(Debug, Clone)]
pub struct SessionScan {
    pub session: String,
    /// Every item `get_items()` returns (on an advanced session, of one branch).
    pub items: Vec<StoredItem>,
    /// Rows that are not JSON.
    pub unreadable: usize,
    /// Structure rows whose `agent_messages` row is gone.
    pub missing_items: usize,
    /// Tokens of what is sent without a limit, and the model's context window, when counted.
    pub sent_tokens: Option<(u64, u64)>,
}

/// Reads `session` for a scan: its items as `get_items()` returns them (each branch of an
/// advanced session apart, the branch in the scan's name as `session@branch`); the tokens are
/// left for the caller to count.
pub async fn scan(store: &Store, session: &str) -> Result<Vec<SessionScan>, SourceError> {
    let branches = read::branches(store, session).await?;
    if branches.is_empty() {
        let writer = Writer::of(store).await?;
        let read = read::get_items(store, session, Scope::Session(writer), None).await?;
        return Ok(vec![SessionScan {
            session: session.to_owned(),
            items: read.items,
            unreadable: read.unreadable,
            missing_items: 0,
            sent_tokens: None,
        }]);
    }
    let structure = read::structure(store, session).await?;
    let mut scans = Vec::with_capacity(branches.len());
    for branch in &branches {
        let id = branch.branch_id.as_str();
        let read = read::get_items(store, session, Scope::Branch(id), None).await?;
        scans.push(SessionScan {
            session: format!("{session}@{id}"),
            items: read.items,
            unreadable: read.unreadable,
            missing_items: structure
                .iter()
                .filter(|row| row.branch_id == id && !row.present)
                .count(),
            sent_tokens: None,
        });
    }
    Ok(scans)
}

/// A finding's kind, for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindingKind {
    UnreadableRows,
    CallWithoutOutput,
    WindowCutsCall,
    OverContextWindow,
    MissingItems,
}

impl FindingKind {
    pub fn key(self) -> &'static str {
        match self {
            FindingKind::UnreadableRows => "unreadable_rows",
            FindingKind::CallWithoutOutput => "call_without_output",
            FindingKind::WindowCutsCall => "window_cuts_call",
            FindingKind::OverContextWindow => "over_context_window",
            FindingKind::MissingItems => "missing_items",
        }
    }
}

/// One thing found in one session: what, in words, and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFinding {
    pub kind: FindingKind,
    pub session: String,
    pub message: String,
    pub extra: Json,
}

/// The call ids of the calls `prepare` drops as unanswered in `items`.
fn unanswered_calls(items: &[StoredItem]) -> Vec<String> {
    let dropped: std::collections::HashSet<i64> = prepare(items.to_vec(), false)
        .dropped
        .into_iter()
        .filter(|(_, reason)| *reason == Reason::CallWithoutOutput)
        .map(|(row, _)| row)
        .collect();
    items
        .iter()
        .filter(|item| dropped.contains(&item.row))
        .map(|item| item.call_id().unwrap_or("(no call id)").to_owned())
        .collect()
}

/// What `doctor` finds in `scan`; `limit` is the `SessionSettings(limit)` the app runs with.
pub fn findings(scan: &SessionScan, limit: Option<usize>) -> Vec<SessionFinding> {
    let finding = |kind, message: String, extra: Json| SessionFinding {
        kind,
        session: scan.session.clone(),
        message,
        extra,
    };
    let mut found = Vec::new();
    if scan.unreadable > 0 {
        found.push(finding(
            FindingKind::UnreadableRows,
            format!(
                "{} not JSON: get_items skips {} without a word",
                crate::format::count(scan.unreadable as u64, "row"),
                if scan.unreadable == 1 { "it" } else { "them" }
            ),
            json!({"rows": scan.unreadable}),
        ));
    }
    let calls = unanswered_calls(&scan.items);
    if !calls.is_empty() {
        found.push(finding(
            FindingKind::CallWithoutOutput,
            format!(
                "{} stored without output ({}): a run stopped before its tool answered; the \
                 Runner drops {} silently",
                crate::format::count(calls.len() as u64, "tool call"),
                calls.join(", "),
                if calls.len() == 1 { "it" } else { "them" }
            ),
            json!({"call_ids": calls}),
        ));
    }
    if let Some(limit) = limit.filter(|limit| *limit < scan.items.len()) {
        let window = scan.items[scan.items.len() - limit..].to_vec();
        let cut = prepare(window, true)
            .left_out
            .get(&Reason::OutputWithoutCall)
            .copied()
            .unwrap_or(0);
        if cut > 0 {
            found.push(finding(
                FindingKind::WindowCutsCall,
                format!(
                    "the newest {} start after a tool call whose output is inside them: the \
                     Runner drops {}, and the model never sees what the tool said",
                    crate::format::count(limit as u64, "item"),
                    crate::format::count(cut as u64, "output")
                ),
                json!({"limit": limit, "outputs": cut}),
            ));
        }
    }
    if let Some((tokens, window)) = scan.sent_tokens.filter(|(tokens, window)| tokens > window) {
        found.push(finding(
            FindingKind::OverContextWindow,
            format!(
                "the whole session is {} tokens, over the model's context window of {}: the SDK \
                 keeps no token window, so every run sends it all",
                crate::format::thousands(tokens),
                crate::format::thousands(window)
            ),
            json!({"tokens": tokens, "context_window": window}),
        ));
    }
    if scan.missing_items > 0 {
        found.push(finding(
            FindingKind::MissingItems,
            format!(
                "{} point at items that are gone: the branch reads without them",
                crate::format::count(scan.missing_items as u64, "structure row")
            ),
            json!({"rows": scan.missing_items}),
        ));
    }
    found
}

/// The sessions a scan reads, and the rows they hold for its gauge. Sessions are scanned as
/// the app runs them, by default without a limit: a window that cuts a call from its output
/// needs the app's `SessionSettings(limit)` (`--limit`), which the database does not record.
const SESSIONS: &str = "SELECT session_id FROM agent_sessions ORDER BY session_id";
const ITEMS: &str = "SELECT COUNT(*) FROM agent_messages";

impl SourceFinding for SessionFinding {
    fn kind(&self) -> &'static str {
        self.kind.key()
    }

    fn conversation(&self) -> Option<&str> {
        Some(session_of(&self.session))
    }

    fn describe(&self) -> String {
        format!("session {}: {}", self.session, self.message)
    }

    fn extra(&self) -> Extra {
        let mut extra = match &self.extra {
            Json::Object(fields) => fields.clone(),
            _ => Extra::new(),
        };
        if let Some((_, branch)) = self.session.split_once('@') {
            extra.insert("branch".to_owned(), Json::from(branch));
        }
        extra
    }

    fn leads_to(&self) -> FindingTarget {
        FindingTarget::Conversation(ConversationKey::new(session_of(&self.session)))
    }
}

/// The session a scan's name (`session@branch` for a branch) is of.
fn session_of(scanned: &str) -> &str {
    scanned
        .split_once('@')
        .map_or(scanned, |(session, _)| session)
}

/// Scans every session of an OpenAI Agents SDK database.
pub struct AgentSessionsDoctor;

impl ConversationDoctor for AgentSessionsDoctor {
    fn unit(&self) -> &'static str {
        "item"
    }

    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64> {
        Box::pin(async move {
            let rows: i64 = on_pool!(store.pool, ITEMS, |pool, sql| sqlx::query_scalar(sql)
                .fetch_one(pool)
                .await)
            .map_err(|e| store.query_failed(e))?;
            Ok(rows.max(0) as u64)
        })
    }

    fn scan<'a>(
        &'a self,
        store: &'a Store,
        settings: &'a DoctorSettings,
        stop: &'a CancelFlag,
        progress: &'a mut (dyn FnMut(u64) + Send),
    ) -> SourceFuture<'a, Option<SourceScan>> {
        Box::pin(async move {
            let sessions: Vec<String> =
                on_pool!(store.pool, SESSIONS, |pool, sql| sqlx::query_scalar(sql)
                    .fetch_all(pool)
                    .await)
                .map_err(|e| store.query_failed(e))?;
            let window = settings
                .counter
                .model()
                .and_then(|model| ContextWindow::of(model, &Default::default()).tokens());
            let limit = settings.options.number::<usize>("limit")?;
            let mut cache = CountCache::new(4_096);
            let mut report = SourceScan {
                conversations: sessions.len(),
                ..SourceScan::default()
            };
            for session in &sessions {
                if stop.is_cancelled() {
                    return Ok(None);
                }
                for mut scanned in scan(store, session).await? {
                    report.messages += scanned.items.len() + scanned.unreadable;
                    let sent = prepare(scanned.items.clone(), false).items;
                    let prompt: Vec<_> = sent.iter().map(|item| prompt_of(&item.value).1).collect();
                    let tokens = cache.count_list(&settings.counter, &prompt);
                    scanned.sent_tokens = window.map(|window| (tokens, window));
                    report
                        .findings
                        .extend(findings(&scanned, limit).into_iter().map(Found::new));
                }
                progress(report.messages as u64);
            }
            Ok(Some(report))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{FindingKind, SessionScan, findings};
    use crate::sources::openai_agents::item::StoredItem;

    fn scan(values: &[serde_json::Value]) -> SessionScan {
        SessionScan {
            session: "s".to_owned(),
            items: values
                .iter()
                .enumerate()
                .map(|(row, v)| StoredItem::decode(row as i64 + 1, None, v.to_string()).unwrap())
                .collect(),
            unreadable: 0,
            missing_items: 0,
            sent_tokens: None,
        }
    }

    fn kinds(scan: &SessionScan, limit: Option<usize>) -> Vec<FindingKind> {
        findings(scan, limit).iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_healthy_session_has_nothing_to_report() {
        let session = scan(&[json!({"role": "user", "content": "hi"})]);
        assert!(findings(&session, Some(1)).is_empty());
    }

    #[test]
    fn an_unanswered_call_and_a_window_inside_a_call_are_reported() {
        let session = scan(&[
            json!({"role": "user", "content": "a"}),
            json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": "1"}),
            json!({"role": "assistant", "content": "b"}),
            json!({"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}),
        ]);
        assert_eq!(kinds(&session, None), [FindingKind::CallWithoutOutput]);
        assert_eq!(
            findings(&session, None)[0].extra,
            json!({"call_ids": ["c2"]})
        );
        assert_eq!(
            kinds(&session, Some(3)),
            [FindingKind::CallWithoutOutput, FindingKind::WindowCutsCall]
        );
        assert_eq!(kinds(&session, Some(4)), [FindingKind::CallWithoutOutput]);
    }

    #[test]
    fn unreadable_rows_missing_items_and_an_overfull_session_are_reported() {
        let mut session = scan(&[json!({"role": "user", "content": "hi"})]);
        session.unreadable = 2;
        session.missing_items = 1;
        session.sent_tokens = Some((200_000, 128_000));
        assert_eq!(
            kinds(&session, None),
            [
                FindingKind::UnreadableRows,
                FindingKind::OverContextWindow,
                FindingKind::MissingItems
            ]
        );
    }
}

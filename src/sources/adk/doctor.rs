//! What `doctor` finds in one ADK session, computed from what was read of it (pure, so that the
//! scan and the tests ask the same function): events ADK cannot load (it fails on the whole
//! session), tool calls stored without a response (a run that stopped: ADK drops them from the
//! contents), contents over the model's context window (ADK keeps no token window), the old
//! schema's pickled actions (not loaded), and state keys that grow with every change.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value as Json, json};

use super::contents::apply_rewinds;
use super::event::Event;
use super::read::{self, Key};
use super::session::{agent_of, contents_for, prompt_of};
use crate::memory::context_windows::ContextWindow;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{Extra, SourceError, SourceFuture};
use crate::sources::doctor::{
    ConversationDoctor, DoctorSettings, FindingTarget, Found, SourceFinding, SourceScan,
};
use crate::sources::opened::ConversationKey;
use crate::store::pool::on_pool;
use crate::store::{CancelFlag, Store};

/// A state key changed at least this often, growing every time, is reported.
pub const GROWTH_CHANGES: usize = 4;

/// One session as a scan read it.
#[derive(Debug, Clone, Default)]
pub struct SessionScan {
    pub session: String,
    /// The app and user the session is under, as the list names them (`app/user`).
    pub scope: Option<String>,
    pub events: Vec<Event>,
    pub unreadable: Vec<String>,
    pub pickled: usize,
    /// Tokens of the contents the continuing agent is sent, and the model's window, if counted.
    pub sent_tokens: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindingKind {
    UnreadableEvents,
    CallWithoutResponse,
    OverContextWindow,
    PickledActions,
    GrowingState,
}

impl FindingKind {
    pub fn key(self) -> &'static str {
        match self {
            FindingKind::UnreadableEvents => "unreadable_events",
            FindingKind::CallWithoutResponse => "call_without_response",
            FindingKind::OverContextWindow => "over_context_window",
            FindingKind::PickledActions => "pickled_actions",
            FindingKind::GrowingState => "growing_state",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionFinding {
    pub kind: FindingKind,
    pub session: String,
    pub scope: Option<String>,
    pub message: String,
    pub extra: Json,
}

/// Calls with an id no response in the live session answers, and not pending long-running ones.
pub fn unanswered_calls(events: &[Event]) -> Vec<String> {
    let live = apply_rewinds(events, &mut Default::default());
    let answered: HashSet<&str> = live
        .iter()
        .flat_map(|e| e.responses())
        .filter_map(|(id, _)| id)
        .collect();
    let pending: HashSet<&str> = live
        .iter()
        .flat_map(|e| e.long_running_tool_ids.iter().map(String::as_str))
        .collect();
    live.iter()
        .flat_map(|e| e.calls())
        .filter_map(|(id, _)| id.filter(|i| !i.is_empty()))
        .filter(|id| !answered.contains(id) && !pending.contains(id))
        .map(str::to_owned)
        .collect()
}

/// State keys whose value grew at each of at least [`GROWTH_CHANGES`] changes: `(key, changes,
/// first size, last size)`, sizes in bytes of JSON.
pub fn growing_state(events: &[Event]) -> Vec<(String, usize, usize, usize)> {
    let mut sizes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for event in events {
        if let Some(delta) = event.state_delta() {
            for (key, value) in delta {
                sizes.entry(key).or_default().push(value.to_string().len());
            }
        }
    }
    sizes
        .into_iter()
        .filter(|(key, s)| {
            !key.starts_with("temp:")
                && s.len() >= GROWTH_CHANGES
                && s.windows(2).all(|w| w[1] > w[0])
        })
        .map(|(key, s)| (key.to_owned(), s.len(), s[0], s[s.len() - 1]))
        .collect()
}

pub fn findings(scan: &SessionScan) -> Vec<SessionFinding> {
    let finding = |kind, message: String, mut extra: Json| SessionFinding {
        kind,
        session: scan.session.clone(),
        scope: {
            if let (Some((app, user)), Some(fields)) = (
                scan.scope.as_deref().and_then(|s| s.split_once('/')),
                extra.as_object_mut(),
            ) {
                fields.insert("app".to_owned(), json!(app));
                fields.insert("user".to_owned(), json!(user));
            }
            scan.scope.clone()
        },
        message,
        extra,
    };
    let mut found = Vec::new();
    if !scan.unreadable.is_empty() {
        found.push(finding(
            FindingKind::UnreadableEvents,
            format!(
                "{} not JSON ADK can load: ADK fails to load the whole session",
                crate::format::count(scan.unreadable.len() as u64, "event")
            ),
            json!({ "events": scan.unreadable }),
        ));
    }
    let calls = unanswered_calls(&scan.events);
    if !calls.is_empty() {
        found.push(finding(
            FindingKind::CallWithoutResponse,
            format!(
                "{} stored without a response ({}): a run stopped before its tool answered; ADK \
                 drops {} from every agent's contents",
                crate::format::count(calls.len() as u64, "tool call"),
                calls.join(", "),
                if calls.len() == 1 { "it" } else { "them" }
            ),
            json!({ "call_ids": calls }),
        ));
    }
    if let Some((tokens, window)) = scan.sent_tokens.filter(|(t, w)| t > w) {
        found.push(finding(
            FindingKind::OverContextWindow,
            format!(
                "the contents of the next turn are {} tokens, over the model's context window of \
                 {}: ADK keeps no token window, only compaction bounds them",
                crate::format::thousands(tokens),
                crate::format::thousands(window)
            ),
            json!({ "tokens": tokens, "context_window": window }),
        ));
    }
    if scan.pickled > 0 {
        found.push(finding(
            FindingKind::PickledActions,
            format!(
                "old schema: the actions of {} are Python pickles memscope never loads \
                 (ADK's migration to schema 1 turns them into JSON)",
                crate::format::count(scan.pickled as u64, "event")
            ),
            json!({ "events": scan.pickled }),
        ));
    }
    for (key, changes, first, last) in growing_state(&scan.events) {
        found.push(finding(
            FindingKind::GrowingState,
            format!(
                "state key {key} grew at each of its {changes} changes, from {first} to {last} \
                 bytes: nothing bounds it"
            ),
            json!({ "key": key, "changes": changes, "first_bytes": first, "last_bytes": last }),
        ));
    }
    found
}

impl SourceFinding for SessionFinding {
    fn kind(&self) -> &'static str {
        self.kind.key()
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.session)
    }

    fn describe(&self) -> String {
        format!("session {}: {}", self.session, self.message)
    }

    fn extra(&self) -> Extra {
        match &self.extra {
            Json::Object(fields) => fields.clone(),
            _ => Extra::new(),
        }
    }

    fn leads_to(&self) -> FindingTarget {
        FindingTarget::Conversation(ConversationKey::scoped(
            self.session.clone(),
            self.scope.clone(),
        ))
    }
}

const SESSIONS: &str = "SELECT app_name, user_id, id FROM sessions ORDER BY app_name, user_id, id";
const EVENTS: &str = "SELECT COUNT(*) FROM events";

/// Scans every session of an ADK session database.
pub struct AdkDoctor;

impl ConversationDoctor for AdkDoctor {
    fn unit(&self) -> &'static str {
        "event"
    }

    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64> {
        Box::pin(async move {
            let rows: i64 = on_pool!(store.pool, EVENTS, |pool, sql| sqlx::query_scalar(sql)
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
            let keys: Vec<Key> = on_pool!(store.pool, SESSIONS, |pool, sql| sqlx::query_as(sql)
                .fetch_all(pool)
                .await)
            .map_err(|e| store.query_failed(e))?;
            let window = settings
                .counter
                .model()
                .and_then(|model| ContextWindow::of(model, &Default::default()).tokens());
            let mut cache = CountCache::new(4_096);
            let mut report = SourceScan {
                conversations: keys.len(),
                ..SourceScan::default()
            };
            for key in &keys {
                if stop.is_cancelled() {
                    return Ok(None);
                }
                let loaded = read::events(store, key).await?;
                report.messages += loaded.events.len() + loaded.unreadable.len();
                let agent = agent_of(&loaded.events, None)
                    .map_err(|e| SourceError::failure(e.to_string()))?
                    .unwrap_or_default();
                let sent = contents_for(&loaded.events, &agent).sent;
                let prompt: Vec<_> = sent.iter().map(|s| prompt_of(s).1).collect();
                let tokens = cache.count_list(&settings.counter, &prompt);
                let scanned = SessionScan {
                    session: key.id.clone(),
                    scope: Some(format!("{}/{}", key.app_name, key.user_id)),
                    events: loaded.events,
                    unreadable: loaded.unreadable,
                    pickled: loaded.pickled,
                    sent_tokens: window.map(|window| (tokens, window)),
                };
                report
                    .findings
                    .extend(findings(&scanned).into_iter().map(Found::new));
                progress(report.messages as u64);
            }
            Ok(Some(report))
        })
    }
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;

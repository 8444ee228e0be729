//! What a Langflow Agent's chat memory feeds the model: Langflow 1.13's
//! `aget_agent_chat_history` (lfx `components/models_and_agents/memory.py`, called from the
//! Agent's `get_memory_data`) over `aget_messages` (`langflow/memory.py`), as a pure function of
//! a session's stored messages, plus what it left out and why.
//!
//! Langflow's query, outside a running graph: `error = false`, `session_id`, `context_id` when
//! it is not empty, `flow_id` and the owner `user_id`, newest first by `timestamp`, `LIMIT
//! n_messages` (10,000 when the Agent's `n_messages` is not set), then reversed to oldest first.
//! `n_messages == 0` is memory switched off; without a flow or an owner the read fails closed.
//! Langflow orders by `timestamp` alone, and both databases answer through its index
//! `(flow_id, session_id, timestamp)` walked backwards: rows of equal timestamps come in the
//! order the table keeps them (SQLite's rowid, PostgreSQL's tuple position), newest first. So
//! ties here are broken by that stored order ([`LangflowMessage::stored_order`]), not by id.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::history::{History, HistoryMessage, Side};
use super::memory_base::canonical_id;
use super::model::{PromptMessage, Role};

/// The Agent's default `n_messages` ("Number of Chat History Messages").
pub const AGENT_DEFAULT_N_MESSAGES: u32 = 100;

/// What Langflow fetches when `n_messages` is not set (`MAX_CHAT_HISTORY_FETCH_LIMIT`).
pub const MAX_CHAT_HISTORY_FETCH_LIMIT: u32 = 10_000;

/// The category Langflow gives the messages it writes for a failed component.
pub const ERROR_CATEGORY: &str = "error";

/// One row of Langflow's `message` table, as the memory read sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangflowMessage {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    pub flow_id: Option<String>,
    pub session_id: String,
    pub context_id: Option<String>,
    /// `user_id`: who ran the flow that wrote the message.
    pub owner: Option<String>,
    pub run_id: Option<String>,
    pub sender: String,
    pub sender_name: String,
    pub text: String,
    pub files: Vec<String>,
    /// The `error` flag: the only thing that keeps a message out of memory by itself.
    pub error: bool,
    pub category: String,
    /// Where the row sits in the table's own order (SQLite's rowid, PostgreSQL's tuple
    /// position), as a rank: what Langflow's query falls back on between equal timestamps.
    pub stored_order: u64,
}

impl LangflowMessage {
    /// Where the message sits in Langflow's reading order, oldest first.
    pub fn position(&self) -> (DateTime<Utc>, u64) {
        (self.timestamp, self.stored_order)
    }

    /// An error message that is still fed to the model: its category says error, its flag not.
    pub fn is_error_text_fed(&self) -> bool {
        self.category == ERROR_CATEGORY && !self.error
    }
}

/// The arguments of one `aget_agent_chat_history` call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentHistoryArgs {
    pub flow_id: Option<String>,
    pub session_id: String,
    /// Empty counts as not set, as Langflow's truthiness test does.
    pub context_id: Option<String>,
    /// The owner the read is scoped to (the graph's user).
    pub owner: Option<String>,
    /// `None`: not set (Langflow then fetches up to [`MAX_CHAT_HISTORY_FETCH_LIMIT`]).
    pub n_messages: Option<u32>,
}

/// Why a message of the session is not fed to the model; the first reason that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOut {
    /// Written by another flow under the same session id (or by no flow).
    OtherFlow,
    /// Written for another owner (or for none).
    OtherOwner,
    /// Another `context_id` than the one asked for.
    OtherContext,
    /// Its `error` flag is set.
    ErrorFlag,
    /// Older than the newest `n_messages`.
    PastWindow,
    /// Memory is switched off (`n_messages` 0), or the read has no flow or owner to scope to.
    MemoryOff,
}

impl LeftOut {
    pub const ALL: [LeftOut; 6] = [
        LeftOut::OtherFlow,
        LeftOut::OtherOwner,
        LeftOut::OtherContext,
        LeftOut::ErrorFlag,
        LeftOut::PastWindow,
        LeftOut::MemoryOff,
    ];

    /// Which messages the reason leaves out, in words that follow a count.
    /// The reason in a word or two, for a short panel.
    pub fn short(self) -> &'static str {
        match self {
            LeftOut::OtherFlow => "other flows",
            LeftOut::OtherOwner => "other owners",
            LeftOut::OtherContext => "other context ids",
            LeftOut::ErrorFlag => "error flag",
            LeftOut::PastWindow => "past n_messages",
            LeftOut::MemoryOff => "memory off",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            LeftOut::OtherFlow => "of other flows using this session id",
            LeftOut::OtherOwner => "of other owners",
            LeftOut::OtherContext => "of other context ids",
            LeftOut::ErrorFlag => "with the error flag",
            LeftOut::PastWindow => "older than the newest n_messages",
            LeftOut::MemoryOff => "not read: memory is off (n_messages 0) or the flow has no owner",
        }
    }
}

/// What the Agent's memory feeds the model, and what the session held besides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentHistory<'a> {
    /// Oldest first: exactly the list `aget_agent_chat_history` returns.
    pub messages: Vec<&'a LangflowMessage>,
    /// How many of the session's messages were left out, per reason.
    pub left_out: Vec<(LeftOut, usize)>,
    /// Ids of fed messages whose category is error (their text reaches the model).
    pub error_text_fed: Vec<String>,
    /// The fetch hit [`MAX_CHAT_HISTORY_FETCH_LIMIT`] with `n_messages` not set: Langflow logs
    /// that older messages were not returned.
    pub fetch_limit_reached: bool,
}

impl AgentHistory<'_> {
    pub fn left_out(&self, reason: LeftOut) -> usize {
        self.left_out
            .iter()
            .find(|(r, _)| *r == reason)
            .map_or(0, |(_, n)| *n)
    }

    /// The messages as the model receives them (Langflow's `Message.to_lc_message`: the `User`
    /// sender, or none, is the human; every other sender the AI), for token budgets. Text only:
    /// the images a user message's files add are not counted.
    pub fn prompt_history(&self, window: usize) -> History {
        let messages = self
            .messages
            .iter()
            .map(|m| {
                let human = m.sender.is_empty() || m.sender == SENDER_USER;
                let (role, side) = match human {
                    true => (Role::User, Side::Query),
                    false => (Role::Assistant, Side::Answer),
                };
                HistoryMessage {
                    message: PromptMessage::text(role, m.text.clone()),
                    source_id: m.id.clone(),
                    side,
                }
            })
            .collect();
        History {
            window,
            rows_given: self.messages.len(),
            thread: self.messages.iter().map(|m| m.id.clone()).collect(),
            popped: None,
            messages,
            paused: Vec::new(),
        }
    }
}

/// Langflow's `MESSAGE_SENDER_USER`.
pub const SENDER_USER: &str = "User";

/// Why `message` would not be read for `args`, before the window is applied; `None` when it is
/// a candidate. Messages of other sessions are not the caller's concern and are never passed.
fn filter_out(message: &LangflowMessage, args: &AgentHistoryArgs) -> Option<LeftOut> {
    let same =
        |a: &Option<String>, b: &str| a.as_deref().map(canonical_id) == Some(canonical_id(b));
    let flow = args.flow_id.as_deref()?;
    if !same(&message.flow_id, flow) {
        return Some(LeftOut::OtherFlow);
    }
    let owner = args.owner.as_deref()?;
    if !same(&message.owner, owner) {
        return Some(LeftOut::OtherOwner);
    }
    if let Some(context) = args.context_id.as_deref().filter(|c| !c.is_empty())
        && message.context_id.as_deref() != Some(context)
    {
        return Some(LeftOut::OtherContext);
    }
    message.error.then_some(LeftOut::ErrorFlag)
}

/// `aget_agent_chat_history(args)` over `session`: every message stored under
/// `args.session_id`, in any order.
pub fn agent_history<'a>(
    session: &'a [LangflowMessage],
    args: &AgentHistoryArgs,
) -> AgentHistory<'a> {
    let mut counts = std::collections::BTreeMap::<LeftOut, usize>::new();
    let memory_off = args.n_messages == Some(0) || args.flow_id.is_none() || args.owner.is_none();
    let mut candidates: Vec<&LangflowMessage> = Vec::new();
    for message in session.iter().filter(|m| m.session_id == args.session_id) {
        match (memory_off, filter_out(message, args)) {
            (_, Some(reason)) => *counts.entry(reason).or_default() += 1,
            (true, None) => *counts.entry(LeftOut::MemoryOff).or_default() += 1,
            (false, None) => candidates.push(message),
        }
    }
    // Newest first, as Langflow's `ORDER BY timestamp DESC LIMIT n`; then oldest first.
    candidates.sort_by_key(|m| std::cmp::Reverse(m.position()));
    let limit = args.n_messages.unwrap_or(MAX_CHAT_HISTORY_FETCH_LIMIT) as usize;
    let fetch_limit_reached =
        args.n_messages.is_none() && candidates.len() >= MAX_CHAT_HISTORY_FETCH_LIMIT as usize;
    if candidates.len() > limit {
        *counts.entry(LeftOut::PastWindow).or_default() += candidates.len() - limit;
        candidates.truncate(limit);
    }
    candidates.reverse();
    AgentHistory {
        error_text_fed: candidates
            .iter()
            .filter(|m| m.is_error_text_fed())
            .map(|m| m.id.clone())
            .collect(),
        messages: candidates,
        left_out: counts.into_iter().collect(),
        fetch_limit_reached,
    }
}

#[cfg(test)]
#[path = "agent_history_tests.rs"]
mod tests;

//! An open conversation as both front ends show it, whatever the source: its stored messages in
//! order, and its memory, which says what the model is fed of them under a budget. The memory
//! counts from what was read when the conversation opened, so a budget change reads nothing
//! again.

use std::fmt::Debug;
use std::sync::Arc;

use crate::memory::budget::MessageTokens;
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::{History, HistoryMessage, Side};
use crate::memory::model::{ChatMessage, PromptMessage, Role};
use crate::memory::tokens::CountCache;
use crate::memory::trim::TrimOptions;

use serde::Serialize;

/// Messages left out of what is fed, for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOutCount {
    /// The reason, for scripts: "past_window".
    pub reason: String,
    /// The messages it leaves out, in words that follow a count.
    pub description: String,
    /// The reason in a word or two, for a short panel: "past n_messages".
    #[serde(skip)]
    pub short: String,
    pub messages: usize,
}

/// What names a conversation: its id, with the part of the database the id is unique in where
/// it is not unique on its own (a Langflow session id is used by several flows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConversationKey {
    pub id: String,
    pub scope: Option<String>,
}

impl ConversationKey {
    pub fn new(id: impl Into<String>) -> Self {
        ConversationKey {
            id: id.into(),
            scope: None,
        }
    }
}

/// One stored message as a conversation view shows it: the neutral message, and what its
/// source adds.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownMessage {
    pub message: ChatMessage,
    /// The run that wrote it (Langflow's `run_id`): the view groups by it.
    pub run: Option<String>,
    /// Who wrote it, as the source names it: Langflow's sender and sender name, LangChain's type
    /// and name.
    pub sender: String,
    pub files: Vec<String>,
    /// What an operator should see at once: the error flag, the error category, a tool's error.
    pub marks: Vec<String>,
    pub owner: Option<String>,
    pub context_id: Option<String>,
}

/// An open conversation: its stored messages in order, and its memory.
#[derive(Debug, Clone)]
pub struct OpenConversation {
    pub key: ConversationKey,
    /// What the conversation is, in one line: "session s of flow F, owner O".
    pub heading: String,
    /// How the source keeps it, in a sentence.
    pub structure: String,
    pub messages: Vec<ShownMessage>,
    /// What the model is fed of `messages`.
    pub memory: Arc<dyn ConversationMemory>,
    /// Entries read but not understood.
    pub warnings: Vec<String>,
}

/// A number of messages the memory reads that the user may change (Langflow's `n_messages`).
#[derive(Debug, Clone, Copy)]
pub struct MessageWindow {
    /// The setting's name, as the source's users know it.
    pub name: &'static str,
    pub default: u32,
    /// What the window reads, in a sentence: "the Agent reads the newest 100 messages".
    pub describe: fn(u32) -> String,
}

/// What a conversation's model is fed, computed from what was read when it opened.
pub trait ConversationMemory: Debug + Send + Sync {
    /// The message window the user may change, where the memory has one.
    fn window(&self) -> Option<MessageWindow> {
        None
    }

    /// What is fed under `settings`, with the window at `window` where the memory has one.
    fn fed(
        &self,
        window: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String>;

    /// The views of the conversation a key switches between (an ADK session: whose agent's
    /// model is sent it), the first the one shown when it opens; empty where there is one.
    fn views(&self) -> Vec<String> {
        Vec::new()
    }

    /// What is fed in view `view` (an index of [`Self::views`]; the first when `None`).
    fn fed_in(
        &self,
        view: Option<usize>,
        window: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String> {
        let _ = view;
        self.fed(window, settings, cache)
    }
}

/// A conversation's history under a budget, with what an operator should know about it.
#[derive(Debug, Clone)]
pub struct FedHistory {
    pub view: BudgetView,
    /// The rule that chose the messages and the cut, in words.
    pub rule: String,
    /// Messages of the conversation not fed, per reason: only counted.
    pub left_out: Vec<LeftOutCount>,
    /// Fed messages an operator should look at, and why in a sentence (Langflow's error text
    /// without the error flag).
    pub flagged: Vec<String>,
    pub flagged_why: &'static str,
    /// A message above the cut that is sent anyway: the system message a trim keeps.
    pub kept_above_cut: Option<usize>,
    pub warnings: Vec<String>,
    /// Where a trim preview starts when the cut is itself a trim (LangGraph's recommended one):
    /// every message it chose from, counted, and the options that give the cut again.
    pub trim_start: Option<TrimStart>,
}

/// The messages a trim chose from, counted, and its options.
#[derive(Debug, Clone)]
pub struct TrimStart {
    pub messages: Vec<PromptMessage>,
    pub counts: Vec<MessageTokens>,
    pub options: TrimOptions,
}

impl FedHistory {
    /// Whether message `id` of the conversation reaches the model: read by its memory and
    /// below the cut the budget shows, or the message a trim keeps above it. What a message
    /// list marks (● sent, ○ not), the same rule for every source.
    pub fn is_sent(&self, id: &str) -> bool {
        let first_kept = self.view.pruned.first_kept;
        self.view
            .history
            .messages
            .iter()
            .enumerate()
            .any(|(index, m)| {
                m.source_id == id && (index >= first_kept || self.kept_above_cut == Some(index))
            })
    }
}

/// Fed messages as a history a budget view counts: a user's message a query, the rest answers.
pub fn fed_history(messages: Vec<(String, PromptMessage)>) -> History {
    let thread: Vec<String> = messages.iter().map(|(id, _)| id.clone()).collect();
    History {
        window: thread.len(),
        rows_given: thread.len(),
        thread,
        popped: None,
        paused: Vec::new(),
        messages: messages
            .into_iter()
            .map(|(source_id, message)| HistoryMessage {
                side: match message.role {
                    Role::User => Side::Query,
                    _ => Side::Answer,
                },
                message,
                source_id,
            })
            .collect(),
    }
}

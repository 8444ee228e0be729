//! What `TokenBufferMemory` sends: the row window, the thread, prompt messages and pruning.
//!
//! Follows reference §1: rows newest first (the SQL LIMIT is [`row_window`]), the thread walk,
//! the placeholder pop, then one user and one assistant message per row, oldest first. Token
//! pruning is [`crate::memory::budget::prune`]; [`History::split_at_cut`] applies its result.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::budget::Pruned;
use super::model::{
    Content, ContentPart, FileOwner, MessageFile, PromptMessage, Role, StoredMessage,
};
use super::thread::{ExtractionMode, extract_thread};

/// Dify's cap on the rows one history query loads.
pub const MAX_ROW_WINDOW: usize = 500;

/// The LIMIT of the history query: `min(limit, 500)`, and 500 when the limit is missing or not
/// positive. It counts rows (turns), regenerated siblings included, before thread extraction.
pub fn row_window(message_limit: Option<i64>) -> usize {
    match message_limit {
        Some(limit) if limit > 0 => {
            usize::try_from(limit).map_or(MAX_ROW_WINDOW, |limit| limit.min(MAX_ROW_WINDOW))
        }
        _ => MAX_ROW_WINDOW,
    }
}

/// When the newest thread row is dropped as the current request's placeholder.
///
/// The row's `status` plays no part: Dify's `get_history_prompt_messages`
/// (`api/core/memory/token_buffer_memory.py`, and the same query in its later
/// conversation-level memory) selects every message of the conversation whatever its status and
/// tests only `answer` and `answer_tokens`. A human-input pause (`status = 'paused'`) is
/// therefore the placeholder while it is the newest row with nothing answered yet, and once an
/// older row it stays in the history with its (possibly empty) answer, like an error row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PopRule {
    /// Before 2025: the answer is empty.
    AnswerEmpty,
    /// Since 2025: the answer is empty and no answer tokens were recorded, so a message still
    /// streaming is kept.
    #[default]
    AnswerEmptyAndNoAnswerTokens,
}

impl PopRule {
    pub fn pops(self, newest: &StoredMessage) -> bool {
        newest.answer.is_empty()
            && match self {
                PopRule::AnswerEmpty => true,
                PopRule::AnswerEmptyAndNoAnswerTokens => newest.answer_tokens == 0,
            }
    }
}

/// `messages.status` of a chatflow turn paused for a human-input form (Dify 1.13). Dify saves
/// the row when the run pauses (the answer streamed so far, the counts so far) and sets it back
/// to `normal` when the resumed run saves it again.
pub const PAUSED_STATUS: &str = "paused";

/// What Dify's memory makes of a paused row. Its queries read rows whatever their status (see
/// [`PopRule`]), so the pause changes nothing in the rules; what it changes is which rows meet
/// them: a paused row is the one row whose own run reads memory again after it was saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseEffect {
    /// The newest row, nothing answered or counted at the pause: dropped as the pending
    /// request, as any placeholder is.
    Pending,
    /// The newest row, saved with part of an answer or with counts: not a placeholder, so when
    /// the run resumes an LLM node after the form reads this turn's own question and its
    /// answer so far in its history, before the same question again.
    OwnTurnInHistory,
    /// An older row: the conversation went on while it stayed paused, and its question and the
    /// answer saved at the pause (possibly empty) stay in the history like any row's.
    LeftPaused,
}

/// A paused row of the thread memory reads, and what memory makes of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedTurn {
    pub message_id: String,
    pub effect: PauseEffect,
}

impl PausedTurn {
    /// What the pause means for the history, in plain words.
    pub fn describe(&self) -> String {
        let id = &self.message_id;
        match self.effect {
            PauseEffect::Pending => format!(
                "message {id} is paused for human input with nothing answered yet: memory \
                 drops it as the pending request"
            ),
            PauseEffect::OwnTurnInHistory => format!(
                "message {id} is paused for human input after part of its run: when it \
                 resumes, memory sends this turn's own question and answer so far as history"
            ),
            PauseEffect::LeftPaused => format!(
                "message {id} is still paused for human input while the conversation went on: \
                 its question and the answer saved at the pause stay in the history"
            ),
        }
    }
}

/// Where a row's files go and in which order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileOrder {
    /// Current: files first, then text; user files (`belongs_to` user or NULL) on the user
    /// message, assistant files on the assistant message.
    #[default]
    FilesFirst,
    /// Late 2024: text first, then every file of the row on the user message; the assistant
    /// message is always plain text.
    TextFirstAllFilesOnUser,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryOptions {
    /// `message_limit` as the caller passes it; see [`row_window`].
    pub message_limit: Option<i64>,
    pub extraction: ExtractionMode,
    pub pop_rule: PopRule,
    pub file_order: FileOrder,
}

/// Which half of a row a prompt message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Query,
    Answer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryMessage {
    pub message: PromptMessage,
    /// The `messages` row it was built from.
    pub source_id: String,
    pub side: Side,
}

/// The history `TokenBufferMemory` builds before token pruning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The row LIMIT in effect.
    pub window: usize,
    /// Rows handed in (more than `window` are ignored, as the LIMIT would have).
    pub rows_given: usize,
    /// Ids of the rows that produced messages, oldest first.
    pub thread: Vec<String>,
    /// The newest thread row, dropped as the current request's placeholder.
    pub popped: Option<String>,
    /// Two per thread row: the query, then the answer.
    pub messages: Vec<HistoryMessage>,
    /// The paused rows among the thread and the popped row, oldest first.
    #[serde(default)]
    pub paused: Vec<PausedTurn>,
}

impl History {
    pub fn prompt_messages(&self) -> impl Iterator<Item = &PromptMessage> {
        self.messages.iter().map(|m| &m.message)
    }

    /// The messages pruning cuts and those it keeps: the cut line is between the two.
    pub fn split_at_cut(&self, pruned: &Pruned) -> (&[HistoryMessage], &[HistoryMessage]) {
        self.messages
            .split_at(pruned.first_kept.min(self.messages.len()))
    }
}

/// The thread as memory uses it: extracted, placeholder popped, oldest first.
struct UsedThread {
    rows: Vec<usize>,
    popped: Option<usize>,
}

fn used_thread(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> UsedThread {
    let mut rows = extract_thread(rows_newest_first, extraction);
    // Only the newest row is ever checked: older empty answers stay in the history.
    let popped = match rows.first() {
        Some(&newest) if pop_rule.pops(&rows_newest_first[newest]) => Some(rows.remove(0)),
        _ => None,
    };
    rows.reverse();
    UsedThread { rows, popped }
}

impl UsedThread {
    /// The paused rows among the thread and the popped row, oldest first. Only the newest
    /// row's own run can still resume and read memory again.
    fn paused(&self, rows_newest_first: &[StoredMessage]) -> Vec<PausedTurn> {
        let newest = self.rows.last().copied().filter(|_| self.popped.is_none());
        self.rows
            .iter()
            .map(|&row| {
                let effect = if Some(row) == newest {
                    PauseEffect::OwnTurnInHistory
                } else {
                    PauseEffect::LeftPaused
                };
                (row, effect)
            })
            .chain(self.popped.map(|row| (row, PauseEffect::Pending)))
            .filter(|&(row, _)| rows_newest_first[row].status == PAUSED_STATUS)
            .map(|(row, effect)| PausedTurn {
                message_id: rows_newest_first[row].id.clone(),
                effect,
            })
            .collect()
    }
}

/// `get_history_prompt_messages` before pruning, from the conversation's rows newest first and
/// the `message_files` of those rows (in any order; each row keeps its files' relative order).
///
/// Files are always attached. Dify first reads the app's file-upload config and sends plain
/// text when it is off, and raises when a workflow run it needs is missing (#32674); callers
/// that know the config or the missing runs decide that before calling.
pub fn assemble_history(
    rows_newest_first: &[StoredMessage],
    files: &[MessageFile],
    options: &HistoryOptions,
) -> History {
    let window = row_window(options.message_limit);
    let loaded = &rows_newest_first[..rows_newest_first.len().min(window)];
    let thread = used_thread(loaded, options.extraction, options.pop_rule);

    let mut files_by_message: FxHashMap<&str, Vec<&MessageFile>> = FxHashMap::default();
    for file in files {
        files_by_message
            .entry(&file.message_id)
            .or_default()
            .push(file);
    }

    let mut messages = Vec::with_capacity(thread.rows.len() * 2);
    for &row in &thread.rows {
        let message = &loaded[row];
        let row_files = files_by_message
            .get(message.id.as_str())
            .map_or(&[][..], Vec::as_slice);
        let (query, answer) = match options.file_order {
            FileOrder::FilesFirst => (
                files_first(&message.query, row_files, FileOwner::User),
                files_first(&message.answer, row_files, FileOwner::Assistant),
            ),
            FileOrder::TextFirstAllFilesOnUser => (
                with_files(&message.query, row_files.iter().copied(), false),
                Content::Text(message.answer.clone()),
            ),
        };
        for (role, content, side) in [
            (Role::User, query, Side::Query),
            (Role::Assistant, answer, Side::Answer),
        ] {
            messages.push(HistoryMessage {
                message: PromptMessage::new(role, content),
                source_id: message.id.clone(),
                side,
            });
        }
    }

    History {
        window,
        rows_given: rows_newest_first.len(),
        thread: thread
            .rows
            .iter()
            .map(|&row| loaded[row].id.clone())
            .collect(),
        popped: thread.popped.map(|row| loaded[row].id.clone()),
        messages,
        paused: thread.paused(loaded),
    }
}

fn files_first(text: &str, files: &[&MessageFile], owner: FileOwner) -> Content {
    with_files(
        text,
        files.iter().copied().filter(|f| f.owner() == owner),
        true,
    )
}

/// Plain text without files; otherwise the file parts and one text part, in the given order.
fn with_files<'f>(
    text: &str,
    files: impl Iterator<Item = &'f MessageFile>,
    files_before_text: bool,
) -> Content {
    let mut parts: Vec<ContentPart> = files.map(file_part).collect();
    if parts.is_empty() {
        return Content::Text(text.to_owned());
    }
    let text_part = ContentPart::Text {
        text: text.to_owned(),
    };
    if files_before_text {
        parts.push(text_part);
    } else {
        parts.insert(0, text_part);
    }
    Content::Parts(parts)
}

fn file_part(file: &MessageFile) -> ContentPart {
    let source = file.label().to_owned();
    match file.file_type.as_str() {
        "image" => ContentPart::Image { source },
        "audio" => ContentPart::Audio { source },
        "video" => ContentPart::Video { source },
        // `document`, and `custom` which Dify sends as a document; unknown types likewise.
        _ => ContentPart::Document { source },
    }
}

/// `get_history_prompt_text` (reference §1.6): `"{prefix}: {content}"` lines joined by `"\n"`.
/// Roles other than user and assistant are skipped. Part lists render text parts and
/// `[image]` each followed by `"\n"`, drop other parts, and are stripped like Python's `strip()`.
pub fn history_prompt_text<'m>(
    messages: impl IntoIterator<Item = &'m PromptMessage>,
    human_prefix: &str,
    ai_prefix: &str,
) -> String {
    let mut lines = Vec::new();
    for message in messages {
        let prefix = match message.role {
            Role::User => human_prefix,
            Role::Assistant => ai_prefix,
            Role::System | Role::Tool => continue,
        };
        match &message.content {
            Content::Text(text) => lines.push(format!("{prefix}: {text}")),
            Content::Parts(parts) => {
                let mut inner = String::new();
                for part in parts {
                    match part {
                        ContentPart::Text { text } => {
                            inner.push_str(text);
                            inner.push('\n');
                        }
                        ContentPart::Image { .. } => inner.push_str("[image]\n"),
                        ContentPart::Document { .. }
                        | ContentPart::Audio { .. }
                        | ContentPart::Video { .. } => {}
                    }
                }
                lines.push(format!("{prefix}: {}", inner.trim_matches(is_python_space)));
            }
        }
    }
    lines.join("\n")
}

/// Python's `str.isspace`: Unicode white space plus the ASCII separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The thread's workflow run ids, oldest first (reference §3.2): up to 500 rows newest first,
/// thread, placeholder pop, rows without a run id dropped.
pub fn thread_workflow_run_ids(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Vec<&str> {
    let loaded = &rows_newest_first[..rows_newest_first.len().min(MAX_ROW_WINDOW)];
    used_thread(loaded, extraction, pop_rule)
        .rows
        .iter()
        .filter_map(|&row| loaded[row].workflow_run_id.as_deref())
        .filter(|run_id| !run_id.is_empty())
        .collect()
}

/// `sys.dialogue_count` as `get_thread_messages_length` computes it (reference §1.7): the
/// length of the thread of all the conversation's rows, placeholder popped. No row limit.
pub fn dialogue_count(
    all_rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> usize {
    used_thread(all_rows_newest_first, extraction, pop_rule)
        .rows
        .len()
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;

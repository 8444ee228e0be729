//! What a trim would do, as data: every input message's fate with its reason, the summary's
//! place, and token totals. Nothing is changed until a caller applies a plan.

use serde::Serialize;

use crate::memory::model::{Content, PromptMessage, Role};

/// Why a message is removed or modified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Removed so the rest fits the limit.
    OverLimit,
    /// Removed: `end_on` drops trailing messages of other types.
    EndOn,
    /// Removed: `start_on` drops leading messages of other types.
    StartOn,
    /// Removed with the tool call or result it is grouped with.
    ToolGroup,
    /// Removed: a tool result would open the history without its call.
    OrphanToolResult,
    /// Modified: only the content blocks or text splits that fit are kept (`allow_partial`).
    PartialContent,
    /// Modified: the tool result's content is emptied (`clear_tool_results`).
    ToolResultCleared,
    /// Modified: older images replaced by a stub naming the file (`max_images`).
    ImageStubbed,
}

impl Reason {
    pub fn describe(self) -> &'static str {
        match self {
            Reason::OverLimit => "over the limit",
            Reason::EndOn => "after the last end_on message",
            Reason::StartOn => "before the first start_on message",
            Reason::ToolGroup => "grouped with a removed tool call",
            Reason::OrphanToolResult => "tool result without its call",
            Reason::PartialContent => "partially kept",
            Reason::ToolResultCleared => "tool result emptied",
            Reason::ImageStubbed => "older images stubbed",
        }
    }
}

/// One position of the trimmed list, in order; together the steps name every input message once.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    Keep {
        index: usize,
    },
    Modify {
        index: usize,
        message: PromptMessage,
        reason: Reason,
    },
    Remove {
        index: usize,
        reason: Reason,
    },
    /// Where the summary of the removed messages goes.
    Summary,
}

impl Step {
    /// The input message this step is about (`None` for the summary).
    pub fn index(&self) -> Option<usize> {
        match self {
            Step::Keep { index } | Step::Modify { index, .. } | Step::Remove { index, .. } => {
                Some(*index)
            }
            Step::Summary => None,
        }
    }
}

/// The summary replacing the removed messages, or what would be asked for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummarySlot {
    /// Input indices of the messages summarized, in order.
    pub summarized: Vec<usize>,
    /// Atomic groups summarized: a retry after an empty summary halves this.
    pub groups: usize,
    /// The exact prompt a chat-completions summarizer is sent.
    pub prompt: String,
    /// The summary, once a summarizer produced it.
    pub text: Option<String>,
    /// Which summarizer wrote `text`.
    pub summarizer: Option<String>,
}

/// The text a summary message carries, marked so readers (and later trims) recognise it.
pub const SUMMARY_PREFIX: &str = "Summary of earlier conversation: ";

impl SummarySlot {
    /// The message inserted at the cut point, once there is a summary.
    pub fn message(&self) -> Option<PromptMessage> {
        self.text
            .as_ref()
            .map(|text| PromptMessage::text(Role::System, format!("{SUMMARY_PREFIX}{text}")))
    }
}

/// A system message a plan removes, and why: a system prompt is what an operator least expects
/// a trim to drop, so a plan says so ([`super::system_removals`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SystemRemoval {
    pub index: usize,
    pub reason: Reason,
    /// What let it go, in words.
    pub why: String,
}

/// A trim, not yet applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrimPlan {
    pub steps: Vec<Step>,
    pub tokens_before: u64,
    /// The trimmed list's count, the summary included once it has text.
    pub tokens_after: u64,
    pub summary: Option<SummarySlot>,
}

impl TrimPlan {
    /// The trimmed list. `input` must be the list the plan was made from.
    pub fn messages(&self, input: &[PromptMessage]) -> Vec<PromptMessage> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Keep { index } => Some(input[*index].clone()),
                Step::Modify { message, .. } => Some(message.clone()),
                Step::Remove { .. } => None,
                Step::Summary => self.summary.as_ref().and_then(SummarySlot::message),
            })
            .collect()
    }

    pub fn removed(&self) -> impl Iterator<Item = (usize, Reason)> + '_ {
        self.steps.iter().filter_map(|step| match step {
            Step::Remove { index, reason } => Some((*index, *reason)),
            _ => None,
        })
    }

    pub fn modified(&self) -> impl Iterator<Item = (usize, &PromptMessage, Reason)> + '_ {
        self.steps.iter().filter_map(|step| match step {
            Step::Modify {
                index,
                message,
                reason,
            } => Some((*index, message, *reason)),
            _ => None,
        })
    }

    /// Whether applying the plan changes nothing.
    pub fn is_noop(&self) -> bool {
        self.steps
            .iter()
            .all(|step| matches!(step, Step::Keep { .. }))
    }

    /// Messages in the trimmed list (the summary counts once it has text).
    pub fn kept_len(&self) -> usize {
        self.steps
            .iter()
            .filter(|step| match step {
                Step::Keep { .. } | Step::Modify { .. } => true,
                Step::Remove { .. } => false,
                Step::Summary => self.summary.as_ref().is_some_and(|s| s.text.is_some()),
            })
            .count()
    }
}

/// A message with its content replaced, everything else as it was.
pub(crate) fn with_content(message: &PromptMessage, content: Content) -> PromptMessage {
    PromptMessage {
        content,
        ..message.clone()
    }
}

//! Trimming message lists, as plans: LangChain's `trim_messages` exactly ([`trim_messages`]),
//! and chat memory policies on top of it ([`ChatMemoryPolicy`], seed 004 and reference §B):
//! limits by messages or tokens, continuous or threshold trimming, drop oldest or middle, a
//! minimum-messages floor, emptied tool results, an image cap, predefined messages, tool groups
//! kept whole, and one summary in place of what is removed.
//!
//! Pure code: a summarizer that needs the network lives in [`crate::summarize`]; here is the
//! prompt it is sent and the offline extractive summarizer.

mod count;
mod extractive;
mod groups;
mod langchain;
mod plan;
mod policy;
mod prompt;

pub use count::{MessageCount, MessageCounter, list_tokens};
pub use extractive::{EXTRACTIVE_LABEL, extractive_summary};
pub use groups::{Group, group_messages};
pub use langchain::{Strategy, TextSplitter, TrimOptions, trim_messages, trim_messages_counted};
pub use plan::{Reason, SUMMARY_PREFIX, Step, SummarySlot, TrimPlan};
pub use policy::{
    ChatMemoryPolicy, LimitType, PolicyPlanner, PolicyStrategy, Summarization, TrimMode, is_summary,
};
pub use prompt::{DEFAULT_SUMMARIZE_PROMPT, summarize_prompt};

/// What `trim_messages` and policies refuse, in LangChain's words where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrimError {
    #[error("start_on parameter is only valid with strategy='last'")]
    StartOnWithFirst,
    #[error("include_system parameter is only valid with strategy='last'")]
    IncludeSystemWithFirst,
    #[error("Unrecognized strategy='{0}'. Supported strategies are 'last' and 'first'.")]
    UnknownStrategy(String),
    #[error(
        "'token_counter' expected to be a model that implements 'get_num_tokens_from_messages()' \
         or a function. Received {0:?} (use messages, openai, plugin, raw or zero)"
    )]
    UnknownCounter(String),
    #[error("unknown message type {0:?} (expected system, human/user, ai/assistant or tool)")]
    UnknownMessageType(String),
    #[error("{counts} counts given for {messages} messages")]
    CountsMismatch { messages: usize, counts: usize },
    #[error("bad chat memory policy: {0}")]
    BadPolicy(String),
}

/// Message types as `start_on`/`end_on` name them: `human`/`user`, `ai`/`assistant`,
/// `system`, `tool`.
pub fn parse_message_types(names: &[String]) -> Result<Vec<crate::memory::model::Role>, TrimError> {
    names
        .iter()
        .map(|name| {
            crate::memory::model::Role::parse(name)
                .ok_or_else(|| TrimError::UnknownMessageType(name.clone()))
        })
        .collect()
}

//! Trimming message lists, as plans: LangChain's `trim_messages` exactly ([`trim_messages`]),
//! and chat memory policies on top of it ([`ChatMemoryPolicy`], seed 004 and reference §B):
//! limits by messages or tokens, continuous or threshold trimming, drop oldest or middle, a
//! minimum-messages floor, emptied tool results, an image cap, predefined messages, tool groups
//! kept whole, and one summary in place of what is removed.
//!
//! Pure code: a summarizer that needs the network lives in [`crate::summarize`]; here is the
//! prompt it is sent and the offline extractive summarizer.

mod count;
mod error;
mod extractive;
mod groups;
mod langchain;
mod plan;
mod policy;
mod prompt;

pub use count::{MessageCount, MessageCounter, list_tokens};
pub use error::{TrimError, parse_message_types};
pub use extractive::{EXTRACTIVE_LABEL, extractive_summary};
pub use groups::{Group, group_messages};
pub use langchain::{
    Strategy, TextSplitter, TrimOptions, system_removals, trim_messages, trim_messages_counted,
};
pub use plan::{Reason, SUMMARY_PREFIX, Step, SummarySlot, SystemRemoval, TrimPlan};
pub use policy::{
    ChatMemoryPolicy, LimitType, PolicyPlanner, PolicyStrategy, Summarization, TrimMode, is_summary,
};
pub use prompt::{DEFAULT_SUMMARIZE_PROMPT, summarize_prompt};

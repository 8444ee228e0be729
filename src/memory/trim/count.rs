//! How a trim measures a list: per-message counts that add up to the count of the whole list,
//! so the engine counts any candidate list from counts taken once (and cached by the caller).

use crate::memory::budget::MessageTokens;
use crate::memory::model::PromptMessage;
use crate::memory::tokens::TokenCounter;

/// `Sync` so plans can be summarized across awaits on any runtime.
/// Counts messages so that a list counts the `inner` of every message but the last, the `last`
/// of the last, and [`list_overhead`](MessageCounter::list_overhead) once (0 for an empty list).
pub trait MessageCounter: Sync {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens;
    fn list_overhead(&self) -> u32;
    /// Tokens of a bare text, for capping a summary.
    fn count_text(&self, text: &str) -> usize;
    /// What the counter is, for an operator.
    fn describe(&self) -> String;
}

impl MessageCounter for TokenCounter {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        TokenCounter::count_message(self, message)
    }

    fn list_overhead(&self) -> u32 {
        TokenCounter::list_overhead(self)
    }

    fn count_text(&self, text: &str) -> usize {
        TokenCounter::count_text(self, text)
    }

    fn describe(&self) -> String {
        self.description()
    }
}

/// LangChain's `token_counter=len`: every message counts 1, the list nothing more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageCount;

impl MessageCounter for MessageCount {
    fn count_message(&self, _message: &PromptMessage) -> MessageTokens {
        MessageTokens::flat(1)
    }

    fn list_overhead(&self) -> u32 {
        0
    }

    /// A text is one message's worth.
    fn count_text(&self, text: &str) -> usize {
        usize::from(!text.is_empty())
    }

    fn describe(&self) -> String {
        "message count (len)".to_owned()
    }
}

/// The count of a list given its messages' counts in list order.
pub fn list_tokens(counts: impl IntoIterator<Item = MessageTokens>, overhead: u32) -> u64 {
    let mut total = 0u64;
    let mut last: Option<MessageTokens> = None;
    for tokens in counts {
        if let Some(previous) = last.replace(tokens) {
            total += u64::from(previous.inner);
        }
    }
    match last {
        Some(tokens) => total + u64::from(tokens.last) + u64::from(overhead),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::Role;
    use crate::memory::tokens::{CounterKind, Encoding};

    #[test]
    fn list_tokens_matches_the_counter_on_whole_lists() {
        let counter = TokenCounter::with_encoding(CounterKind::Plugin, Encoding::O200kBase);
        let messages = vec![
            PromptMessage::text(Role::System, "Be brief."),
            PromptMessage::text(Role::User, "What is 2+2?\n"),
            PromptMessage::text(Role::Assistant, "4"),
        ];
        let counts = messages.iter().map(|m| counter.count_message(m));
        assert_eq!(
            list_tokens(counts, counter.list_overhead()),
            counter.count_list(&messages)
        );
        assert_eq!(list_tokens([], 3), 0);
    }

    #[test]
    fn message_count_counts_messages() {
        let messages = [
            PromptMessage::text(Role::User, "a"),
            PromptMessage::text(Role::User, "b"),
        ];
        let counts = messages.iter().map(|m| MessageCount.count_message(m));
        assert_eq!(list_tokens(counts, MessageCount.list_overhead()), 2);
    }
}

//! What the model is given of a thread's `messages`: each message's tokens, the tokens of the
//! list from each message on, and what `trim_messages(strategy="last", start_on="human",
//! include_system=True)` keeps under a budget, the trim LangGraph's documentation recommends
//! for a model call.

use crate::memory::budget::{MessageTokens, SuffixTotals};
use crate::memory::model::{PromptMessage, Role};
use crate::memory::trim::{MessageCounter, Step, TrimError, TrimOptions, trim_messages_counted};
use crate::sources::opened::TrimStart;

use super::message::LangChainMessage;

/// The trim the cut follows, as a LangGraph user writes it.
pub const RECOMMENDED_TRIM: &str =
    "trim_messages(strategy=\"last\", start_on=\"human\", include_system=True)";

/// The messages of a state under a budget, in the state's order.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesBudget {
    /// Each message as a model sees it.
    pub prompt: Vec<PromptMessage>,
    /// Each message's tokens as part of the whole list.
    pub tokens: Vec<u32>,
    /// Each message's counts as the counter gave them (a trim preview plans from them).
    pub counts: Vec<MessageTokens>,
    /// Tokens of the list from each message on.
    pub from_here: Vec<u64>,
    /// Whether the trim keeps each message.
    pub kept: Vec<bool>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The budget the cut was made under.
    pub max_tokens: i64,
}

impl MessagesBudget {
    /// The options of [`RECOMMENDED_TRIM`] under `max_tokens`.
    pub fn options(max_tokens: i64) -> TrimOptions {
        TrimOptions {
            start_on: Some(vec![Role::User]),
            include_system: true,
            ..TrimOptions::new(max_tokens)
        }
    }

    /// Counts `messages` (those no model sees, a `RemoveMessage`, are left out) and trims them.
    pub fn compute(
        messages: &[LangChainMessage],
        counter: &dyn MessageCounter,
        max_tokens: i64,
    ) -> Result<MessagesBudget, TrimError> {
        let prompt: Vec<PromptMessage> = messages
            .iter()
            .filter_map(LangChainMessage::to_prompt_message)
            .collect();
        let counts: Vec<MessageTokens> = prompt.iter().map(|m| counter.count_message(m)).collect();
        let options = Self::options(max_tokens);
        let plan = trim_messages_counted(&prompt, &counts, &options, counter)?;
        let mut kept = vec![false; prompt.len()];
        for step in &plan.steps {
            if let Step::Keep { index } | Step::Modify { index, .. } = step {
                kept[*index] = true;
            }
        }
        let totals = SuffixTotals::new(&counts, counter.list_overhead());
        let last = counts.len().saturating_sub(1);
        Ok(MessagesBudget {
            tokens: counts
                .iter()
                .enumerate()
                .map(|(i, c)| if i == last { c.last } else { c.inner })
                .collect(),
            from_here: (0..prompt.len()).map(|i| totals.from(i)).collect(),
            kept,
            counts,
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
            prompt,
            max_tokens,
        })
    }

    /// The options of the trim that made the cut: where a trim preview of these messages starts.
    pub fn trim_options(&self) -> TrimOptions {
        Self::options(self.max_tokens)
    }

    /// Where a trim preview of this cut starts: every message, counted, and the options.
    pub fn trim_start(&self) -> TrimStart {
        TrimStart {
            messages: self.prompt.clone(),
            counts: self.counts.clone(),
            options: self.trim_options(),
        }
    }

    pub fn dropped(&self) -> usize {
        self.kept.iter().filter(|k| !**k).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::trim::MessageCount;
    use serde_json::json;

    fn message(kind: &str, text: &str) -> LangChainMessage {
        LangChainMessage {
            class: "Message".into(),
            kind: kind.into(),
            id: None,
            content: json!(text),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            status: None,
            role: None,
            usage_metadata: None,
        }
    }

    #[test]
    fn the_cut_keeps_the_system_message_and_starts_on_a_human_turn() {
        let messages = [
            message("system", "be brief"),
            message("human", "one"),
            message("ai", "1"),
            message("human", "two"),
            message("ai", "2"),
            message("tool", "t"),
            message("ai", "3"),
        ];
        // Four messages fit: the system message, then the newest three would start on a
        // tool message, so the trim starts at the next human turn back within budget.
        let budget = MessagesBudget::compute(&messages, &MessageCount, 5).unwrap();
        assert_eq!(budget.kept, [true, false, false, true, true, true, true]);
        assert_eq!(budget.tokens_before, 7);
        assert_eq!(budget.tokens_after, 5);
        assert_eq!(budget.from_here, [7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(budget.dropped(), 2);

        let tight = MessagesBudget::compute(&messages, &MessageCount, 3).unwrap();
        // The newest two (tool, ai) do not start on a human message: only the system stays.
        assert_eq!(tight.kept, [true, false, false, false, false, false, false]);
    }
}

//! What the model is given of a thread's `messages`: the neutral [`MessagesBudget`] of the
//! messages a model sees, cut by what `trim_messages(strategy="last", start_on="human",
//! include_system=True)` keeps under a budget, the trim LangGraph's documentation recommends
//! for a model call.

use crate::memory::model::{PromptMessage, Role};
use crate::memory::trim::{MessageCounter, TrimError, TrimOptions};
use crate::sources::checkpoint_history::MessagesBudget;

use super::message::LangChainMessage;

/// The trim the cut follows, as a LangGraph user writes it.
pub const RECOMMENDED_TRIM: &str =
    "trim_messages(strategy=\"last\", start_on=\"human\", include_system=True)";

/// The options of [`RECOMMENDED_TRIM`] under `max_tokens`.
fn options(max_tokens: i64) -> TrimOptions {
    TrimOptions {
        start_on: Some(vec![Role::User]),
        include_system: true,
        ..TrimOptions::new(max_tokens)
    }
}

/// Counts `prompt` and cuts it by [`RECOMMENDED_TRIM`] under `max_tokens`.
pub fn recommended_cut(
    prompt: Vec<PromptMessage>,
    counter: &dyn MessageCounter,
    max_tokens: i64,
) -> Result<MessagesBudget, TrimError> {
    MessagesBudget::compute(prompt, counter, options(max_tokens), RECOMMENDED_TRIM)
}

/// Counts `messages` (those no model sees, a `RemoveMessage`, are left out) and trims them.
pub fn channel_budget(
    messages: &[LangChainMessage],
    counter: &dyn MessageCounter,
    max_tokens: i64,
) -> Result<MessagesBudget, TrimError> {
    let prompt = messages
        .iter()
        .filter_map(LangChainMessage::to_prompt_message)
        .collect();
    recommended_cut(prompt, counter, max_tokens)
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
        let budget = channel_budget(&messages, &MessageCount, 5).unwrap();
        assert_eq!(budget.kept, [true, false, false, true, true, true, true]);
        assert_eq!(budget.tokens_before, 7);
        assert_eq!(budget.tokens_after, 5);
        assert_eq!(budget.from_here, [7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(budget.dropped(), 2);

        let tight = channel_budget(&messages, &MessageCount, 3).unwrap();
        // The newest two (tool, ai) do not start on a human message: only the system stays.
        assert_eq!(tight.kept, [true, false, false, false, false, false, false]);
    }
}

//! The prompt a chat-completions summarizer is sent for the removed messages.

use crate::memory::model::PromptMessage;

/// Seed 004's default `summarize_prompt`.
pub const DEFAULT_SUMMARIZE_PROMPT: &str = "Summarize the key points of the removed messages, \
preserving important context and decisions made.";

/// Splox's framing (reference §B): the configured prompt is the rules, the removed messages
/// the chat log.
pub fn summarize_prompt<'a>(
    rules: &str,
    removed: impl IntoIterator<Item = &'a PromptMessage>,
) -> String {
    let mut prompt = format!(
        "You are given a chat log inside <chat> tags. Rules: {}\n\n<chat>\n",
        rules.trim()
    );
    for message in removed {
        prompt.push_str(message.role.as_str());
        prompt.push_str(": ");
        prompt.push_str(&message.content.text());
        for call in &message.tool_calls {
            prompt.push_str(&format!(" [calls {}({})]", call.name, call.arguments));
        }
        prompt.push('\n');
    }
    prompt.push_str("</chat>");
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::Role;

    #[test]
    fn the_log_follows_the_rules() {
        let removed = [
            PromptMessage::text(Role::User, "Book a table for two."),
            PromptMessage::text(Role::Assistant, "Booked for 8pm."),
        ];
        let prompt = summarize_prompt(DEFAULT_SUMMARIZE_PROMPT, &removed);
        assert_eq!(
            prompt,
            format!(
                "You are given a chat log inside <chat> tags. Rules: {DEFAULT_SUMMARIZE_PROMPT}\n\n\
                 <chat>\nuser: Book a table for two.\nassistant: Booked for 8pm.\n</chat>"
            )
        );
    }
}

//! Dify's message rows as neutral [`ChatMessage`]s: a row is one turn, the user's question and
//! the assistant's answer, with the counts Dify recorded for the call that answered it. What
//! only Dify's rows have (the thread walk over parent links, the row window, the zero-counter
//! trap) stays with Dify's own readers in `memory/`.

use crate::memory::model::{ChatMessage, PromptMessage, Role, StoredMessage, TokenUsage};

/// The row's question and, once generated, its answer. An unanswered row (still generating,
/// stopped or failed) gives the question alone; Dify's counters are the answer's usage, and a
/// row whose counters are both zero has none recorded.
pub fn chat_messages(row: &StoredMessage) -> Vec<ChatMessage> {
    let message = |role, text: &str| ChatMessage {
        id: row.id.clone(),
        message: PromptMessage::text(role, text),
        created_at: Some(row.created_at),
        usage: None,
    };
    let mut messages = vec![message(Role::User, &row.query)];
    if !row.answer.is_empty() {
        let recorded = row.message_tokens != 0 || row.answer_tokens != 0;
        messages.push(ChatMessage {
            usage: recorded.then_some(TokenUsage {
                input_tokens: row.message_tokens,
                output_tokens: row.answer_tokens,
            }),
            ..message(Role::Assistant, &row.answer)
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::Content;

    fn row(answer: &str, tokens: (i64, i64)) -> StoredMessage {
        let at = chrono::NaiveDate::from_ymd_opt(2026, 3, 1)
            .unwrap()
            .and_hms_opt(9, 30, 0)
            .unwrap();
        StoredMessage {
            message_tokens: tokens.0,
            answer_tokens: tokens.1,
            ..StoredMessage::turn("m1", "c1", None, "What is RAG?", answer, at)
        }
    }

    #[test]
    fn an_answered_row_is_a_question_and_an_answer_with_its_usage() {
        let messages = chat_messages(&row("Retrieval, then generation.", (120, 8)));
        let roles: Vec<Role> = messages.iter().map(|m| m.message.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant]);
        assert_eq!(
            messages[0].message.content,
            Content::Text("What is RAG?".into())
        );
        assert_eq!(messages[0].usage, None);
        let usage = messages[1].usage.unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (120, 8));
        assert_eq!(usage.total_tokens(), 128);
        assert!(messages.iter().all(|m| m.id == "m1"));
    }

    #[test]
    fn an_unanswered_row_is_its_question_alone() {
        let messages = chat_messages(&row("", (0, 0)));
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].message.role, Role::User);
    }

    #[test]
    fn zero_counters_are_no_usage_rather_than_a_free_call() {
        let messages = chat_messages(&row("Done.", (0, 0)));
        assert_eq!(messages[1].usage, None);
    }

    #[test]
    fn it_serializes_in_the_shape_langchain_reads() {
        let json = serde_json::to_value(&chat_messages(&row("Yes.", (3, 1)))[1]).unwrap();
        assert_eq!(json["role"], "assistant");
        assert_eq!(json["id"], "m1");
        assert_eq!(json["usage"]["input_tokens"], 3);
        assert_eq!(json["usage"]["output_tokens"], 1);
    }
}

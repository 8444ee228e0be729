//! Atomic groups: an assistant message that calls tools and the results that answer it trim as
//! one, so no kept history holds a call without its results or a result without its call.

use serde::Serialize;

use crate::memory::model::{PromptMessage, Role};

/// Messages `start..end` of a list, trimmed together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Group {
    pub start: usize,
    pub end: usize,
    /// A tool result whose call is not right before it.
    pub orphan: bool,
}

impl Group {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// Splits `messages` into groups: each assistant message with tool calls takes the tool results
/// that follow it and answer one of its calls (a result without an id answers the call before
/// it); every other message is a group of one.
pub fn group_messages(messages: &[PromptMessage]) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut start = 0;
    while start < messages.len() {
        let message = &messages[start];
        let mut end = start + 1;
        if message.role == Role::Assistant && !message.tool_calls.is_empty() {
            let answers = |result: &PromptMessage| {
                result.role == Role::Tool
                    && result
                        .tool_call_id
                        .as_ref()
                        .is_none_or(|id| message.tool_calls.iter().any(|call| &call.id == id))
            };
            while end < messages.len() && answers(&messages[end]) {
                end += 1;
            }
        }
        groups.push(Group {
            start,
            end,
            orphan: message.role == Role::Tool,
        });
        start = end;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::ToolCall;

    fn call(ids: &[&str]) -> PromptMessage {
        PromptMessage {
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).to_owned(),
                    name: "search".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..PromptMessage::text(Role::Assistant, "")
        }
    }

    fn result(id: &str) -> PromptMessage {
        PromptMessage {
            tool_call_id: Some(id.to_owned()),
            ..PromptMessage::text(Role::Tool, "42")
        }
    }

    #[test]
    fn calls_take_their_results() {
        let messages = vec![
            PromptMessage::text(Role::User, "q"),
            call(&["a", "b"]),
            result("a"),
            result("b"),
            PromptMessage::text(Role::Assistant, "done"),
        ];
        let spans: Vec<(usize, usize)> = group_messages(&messages)
            .iter()
            .map(|g| (g.start, g.end))
            .collect();
        assert_eq!(spans, vec![(0, 1), (1, 4), (4, 5)]);
    }

    #[test]
    fn results_of_other_calls_are_orphans() {
        let messages = vec![result("x"), call(&["a"]), result("b")];
        let groups = group_messages(&messages);
        assert_eq!(groups.len(), 3);
        assert!(groups[0].orphan && !groups[1].orphan && groups[2].orphan);
    }
}

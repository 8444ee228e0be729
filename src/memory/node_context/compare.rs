//! Where design A's file and design B's context disagree about a turn.

use serde::Serialize;

use super::memory_file::TurnText;
use super::outputs::OutputsContext;
use crate::memory::model::Role;

/// The turn as design B's context of that run holds it: the last user message and the reply.
pub fn outputs_turn_text(outputs: &OutputsContext) -> Option<TurnText> {
    let messages = &outputs.context.messages;
    let user = messages
        .iter()
        .rev()
        .find(|m| m.message.role == Role::User)?;
    let assistant = match &outputs.reply {
        Some(reply) => reply.clone(),
        None => messages
            .iter()
            .rev()
            .find(|m| m.message.role == Role::Assistant)
            .map(|m| m.message.content.text().into_owned())
            .unwrap_or_default(),
    };
    Some(TurnText {
        user: user.message.content.text().into_owned(),
        assistant,
    })
}

/// Where designs A and B disagree about one turn of one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "disagreement", rename_all = "snake_case")]
pub enum Disagreement {
    /// The run's context has the turn; the node memory file does not.
    MissingInFile,
    /// The file has the turn; the run has no readable context.
    MissingInOutputs,
    DifferentUser {
        file: String,
        outputs: String,
    },
    DifferentAssistant {
        file: String,
        outputs: String,
    },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::MissingInFile => f.write_str("turn missing from the node memory file"),
            Disagreement::MissingInOutputs => f.write_str("turn missing from outputs.context"),
            Disagreement::DifferentUser { .. } => f.write_str("user message differs"),
            Disagreement::DifferentAssistant { .. } => f.write_str("assistant message differs"),
        }
    }
}

/// Compares one turn as the file and the run's context hold it.
pub fn compare_turn(file: Option<&TurnText>, outputs: Option<&TurnText>) -> Option<Disagreement> {
    match (file, outputs) {
        (None, None) => None,
        (None, Some(_)) => Some(Disagreement::MissingInFile),
        (Some(_), None) => Some(Disagreement::MissingInOutputs),
        (Some(file), Some(outputs)) if file.user != outputs.user => {
            Some(Disagreement::DifferentUser {
                file: file.user.clone(),
                outputs: outputs.user.clone(),
            })
        }
        (Some(file), Some(outputs)) if file.assistant != outputs.assistant => {
            Some(Disagreement::DifferentAssistant {
                file: file.assistant.clone(),
                outputs: outputs.assistant.clone(),
            })
        }
        (Some(_), Some(_)) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::memory::node_context::fixtures::bytes;
    use crate::memory::node_context::outputs::parse_outputs;

    #[test]
    fn turns_are_compared_by_text() {
        let text = |user: &str, assistant: &str| TurnText {
            user: user.into(),
            assistant: assistant.into(),
        };
        assert_eq!(compare_turn(None, None), None);
        assert_eq!(
            compare_turn(Some(&text("q", "a")), Some(&text("q", "a"))),
            None
        );
        assert_eq!(
            compare_turn(None, Some(&text("q", "a"))),
            Some(Disagreement::MissingInFile)
        );
        assert_eq!(
            compare_turn(Some(&text("q", "a")), None),
            Some(Disagreement::MissingInOutputs)
        );
        assert!(matches!(
            compare_turn(Some(&text("q", "draft")), Some(&text("q", "final"))),
            Some(Disagreement::DifferentAssistant { .. })
        ));
        assert!(matches!(
            compare_turn(Some(&text("q1", "a")), Some(&text("q2", "a"))),
            Some(Disagreement::DifferentUser { .. })
        ));
    }

    #[test]
    fn outputs_turn_is_the_last_user_message_and_the_reply() {
        let outputs = parse_outputs(
            &bytes(json!({"text": "final", "context": [
                {"role": "user", "content": "old"},
                {"role": "assistant", "content": "old answer"},
                {"role": "user", "content": [{"type": "text", "data": "new"}]},
                {"role": "assistant", "content": "final"},
            ]})),
            "o",
        );
        assert_eq!(
            outputs_turn_text(&outputs),
            Some(TurnText {
                user: "new".into(),
                assistant: "final".into()
            })
        );
        assert_eq!(outputs_turn_text(&OutputsContext::default()), None);
    }
}

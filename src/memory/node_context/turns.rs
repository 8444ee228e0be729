//! The thread's turns that ran the workflow, as node memory derives them.

use std::collections::HashMap;

use serde::Serialize;

use crate::memory::history::{PopRule, thread_workflow_run_ids};
use crate::memory::model::StoredMessage;
use crate::memory::thread::ExtractionMode;

/// One turn of the conversation's thread that ran the workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadTurn {
    pub message_id: String,
    pub workflow_run_id: String,
    /// The app mode the message recorded (`messages.app_mode`, Dify since October 2025).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_mode: Option<String>,
}

/// The thread's turns oldest first, exactly as node memory derives them (reference §3.2):
/// [`thread_workflow_run_ids`], each run id paired with its message.
pub fn thread_turns(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Vec<ThreadTurn> {
    let message_of_run: HashMap<&str, &StoredMessage> = rows_newest_first
        .iter()
        .filter_map(|row| Some((row.workflow_run_id.as_deref()?, row)))
        .collect();
    thread_workflow_run_ids(rows_newest_first, extraction, pop_rule)
        .into_iter()
        .map(|run_id| {
            let message = message_of_run.get(run_id);
            ThreadTurn {
                message_id: message.map_or_else(String::new, |m| m.id.clone()),
                workflow_run_id: run_id.to_owned(),
                app_mode: message.and_then(|m| m.app_mode.clone()),
            }
        })
        .collect()
}

/// The turn of `message_id` that ran `run_id`, for the parsers' tests.
#[cfg(test)]
pub(super) fn turn(message_id: &str, run_id: &str) -> ThreadTurn {
    ThreadTurn {
        message_id: message_id.into(),
        workflow_run_id: run_id.into(),
        app_mode: None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;

    use super::*;

    fn message(id: &str, parent: Option<&str>, run: Option<&str>, answer: &str) -> StoredMessage {
        let mut message =
            StoredMessage::turn(id, "c", parent, "q", answer, NaiveDateTime::default());
        message.workflow_run_id = run.map(Into::into);
        message
    }

    #[test]
    fn thread_turns_pair_run_ids_with_their_messages() {
        // Newest first: a placeholder (popped), m3 without a run, m2 on the thread, m2b regenerated.
        let rows = [
            message("m4", Some("m3"), Some("run-4"), ""),
            message("m3", Some("m2"), None, "a"),
            message("m2b", Some("m1"), Some("run-2b"), "a"),
            message("m2", Some("m1"), Some("run-2"), "a"),
            message("m1", None, Some("run-1"), "a"),
        ];
        let turns = thread_turns(&rows, ExtractionMode::Dify, PopRule::default());
        assert_eq!(turns, [turn("m1", "run-1"), turn("m2", "run-2")]);
        let run_ids: Vec<&str> = turns.iter().map(|t| t.workflow_run_id.as_str()).collect();
        assert_eq!(
            run_ids,
            thread_workflow_run_ids(&rows, ExtractionMode::Dify, PopRule::default())
        );
    }
}

//! What parsing a node's memory gives: messages with where each came from, and a problem for
//! each part that cannot be read.

use serde::Serialize;

use crate::memory::model::PromptMessage;

/// Something in a node's memory that cannot be read. `what` names the document (a file path or
/// an execution's column), so a report line stands on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum NodeProblem {
    #[error("{what} is not JSON: {error}")]
    NotJson { what: String, error: String },
    #[error("{what} is not a JSON object")]
    NotAnObject { what: String },
    #[error("{what}: `{key}` is {found}, not a list")]
    NotAList {
        what: String,
        key: String,
        found: String,
    },
    #[error("{what}: item {index} has an unknown role `{role}`")]
    UnknownRole {
        what: String,
        index: usize,
        role: String,
    },
    #[error("{what}: item {index} cannot be read: {error}")]
    BadItem {
        what: String,
        index: usize,
        error: String,
    },
    #[error("{what} holds neither `turns` nor `messages`")]
    UnknownLayout { what: String },
    #[error("{what}: the turn of run {run_id} cannot be read: {error}")]
    BadTurn {
        what: String,
        run_id: String,
        error: String,
    },
    #[error("{what}: the parent links of entry {message_id} form a cycle")]
    ParentCycle { what: String, message_id: String },
    #[error(
        "the offloaded {column} of execution {execution_id} are missing: upload {file_id} ({location})"
    )]
    MissingOffloadFile {
        execution_id: String,
        column: String,
        file_id: String,
        location: String,
    },
    #[error("cannot read {path}: {error}")]
    UnreadableFile { path: String, error: String },
    #[error("message {message_id} points to workflow run {run_id}, which does not exist")]
    DanglingRun { message_id: String, run_id: String },
    #[error(
        "run {run_id} archived by Dify: its executions left the database (message {message_id})"
    )]
    ArchivedRun { message_id: String, run_id: String },
}

/// One message of a node's context, with where it came from: a workflow run id (design-A
/// turns), a message id (the seed's `messages` list) or a list position (`context[3]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeMessage {
    pub message: PromptMessage,
    pub source: String,
}

/// Messages parsed from one document, and what could not be parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedMessages {
    /// Whether the document holds the list at all: `context` is absent on Dify main, where
    /// node memory does not exist.
    pub found: bool,
    pub messages: Vec<NodeMessage>,
    pub problems: Vec<NodeProblem>,
}

impl ParsedMessages {
    pub(super) fn failed(problem: NodeProblem) -> Self {
        ParsedMessages {
            found: false,
            messages: Vec::new(),
            problems: vec![problem],
        }
    }

    pub fn prompt_messages(&self) -> Vec<PromptMessage> {
        self.messages.iter().map(|m| m.message.clone()).collect()
    }
}

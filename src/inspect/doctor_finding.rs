//! What `doctor` reports: one finding per problem, each naming the row an operator should look
//! at, with its kind (for counts and JSON) and one line for a terminal.
//!
//! In JSON a finding has the same keys whatever the source: `kind`, `conversation` (the
//! conversation, session or thread it is about, `null` for the whole database), `description`
//! (the line the CLI prints) and `extra` (the rest of what the finding says).

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::{Value as Json, json};

use crate::format::{count, thousands};

use crate::memory::node_context::NodeProblem;
use crate::memory::thread::ThreadComparison;
use crate::sources::doctor::Found;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", remote = "Self")]
pub enum Finding {
    /// Dify's extraction from the newest message is not the tree path to it: the model sees a
    /// different thread than the conversation holds.
    ThreadDivergence {
        conversation_id: String,
        newest_message: String,
        comparison: ThreadComparison,
        explanation: String,
    },
    /// The history, unpruned (as Dify 1.x sends it with token counting disabled), is over budget.
    OverBudget {
        conversation_id: String,
        tokens: u64,
        budget: i64,
        messages: usize,
    },
    /// A cycle, a dangling parent or a duplicate id in the parent links.
    TreeAnomaly {
        conversation_id: String,
        anomaly: String,
    },
    /// A message whose `workflow_run_id` names no run: history with files raises in Dify (#32674).
    DanglingWorkflowRun {
        conversation_id: String,
        message_id: String,
        workflow_run_id: String,
    },
    /// A row that cannot be read at all (text that is not UTF-8, a value of the wrong type):
    /// the rest of the table is scanned without it.
    UnreadableRow {
        table: String,
        id: String,
        error: String,
    },
    /// A node execution column that is not valid JSON.
    UnreadableJson {
        node_execution_id: String,
        node_id: String,
        column: String,
        error: String,
    },
    /// Node memory that cannot be read in full: an LLM execution's `context` or `prompts`, an
    /// offloaded copy, or a node memory file. The rest of the node's context still reads.
    NodeContext {
        /// The execution, or `None` for a node memory file.
        node_execution_id: Option<String>,
        node_id: Option<String>,
        problem: NodeProblem,
    },
    /// A message's uploaded file (`transfer_method` `local_file`) that Dify's storage does not
    /// give back: the history Dify builds for that message fails to load the file.
    MissingMessageFile {
        conversation_id: Option<String>,
        message_id: String,
        message_file_id: String,
        location: String,
        error: String,
    },
    /// A finding of the scan of the source that made the database (a Langflow session's
    /// Agent memory, a LangGraph thread's cost).
    #[serde(untagged)]
    Source(Found),
}

/// The keys that name a finding's conversation in each source's words, taken out of `extra`.
const CONVERSATION_KEYS: [&str; 3] = ["conversation_id", "session_id", "thread_id"];

impl Serialize for Finding {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tagged =
            Finding::serialize(self, serde_json::value::Serializer).map_err(S::Error::custom)?;
        let mut extra = match tagged {
            Json::Object(fields) => fields,
            _ => return Err(S::Error::custom("a finding is written as an object")),
        };
        extra.remove("kind");
        for key in CONVERSATION_KEYS {
            extra.remove(key);
        }
        json!({
            "kind": self.kind(),
            "conversation": self.conversation_id(),
            "description": self.describe(),
            "extra": extra,
        })
        .serialize(serializer)
    }
}

impl Finding {
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::ThreadDivergence { .. } => "thread_divergence",
            Finding::OverBudget { .. } => "over_budget",
            Finding::TreeAnomaly { .. } => "tree_anomaly",
            Finding::DanglingWorkflowRun { .. } => "dangling_workflow_run",
            Finding::UnreadableRow { .. } => "unreadable_row",
            Finding::UnreadableJson { .. } => "unreadable_json",
            Finding::NodeContext { .. } => "node_context",
            Finding::MissingMessageFile { .. } => "missing_message_file",
            Finding::Source(finding) => finding.kind(),
        }
    }

    /// The conversation the finding is about, when it is about one.
    pub fn conversation_id(&self) -> Option<&str> {
        match self {
            Finding::ThreadDivergence {
                conversation_id, ..
            }
            | Finding::OverBudget {
                conversation_id, ..
            }
            | Finding::TreeAnomaly {
                conversation_id, ..
            }
            | Finding::DanglingWorkflowRun {
                conversation_id, ..
            } => Some(conversation_id),
            Finding::MissingMessageFile {
                conversation_id, ..
            } => conversation_id.as_deref(),
            Finding::Source(finding) => finding.conversation(),
            Finding::UnreadableRow { .. }
            | Finding::UnreadableJson { .. }
            | Finding::NodeContext { .. } => None,
        }
    }

    /// One line for a terminal.
    pub fn describe(&self) -> String {
        match self {
            Finding::ThreadDivergence {
                conversation_id,
                explanation,
                ..
            } => format!("conversation {conversation_id}: {explanation}"),
            Finding::OverBudget {
                conversation_id,
                tokens,
                budget,
                messages,
            } => format!(
                "conversation {conversation_id}: history of {} is {}, over the budget of {}; \
                 with token counting disabled (Dify 1.x default) all of it is sent",
                count(*messages as u64, "message"),
                count(*tokens, "token"),
                thousands(*budget),
            ),
            Finding::TreeAnomaly {
                conversation_id,
                anomaly,
            } => format!("conversation {conversation_id}: {anomaly}"),
            Finding::DanglingWorkflowRun {
                conversation_id,
                message_id,
                workflow_run_id,
            } => format!(
                "conversation {conversation_id}: message {message_id} points to workflow run \
                 {workflow_run_id}, which does not exist"
            ),
            Finding::UnreadableRow { table, id, error } => {
                format!("{table} row {id} cannot be read, so every check skipped it: {error}")
            }
            Finding::UnreadableJson {
                node_execution_id,
                node_id,
                column,
                error,
            } => format!(
                "node execution {node_execution_id} (node {node_id}): `{column}` is not valid JSON: {error}"
            ),
            Finding::NodeContext {
                node_id, problem, ..
            } => match node_id {
                Some(node_id) => format!("node {node_id}: {problem}"),
                None => problem.to_string(),
            },
            Finding::MissingMessageFile {
                conversation_id,
                message_id,
                message_file_id,
                location,
                error,
            } => format!(
                "conversation {}: message {message_id} has file {message_file_id} at {location}, \
                 which cannot be read: {error}",
                conversation_id.as_deref().unwrap_or("(none)")
            ),
            Finding::Source(finding) => finding.describe(),
        }
    }
}

//! What `doctor` finds in a Dify database (and in memscope's own, which keeps Dify's tables):
//! one finding per problem, each naming the row an operator should look at, with its kind and
//! one line for a terminal.

use serde::Serialize;

use crate::format::{count, thousands};
use crate::memory::node_context::NodeProblem;
use crate::memory::thread::ThreadComparison;
use crate::sources::conversation::Extra;
use crate::sources::doctor::{FindingTarget, SourceFinding, extra_of};
use crate::sources::opened::ConversationKey;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DifyFinding {
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
}

impl SourceFinding for DifyFinding {
    fn kind(&self) -> &'static str {
        match self {
            DifyFinding::ThreadDivergence { .. } => "thread_divergence",
            DifyFinding::OverBudget { .. } => "over_budget",
            DifyFinding::TreeAnomaly { .. } => "tree_anomaly",
            DifyFinding::DanglingWorkflowRun { .. } => "dangling_workflow_run",
            DifyFinding::UnreadableRow { .. } => "unreadable_row",
            DifyFinding::UnreadableJson { .. } => "unreadable_json",
            DifyFinding::NodeContext { .. } => "node_context",
            DifyFinding::MissingMessageFile { .. } => "missing_message_file",
        }
    }

    fn conversation(&self) -> Option<&str> {
        match self {
            DifyFinding::ThreadDivergence {
                conversation_id, ..
            }
            | DifyFinding::OverBudget {
                conversation_id, ..
            }
            | DifyFinding::TreeAnomaly {
                conversation_id, ..
            }
            | DifyFinding::DanglingWorkflowRun {
                conversation_id, ..
            } => Some(conversation_id),
            DifyFinding::MissingMessageFile {
                conversation_id, ..
            } => conversation_id.as_deref(),
            DifyFinding::UnreadableRow { .. }
            | DifyFinding::UnreadableJson { .. }
            | DifyFinding::NodeContext { .. } => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            DifyFinding::ThreadDivergence {
                conversation_id,
                explanation,
                ..
            } => format!("conversation {conversation_id}: {explanation}"),
            DifyFinding::OverBudget {
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
            DifyFinding::TreeAnomaly {
                conversation_id,
                anomaly,
            } => format!("conversation {conversation_id}: {anomaly}"),
            DifyFinding::DanglingWorkflowRun {
                conversation_id,
                message_id,
                workflow_run_id,
            } => format!(
                "conversation {conversation_id}: message {message_id} points to workflow run \
                 {workflow_run_id}, which does not exist"
            ),
            DifyFinding::UnreadableRow { table, id, error } => {
                format!("{table} row {id} cannot be read, so every check skipped it: {error}")
            }
            DifyFinding::UnreadableJson {
                node_execution_id,
                node_id,
                column,
                error,
            } => format!(
                "node execution {node_execution_id} (node {node_id}): `{column}` is not valid JSON: {error}"
            ),
            DifyFinding::NodeContext {
                node_id, problem, ..
            } => match node_id {
                Some(node_id) => format!("node {node_id}: {problem}"),
                None => problem.to_string(),
            },
            DifyFinding::MissingMessageFile {
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
        }
    }

    fn extra(&self) -> Extra {
        extra_of(self, "conversation_id")
    }

    /// Its conversation. A finding about no conversation (a row, a node, a file) leads nowhere
    /// of its own: a view asks [`SourceFinding::conversation`] before following one.
    fn leads_to(&self) -> FindingTarget {
        FindingTarget::Conversation(ConversationKey::new(
            self.conversation().unwrap_or_default(),
        ))
    }
}

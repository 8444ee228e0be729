//! The node-context capability: a source whose databases keep the LLM node executions of
//! chatflow conversations (Dify's, and memscope's own schema in Dify's tables) reads, for one
//! conversation, the thread node memory reads, the node executions of its runs with their JSON
//! columns in full, and where a node's memory file is. `inspect/nodes/` computes each node's
//! context, budget and timeline over what it gives, in the neutral types here.

use serde::Serialize;

use super::conversation::SourceFuture;
use super::turn_trees::TurnInfo;
use crate::memory::history::PopRule;
use crate::memory::node_context::{
    NodeProblem, OutputsContext, ParsedMessages, ThreadTurn, parse_outputs, parse_prompts,
};
use crate::memory::thread::ExtractionMode;
use crate::storage::ObjectStore;
use crate::store::{NodeExecutionBrief, Store};

/// The only app mode with node memory: it needs a conversation id, which workflows lack.
pub const CHATFLOW_MODE: &str = "advanced-chat";

/// The node contexts of a source's chatflow conversations.
pub trait NodeContexts: Sync {
    /// The thread node memory reads of a conversation (given by id or unique prefix): without
    /// a leaf, the app's own walk from the newest message under `extraction` and `pop_rule`;
    /// with one, the tree path from that leaf up to its root.
    fn thread<'a>(
        &'a self,
        store: &'a Store,
        conversation_id: &'a str,
        leaf: Option<&'a str>,
        extraction: ExtractionMode,
        pop_rule: PopRule,
    ) -> SourceFuture<'a, NodeThread>;

    /// Every node execution of the conversation's runs (all turns, not only the thread's).
    fn conversation_executions<'a>(
        &'a self,
        store: &'a Store,
        conversation_id: &'a str,
    ) -> SourceFuture<'a, Vec<NodeExecutionBrief>>;

    /// The executions of each `(run, node)` asked for, in that order, with their columns in
    /// full: every offloaded copy of all of them is read at once.
    fn executions_in_each<'a>(
        &'a self,
        store: &'a Store,
        storage: &'a ObjectStore,
        wanted: &'a [(String, String)],
    ) -> SourceFuture<'a, Vec<Vec<ExecutionDocs>>>;

    /// A node's executions in every one of `run_ids`, with their columns in full.
    fn executions_in_runs<'a>(
        &'a self,
        store: &'a Store,
        storage: &'a ObjectStore,
        run_ids: &'a [String],
        node_id: &'a str,
    ) -> SourceFuture<'a, Vec<ExecutionDocs>>;

    /// The object key of a node's memory file in the app's storage.
    fn memory_file_key(&self, conversation: &NodeConversation, node_id: &str) -> String;
}

/// The conversation a node thread belongs to, as the node views name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConversation {
    pub id: String,
    pub name: String,
    pub app_id: String,
    /// The app's mode; `None` where the app's row is gone.
    pub app_mode: Option<String>,
    /// Deleted in the app, which hides it.
    pub is_deleted: bool,
}

impl From<TurnInfo> for NodeConversation {
    fn from(info: TurnInfo) -> Self {
        NodeConversation {
            id: info.id,
            name: info.name,
            app_id: info.app_id,
            app_mode: info.app_mode,
            is_deleted: info.is_deleted,
        }
    }
}

/// A conversation's thread as node memory sees it, at a leaf.
#[derive(Debug, Clone)]
pub struct NodeThread {
    pub info: NodeConversation,
    /// The chosen leaf; `None`: the newest message, where the app starts.
    pub leaf: Option<String>,
    /// Oldest first.
    pub turns: Vec<ThreadTurn>,
    /// Thread turns whose run has no row and no archive log either.
    pub dangling: Vec<ThreadTurn>,
    /// Thread turns whose run the app archived out of the database.
    pub archived: Vec<ThreadTurn>,
}

impl NodeThread {
    /// Whether node memory applies: the app is a chatflow. Where the app's row is gone, the
    /// mode the newest turn recorded says it instead.
    pub fn is_chatflow(&self) -> bool {
        let recorded = self.turns.last().and_then(|t| t.app_mode.as_deref());
        self.info.app_mode.as_deref().or(recorded) == Some(CHATFLOW_MODE)
    }

    pub fn last_turn(&self) -> Option<&ThreadTurn> {
        self.turns.last()
    }

    pub fn run_ids(&self) -> Vec<String> {
        self.turns
            .iter()
            .map(|t| t.workflow_run_id.clone())
            .collect()
    }

    /// Why a turn's run has no execution to read: archived, or missing.
    pub fn run_problem(&self, run_id: &str) -> Option<NodeProblem> {
        let find = |turns: &[ThreadTurn]| {
            turns
                .iter()
                .find(|t| t.workflow_run_id == run_id)
                .map(|t| (t.message_id.clone(), t.workflow_run_id.clone()))
        };
        find(&self.archived)
            .map(|(message_id, run_id)| NodeProblem::ArchivedRun { message_id, run_id })
            .or_else(|| {
                find(&self.dangling)
                    .map(|(message_id, run_id)| NodeProblem::DanglingRun { message_id, run_id })
            })
    }
}

/// A JSON column in full: the object-storage copy when the row was truncated and the copy is
/// readable, else the row's own value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FullColumn {
    pub text: Option<String>,
    /// Read from the offloaded upload.
    pub offloaded: bool,
    /// The offloaded copy could not be read: the row's truncated value is used.
    pub problem: Option<NodeProblem>,
}

/// An execution with its JSON columns in full.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionDocs {
    pub id: String,
    pub workflow_run_id: String,
    pub status: String,
    pub outputs: FullColumn,
    pub process_data: FullColumn,
}

/// The parsed columns of one execution.
#[derive(Debug, Clone, Serialize)]
pub struct ParsedExecution {
    pub id: String,
    pub workflow_run_id: String,
    pub status: String,
    pub outputs: OutputsContext,
    pub prompts: ParsedMessages,
    pub outputs_offloaded: bool,
    /// Offload problems; parse problems are in `outputs` and `prompts`.
    pub problems: Vec<NodeProblem>,
}

/// An execution's columns parsed: the node's context and the prompts it sent.
pub fn parse_execution(docs: &ExecutionDocs) -> ParsedExecution {
    let short = &docs.id[..docs.id.len().min(8)];
    let outputs = docs
        .outputs
        .text
        .as_deref()
        .map_or_else(OutputsContext::default, |text| {
            parse_outputs(text.as_bytes(), &format!("outputs of execution {short}"))
        });
    let prompts = docs
        .process_data
        .text
        .as_deref()
        .map_or_else(ParsedMessages::default, |text| {
            parse_prompts(
                text.as_bytes(),
                &format!("process_data of execution {short}"),
            )
        });
    ParsedExecution {
        id: docs.id.clone(),
        workflow_run_id: docs.workflow_run_id.clone(),
        status: docs.status.clone(),
        outputs,
        prompts,
        outputs_offloaded: docs.outputs.offloaded,
        problems: [&docs.outputs.problem, &docs.process_data.problem]
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
    }
}

//! Per-node contexts of a chatflow conversation: which nodes ran, what each LLM node remembers
//! (design A's file, design B's `outputs["context"]`) and what it actually sent
//! (`process_data["prompts"]`), with the same token budget as conversation history.
//!
//! Loading (`load_*`, async: the database and object storage) is separate from computing
//! (plain functions over what was loaded), so a UI loads in the background and recomputes a
//! budget or switches sources without touching the database again.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::InspectError;
use super::budget::{BudgetSettings, BudgetView};
use super::conversation::load_conversation;
use crate::memory::history::{History, HistoryMessage, MAX_ROW_WINDOW, PopRule, Side};
use crate::memory::model::Role;
use crate::memory::node_context::{
    Disagreement, MemoryFile, NodeMessage, NodeProblem, OutputsContext, ParsedMessages, ThreadTurn,
    compare_turn, outputs_turn_text, parse_memory_file, parse_outputs, parse_prompts, thread_turns,
};
use crate::memory::thread::ExtractionMode;
use crate::memory::tokens::CountCache;
use crate::storage::ObjectStore;
use crate::storage::files::FileReadError;
use crate::store::{ConversationInfo, NodeExecutionBrief, NodeExecutionRecord, Offload, Store};

/// The only app mode with node memory: it needs a conversation id, which workflows lack.
pub const CHATFLOW_MODE: &str = "advanced-chat";

/// Which of a node's three sources a context view shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextSource {
    /// Design A: `node_memory/{app_id}/{conversation_id}/{node_id}.json`.
    Files,
    /// Design B: `outputs["context"]` of the thread's last run.
    #[default]
    Outputs,
    /// What the node sent in the thread's last run: `process_data["prompts"]`.
    Prompts,
}

impl ContextSource {
    pub const ALL: [ContextSource; 3] = [
        ContextSource::Files,
        ContextSource::Outputs,
        ContextSource::Prompts,
    ];

    /// The next source, for a key that cycles through them.
    pub fn next(self) -> ContextSource {
        match self {
            ContextSource::Files => ContextSource::Outputs,
            ContextSource::Outputs => ContextSource::Prompts,
            ContextSource::Prompts => ContextSource::Files,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            ContextSource::Files => "node memory file",
            ContextSource::Outputs => "node output context",
            ContextSource::Prompts => "prompts actually sent",
        }
    }
}

/// A conversation's thread as node memory sees it, at a leaf.
#[derive(Debug, Clone)]
pub struct NodeThread {
    pub info: ConversationInfo,
    /// The chosen leaf; `None`: the newest message, where Dify starts.
    pub leaf: Option<String>,
    /// Oldest first.
    pub turns: Vec<ThreadTurn>,
    /// Thread turns whose run has no `workflow_runs` row.
    pub dangling: Vec<ThreadTurn>,
}

impl NodeThread {
    pub fn is_chatflow(&self) -> bool {
        self.info.app_mode.as_deref() == Some(CHATFLOW_MODE)
    }

    pub fn last_turn(&self) -> Option<&ThreadTurn> {
        self.turns.last()
    }

    fn run_ids(&self) -> Vec<String> {
        self.turns
            .iter()
            .map(|t| t.workflow_run_id.clone())
            .collect()
    }

    fn dangling_problem(&self, run_id: &str) -> Option<NodeProblem> {
        self.dangling
            .iter()
            .find(|t| t.workflow_run_id == run_id)
            .map(|t| NodeProblem::DanglingRun {
                message_id: t.message_id.clone(),
                run_id: t.workflow_run_id.clone(),
            })
    }
}

/// Loads the thread node memory reads: without a leaf, Dify's own query (the newest 500 rows,
/// extraction, placeholder pop); with one, the tree path from that leaf up to its root.
pub async fn load_thread(
    store: &Store,
    conversation_id: &str,
    leaf: Option<&str>,
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Result<NodeThread, InspectError> {
    let (info, rows_newest_first) = match leaf {
        None => {
            let info = super::conversation::conversation_info(store, conversation_id).await?;
            let rows = store
                .history_messages(&info.id, MAX_ROW_WINDOW as i64)
                .await?;
            (info, rows)
        }
        Some(leaf) => {
            let conversation = load_conversation(store, conversation_id).await?;
            let tree = conversation.tree();
            let node = conversation.find(&tree, leaf)?;
            let rows = conversation.path_newest_first(&tree, node);
            (conversation.info, rows)
        }
    };
    let turns = thread_turns(&rows_newest_first, extraction, pop_rule);
    let run_ids: Vec<String> = turns.iter().map(|t| t.workflow_run_id.clone()).collect();
    let existing = store.existing_workflow_runs(&run_ids).await?;
    let dangling = turns
        .iter()
        .filter(|t| !existing.contains(&t.workflow_run_id.to_lowercase()))
        .cloned()
        .collect();
    Ok(NodeThread {
        info,
        leaf: leaf.map(str::to_owned),
        turns,
        dangling,
    })
}

/// One node of the nodes pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSummary {
    pub node_id: String,
    pub node_type: String,
    pub title: String,
    /// Executions in the whole conversation, regenerated turns included.
    pub executions: usize,
    /// Executions in the thread's runs.
    pub on_thread: usize,
    /// The thread's newest run that executed the node: where its latest context is.
    pub latest_run: Option<String>,
}

/// Every node execution of the conversation's runs (all turns, not only the thread).
pub async fn load_conversation_executions(
    store: &Store,
    conversation_id: &str,
) -> Result<Vec<NodeExecutionBrief>, InspectError> {
    let conversation = load_conversation(store, conversation_id).await?;
    let run_ids: Vec<String> = conversation
        .rows
        .iter()
        .filter_map(|row| row.workflow_run_id.clone())
        .collect();
    Ok(store.node_execution_briefs(&run_ids).await?)
}

/// The nodes with executions, in the order they first ran.
pub fn summarize_nodes(thread: &NodeThread, executions: &[NodeExecutionBrief]) -> Vec<NodeSummary> {
    let thread_position: HashMap<String, usize> = thread
        .turns
        .iter()
        .enumerate()
        .map(|(position, t)| (t.workflow_run_id.to_lowercase(), position))
        .collect();
    let mut nodes: Vec<NodeSummary> = Vec::new();
    // Per node: its index in `nodes` and the thread position of its latest run.
    let mut seen: HashMap<&str, (usize, Option<usize>)> = HashMap::new();
    for execution in executions {
        let (index, latest) = seen.entry(&execution.node_id).or_insert_with(|| {
            nodes.push(NodeSummary {
                node_id: execution.node_id.clone(),
                node_type: execution.node_type.clone(),
                title: execution.title.clone(),
                executions: 0,
                on_thread: 0,
                latest_run: None,
            });
            (nodes.len() - 1, None)
        });
        let node = &mut nodes[*index];
        node.executions += 1;
        if let Some(&position) = thread_position.get(&execution.workflow_run_id.to_lowercase()) {
            node.on_thread += 1;
            if latest.is_none_or(|latest| position > latest) {
                *latest = Some(position);
                node.latest_run = Some(execution.workflow_run_id.clone());
            }
        }
    }
    nodes
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

/// An offload link's object key, or why it has none.
fn offload_key(offload: &Option<Offload>) -> Option<&str> {
    offload.as_ref().and_then(|o| o.storage_key.as_deref())
}

/// A column in full from what its offloaded copy's read gave (`None`: the row has no offload).
fn full_column(
    storage: &ObjectStore,
    execution_id: &str,
    column: &str,
    row_value: Option<String>,
    offload: Option<Offload>,
    read: Option<Result<Vec<u8>, FileReadError>>,
) -> FullColumn {
    let Some(offload) = offload else {
        return FullColumn {
            text: row_value,
            ..FullColumn::default()
        };
    };
    let missing = |location: String| FullColumn {
        text: row_value.clone(),
        offloaded: false,
        problem: Some(NodeProblem::MissingOffloadFile {
            execution_id: execution_id.to_owned(),
            column: column.to_owned(),
            file_id: offload.file_id.clone(),
            location,
        }),
    };
    let Some(key) = &offload.storage_key else {
        return missing("no upload_files row".to_owned());
    };
    match read {
        Some(Ok(bytes)) => FullColumn {
            text: Some(String::from_utf8_lossy(&bytes).into_owned()),
            offloaded: true,
            problem: None,
        },
        Some(Err(error)) => missing(format!("{}: {error}", storage.location(key))),
        None => missing(format!("{}: not read", storage.location(key))),
    }
}

/// Follows each record's offload links into object storage: every offloaded copy is read at
/// once (bounded, see [`ObjectStore::read_many`]), so hundreds cost about one round trip.
pub async fn resolve_offloads(
    storage: &ObjectStore,
    records: Vec<NodeExecutionRecord>,
) -> Vec<ExecutionDocs> {
    let keys: Vec<String> = records
        .iter()
        .flat_map(|r| {
            [
                offload_key(&r.outputs_offload),
                offload_key(&r.process_data_offload),
            ]
        })
        .flatten()
        .map(str::to_owned)
        .collect();
    let mut reads = storage.read_many(&keys).await.into_iter();
    let mut next = |offload: &Option<Offload>| offload_key(offload).and_then(|_| reads.next());
    let mut docs = Vec::with_capacity(records.len());
    for record in records {
        let outputs_read = next(&record.outputs_offload);
        let process_data_read = next(&record.process_data_offload);
        let outputs = full_column(
            storage,
            &record.id,
            "outputs",
            record.outputs,
            record.outputs_offload,
            outputs_read,
        );
        let process_data = full_column(
            storage,
            &record.id,
            "process_data",
            record.process_data,
            record.process_data_offload,
            process_data_read,
        );
        docs.push(ExecutionDocs {
            id: record.id,
            workflow_run_id: record.workflow_run_id,
            status: record.status,
            outputs,
            process_data,
        });
    }
    docs
}

/// The node memory file as read from object storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum MemoryFileRead {
    Missing { path: String },
    Unreadable { problem: NodeProblem },
    Read { path: String, bytes: Vec<u8> },
}

/// `node_memory/{app_id}/{conversation_id}/{node_id}.json`: the key of a node memory file in
/// Dify's storage. Node ids are plain names; a separator or `..` in one cannot name a file of
/// that directory.
pub fn memory_file_key(info: &ConversationInfo, node_id: &str) -> String {
    format!("node_memory/{}/{}/{node_id}.json", info.app_id, info.id)
}

/// Whether a node id stays inside its conversation's directory as a file name.
fn is_plain_name(node_id: &str) -> bool {
    !node_id.is_empty() && node_id != ".." && !node_id.contains(['/', '\\'])
}

/// Reads a node memory file without blocking (see [`ObjectStore::read`]): a FIFO, an oversized
/// object or a stalled mount or server is a problem naming where it is, within a bounded time.
pub async fn read_memory_file(storage: &ObjectStore, key: &str) -> MemoryFileRead {
    memory_file_read(&storage.location(key), storage.read(key).await)
}

/// What a memory file read gave, as [`MemoryFileRead`]; `shown` is where the file is.
pub fn memory_file_read(shown: &str, read: Result<Vec<u8>, FileReadError>) -> MemoryFileRead {
    let shown = shown.to_owned();
    match read {
        Ok(bytes) => MemoryFileRead::Read { path: shown, bytes },
        Err(FileReadError::NotFound) => MemoryFileRead::Missing { path: shown },
        Err(error) => MemoryFileRead::Unreadable {
            problem: NodeProblem::UnreadableFile {
                path: shown,
                error: error.to_string(),
            },
        },
    }
}

/// Everything a node's context at the thread's end is computed from.
#[derive(Debug, Clone, Serialize)]
pub struct NodeSources {
    pub node_id: String,
    pub memory_file: MemoryFileRead,
    /// The node's executions in the thread's last run, oldest first.
    pub last_run: Vec<ExecutionDocs>,
}

/// Reads a node's memory file and its executions in the thread's last run: two indexed
/// lookups and at most three file reads, whatever the conversation's length.
pub async fn load_node_sources(
    store: &Store,
    storage: &ObjectStore,
    thread: &NodeThread,
    node_id: &str,
) -> Result<NodeSources, InspectError> {
    let key = memory_file_key(&thread.info, node_id);
    let memory_file = if is_plain_name(node_id) {
        read_memory_file(storage, &key).await
    } else {
        MemoryFileRead::Missing {
            path: storage.location(&key),
        }
    };
    let records = match thread.last_turn() {
        Some(turn) => {
            store
                .node_executions_in_run(&turn.workflow_run_id, node_id)
                .await?
        }
        None => Vec::new(),
    };
    Ok(NodeSources {
        node_id: node_id.to_owned(),
        memory_file,
        last_run: resolve_offloads(storage, records).await,
    })
}

/// Why a context has nothing to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "empty", rename_all = "snake_case")]
pub enum EmptyState {
    /// Node memory needs a conversation id, which only chatflow apps have.
    NotAChatflow {
        app_mode: Option<String>,
    },
    /// No thread message ran a workflow.
    NoThreadRuns,
    NoMemoryFile {
        path: String,
    },
    /// The node did not run (successfully, for design B) in the thread's last run.
    NoExecution {
        run_id: String,
    },
    /// The outputs hold no `context`: node memory is off (or this is Dify main).
    NodeMemoryNotEnabled,
    /// The execution recorded no prompts.
    NoPrompts,
}

impl std::fmt::Display for EmptyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmptyState::NotAChatflow { app_mode } => write!(
                f,
                "the app is not a chatflow (mode {}): node memory needs a conversation id, \
                 which only chatflow (advanced-chat) apps have",
                app_mode.as_deref().unwrap_or("unknown")
            ),
            EmptyState::NoThreadRuns => f.write_str("no message of the thread ran a workflow"),
            EmptyState::NoMemoryFile { path } => write!(f, "no node memory file at {path}"),
            EmptyState::NoExecution { run_id } => {
                write!(
                    f,
                    "the node has no succeeded execution in the last run {run_id}"
                )
            }
            EmptyState::NodeMemoryNotEnabled => f.write_str(
                "node memory is not enabled: the outputs hold no `context` (Dify main keeps none)",
            ),
            EmptyState::NoPrompts => f.write_str("the execution recorded no prompts"),
        }
    }
}

/// A node's context from one source, at the thread's end.
#[derive(Debug, Clone, Serialize)]
pub struct NodeContext {
    pub node_id: String,
    pub source: ContextSource,
    /// The run the context was read from (design B and prompts).
    pub run_id: Option<String>,
    pub execution_id: Option<String>,
    /// Read from an offloaded upload rather than the row.
    pub offloaded: bool,
    pub messages: Vec<NodeMessage>,
    /// Design A: thread runs the file has no turn for (Dify skips them).
    pub missing_runs: Vec<String>,
    pub empty: Option<EmptyState>,
    pub problems: Vec<NodeProblem>,
}

impl NodeContext {
    fn new(node_id: &str, source: ContextSource) -> Self {
        NodeContext {
            node_id: node_id.to_owned(),
            source,
            run_id: None,
            execution_id: None,
            offloaded: false,
            messages: Vec::new(),
            missing_runs: Vec::new(),
            empty: None,
            problems: Vec::new(),
        }
    }

    fn take(&mut self, parsed: ParsedMessages) {
        self.messages = parsed.messages;
        self.problems.extend(parsed.problems);
    }
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

/// The parsed node memory file, or why there is none.
pub fn parse_memory_read(read: &MemoryFileRead) -> Result<MemoryFile, EmptyOrProblem> {
    match read {
        MemoryFileRead::Missing { path } => Err(EmptyOrProblem::Empty(EmptyState::NoMemoryFile {
            path: path.clone(),
        })),
        MemoryFileRead::Unreadable { problem } => Err(EmptyOrProblem::Problem(problem.clone())),
        MemoryFileRead::Read { path, bytes } => Ok(parse_memory_file(bytes, path)),
    }
}

/// A source with nothing to parse: empty by design, or unreadable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmptyOrProblem {
    Empty(EmptyState),
    Problem(NodeProblem),
}

/// The execution design B reads: the first succeeded one of the run.
fn succeeded(executions: &[ExecutionDocs]) -> Option<&ExecutionDocs> {
    executions.iter().find(|e| e.status == "succeeded")
}

/// A node's context from `source` at the end of `thread`. Pure.
pub fn node_context(
    thread: &NodeThread,
    sources: &NodeSources,
    source: ContextSource,
) -> NodeContext {
    let mut context = NodeContext::new(&sources.node_id, source);
    if !thread.is_chatflow() {
        context.empty = Some(EmptyState::NotAChatflow {
            app_mode: thread.info.app_mode.clone(),
        });
        return context;
    }
    let Some(last) = thread.last_turn() else {
        context.empty = Some(EmptyState::NoThreadRuns);
        return context;
    };
    if source == ContextSource::Files {
        match parse_memory_read(&sources.memory_file) {
            Ok(file) => {
                let what = match &sources.memory_file {
                    MemoryFileRead::Read { path, .. } => path.as_str(),
                    _ => "node memory file",
                };
                context.problems.extend(file.problems.iter().cloned());
                let history = file.history(&thread.turns, what);
                context.messages = history.messages;
                context.missing_runs = history.missing_runs;
                context.problems.extend(history.problems);
            }
            Err(EmptyOrProblem::Empty(empty)) => context.empty = Some(empty),
            Err(EmptyOrProblem::Problem(problem)) => context.problems.push(problem),
        }
        return context;
    }
    context.run_id = Some(last.workflow_run_id.clone());
    context
        .problems
        .extend(thread.dangling_problem(&last.workflow_run_id));
    let execution = match source {
        ContextSource::Outputs => succeeded(&sources.last_run),
        _ => sources.last_run.last(),
    };
    let Some(execution) = execution else {
        context.empty = Some(EmptyState::NoExecution {
            run_id: last.workflow_run_id.clone(),
        });
        return context;
    };
    let parsed = parse_execution(execution);
    context.execution_id = Some(parsed.id);
    context.problems.extend(parsed.problems);
    let (list, offloaded, empty) = match source {
        ContextSource::Prompts => (parsed.prompts, false, EmptyState::NoPrompts),
        _ => (
            parsed.outputs.context,
            parsed.outputs_offloaded,
            EmptyState::NodeMemoryNotEnabled,
        ),
    };
    context.offloaded = offloaded;
    if !list.found && list.problems.is_empty() {
        context.empty = Some(empty);
    }
    context.take(list);
    context
}

/// A node context with its token budget: the same counts, running totals and cut line as a
/// conversation's history.
#[derive(Debug, Clone)]
pub struct NodeContextView {
    pub context: NodeContext,
    pub budget: BudgetView,
}

impl NodeContextView {
    /// Counts the context. Recomputing with another budget or counter recounts only what the
    /// cache has not seen.
    pub fn compute(
        context: NodeContext,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> NodeContextView {
        let budget = BudgetView::for_history(as_history(&context), settings, cache);
        NodeContextView { context, budget }
    }
}

/// The context in the shape budgets are computed over. Each message's source (run id, entry id
/// or list position) is its `source_id`; assistant messages are the answer side, every other
/// role (system, user, tool results) what the model is given.
fn as_history(context: &NodeContext) -> History {
    History {
        window: context.messages.len(),
        rows_given: context.messages.len(),
        thread: Vec::new(),
        popped: None,
        messages: context
            .messages
            .iter()
            .map(|m| HistoryMessage {
                message: m.message.clone(),
                source_id: m.source.clone(),
                side: match m.message.role {
                    Role::Assistant => Side::Answer,
                    Role::System | Role::User | Role::Tool => Side::Query,
                },
            })
            .collect(),
    }
}

/// One turn of a node's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineTurn {
    pub message_id: String,
    pub workflow_run_id: String,
    /// Executions of the node in this run (0: it did not run).
    pub executions: usize,
    pub execution_id: Option<String>,
    pub status: Option<String>,
    /// Messages in `outputs["context"]`, when there is one.
    pub context_messages: Option<usize>,
    /// Messages in `process_data["prompts"]`, when recorded.
    pub prompt_messages: Option<usize>,
    /// Where the node memory file and this run's context disagree.
    pub disagreement: Option<Disagreement>,
    pub problems: Vec<NodeProblem>,
}

impl TimelineTurn {
    /// The context size the sparkline plots: design B's messages, else the prompts sent.
    pub fn size(&self) -> u64 {
        self.context_messages.or(self.prompt_messages).unwrap_or(0) as u64
    }
}

/// A node's executions across the thread's turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timeline {
    pub node_id: String,
    pub turns: Vec<TimelineTurn>,
}

impl Timeline {
    pub fn sizes(&self) -> Vec<u64> {
        self.turns.iter().map(TimelineTurn::size).collect()
    }

    pub fn disagreements(&self) -> impl Iterator<Item = &TimelineTurn> {
        self.turns.iter().filter(|t| t.disagreement.is_some())
    }
}

/// The node's executions in every thread run, offloads followed: a few batched indexed
/// lookups, for a background task.
pub async fn load_timeline(
    store: &Store,
    storage: &ObjectStore,
    thread: &NodeThread,
    node_id: &str,
) -> Result<Vec<ExecutionDocs>, InspectError> {
    let records = store
        .node_executions_in_runs(&thread.run_ids(), node_id)
        .await?;
    Ok(resolve_offloads(storage, records).await)
}

/// The timeline of a node over the thread, comparing each turn with the memory file. Pure.
pub fn timeline(
    thread: &NodeThread,
    node_id: &str,
    memory_file: &MemoryFileRead,
    executions: &[ExecutionDocs],
) -> Timeline {
    let file = parse_memory_read(memory_file).ok();
    let mut by_run: BTreeMap<String, Vec<&ExecutionDocs>> = BTreeMap::new();
    for execution in executions {
        by_run
            .entry(execution.workflow_run_id.to_lowercase())
            .or_default()
            .push(execution);
    }
    let turns = thread
        .turns
        .iter()
        .map(|turn| {
            let runs = by_run
                .get(&turn.workflow_run_id.to_lowercase())
                .map_or(&[][..], Vec::as_slice);
            let chosen = runs
                .iter()
                .find(|e| e.status == "succeeded")
                .or(runs.last())
                .map(|e| parse_execution(e));
            let mut problems: Vec<NodeProblem> = thread
                .dangling_problem(&turn.workflow_run_id)
                .into_iter()
                .collect();
            let outputs_turn = chosen.as_ref().and_then(|parsed| {
                problems.extend(parsed.problems.iter().cloned());
                problems.extend(parsed.outputs.context.problems.iter().cloned());
                problems.extend(parsed.prompts.problems.iter().cloned());
                outputs_turn_text(&parsed.outputs)
            });
            let disagreement = file.as_ref().and_then(|file| {
                compare_turn(file.turn_text(turn).as_ref(), outputs_turn.as_ref())
            });
            TimelineTurn {
                message_id: turn.message_id.clone(),
                workflow_run_id: turn.workflow_run_id.clone(),
                executions: runs.len(),
                execution_id: chosen.as_ref().map(|p| p.id.clone()),
                status: chosen.as_ref().map(|p| p.status.clone()),
                context_messages: chosen
                    .as_ref()
                    .filter(|p| p.outputs.context.found)
                    .map(|p| p.outputs.context.messages.len()),
                prompt_messages: chosen
                    .as_ref()
                    .filter(|p| p.prompts.found)
                    .map(|p| p.prompts.messages.len()),
                disagreement,
                problems,
            }
        })
        .collect();
    Timeline {
        node_id: node_id.to_owned(),
        turns,
    }
}

/// Eight-level bars for a sequence of sizes, scaled to the largest.
pub fn sparkline(sizes: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = sizes.iter().copied().max().unwrap_or(0);
    sizes
        .iter()
        .map(|&size| match max {
            0 => BARS[0],
            _ => BARS[(u128::from(size) * 7).div_ceil(u128::from(max)) as usize],
        })
        .collect()
}

/// The size of a node's newest context on the thread, for the nodes pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LatestContext {
    /// `outputs`, or `prompts` where the node keeps no context.
    pub source: ContextSource,
    pub messages: usize,
    pub tokens: u64,
}

/// Each node's executions in its latest thread run: one indexed lookup per node, then every
/// offloaded output of all nodes read at once.
pub async fn load_latest_executions(
    store: &Store,
    storage: &ObjectStore,
    nodes: &[NodeSummary],
) -> Result<BTreeMap<String, Vec<ExecutionDocs>>, InspectError> {
    let mut records = Vec::new();
    let mut counts = Vec::new();
    for node in nodes {
        let Some(run_id) = &node.latest_run else {
            continue;
        };
        let found = store.node_executions_in_run(run_id, &node.node_id).await?;
        counts.push((node.node_id.clone(), found.len()));
        records.extend(found);
    }
    let mut docs = resolve_offloads(storage, records).await.into_iter();
    Ok(counts
        .into_iter()
        .map(|(node_id, count)| (node_id, docs.by_ref().take(count).collect()))
        .collect())
}

/// Counts a node's latest context: design B's when the node keeps one, else what it sent.
pub fn latest_context(
    executions: &[ExecutionDocs],
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> Option<LatestContext> {
    let parsed = parse_execution(succeeded(executions).or(executions.last())?);
    let (source, list) = if parsed.outputs.context.found {
        (ContextSource::Outputs, parsed.outputs.context)
    } else if parsed.prompts.found {
        (ContextSource::Prompts, parsed.prompts)
    } else {
        return None;
    };
    let messages = list.prompt_messages();
    Some(LatestContext {
        source,
        messages: messages.len(),
        tokens: cache.count_list(&settings.counter, &messages),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDateTime;
    use serde_json::json;

    fn info(app_mode: &str) -> ConversationInfo {
        ConversationInfo {
            id: "c".into(),
            name: "conversation".into(),
            mode: app_mode.into(),
            status: "normal".into(),
            from_source: "api".into(),
            dialogue_count: 0,
            app_id: "a".into(),
            app_name: None,
            app_mode: Some(app_mode.into()),
            memory_window: None,
            created_at: NaiveDateTime::default(),
            updated_at: NaiveDateTime::default(),
            is_deleted: false,
            answered_rows_only: false,
        }
    }

    fn turn(n: usize) -> ThreadTurn {
        ThreadTurn {
            message_id: format!("m{n}"),
            workflow_run_id: format!("run-{n}"),
        }
    }

    fn thread(turns: usize) -> NodeThread {
        NodeThread {
            info: info(CHATFLOW_MODE),
            leaf: None,
            turns: (1..=turns).map(turn).collect(),
            dangling: Vec::new(),
        }
    }

    fn docs(run: usize, status: &str, outputs: serde_json::Value) -> ExecutionDocs {
        ExecutionDocs {
            id: format!("e{run}-{status}"),
            workflow_run_id: format!("run-{run}"),
            status: status.into(),
            outputs: FullColumn {
                text: Some(outputs.to_string()),
                ..FullColumn::default()
            },
            process_data: FullColumn {
                text: Some(
                    json!({"prompts": [{"role": "system", "text": "s"}, {"role": "user", "text": "q"}]})
                        .to_string(),
                ),
                ..FullColumn::default()
            },
        }
    }

    fn outputs(user: &str, reply: &str) -> serde_json::Value {
        json!({"text": reply, "context": [
            {"role": "user", "content": user},
            {"role": "assistant", "content": reply},
        ]})
    }

    fn sources(memory_file: MemoryFileRead, last_run: Vec<ExecutionDocs>) -> NodeSources {
        NodeSources {
            node_id: "llm".into(),
            memory_file,
            last_run,
        }
    }

    fn missing_file() -> MemoryFileRead {
        MemoryFileRead::Missing {
            path: "node_memory/a/c/llm.json".into(),
        }
    }

    fn file(value: serde_json::Value) -> MemoryFileRead {
        MemoryFileRead::Read {
            path: "llm.json".into(),
            bytes: value.to_string().into_bytes(),
        }
    }

    #[test]
    fn sources_cycle() {
        let mut source = ContextSource::default();
        let seen: Vec<ContextSource> = (0..3)
            .map(|_| {
                source = source.next();
                source
            })
            .collect();
        assert_eq!(
            seen,
            [
                ContextSource::Prompts,
                ContextSource::Files,
                ContextSource::Outputs
            ]
        );
    }

    #[test]
    fn every_source_has_an_empty_state() {
        let mut chat = thread(1);
        chat.info = info("chat");
        let nothing = sources(missing_file(), Vec::new());
        for source in ContextSource::ALL {
            let context = node_context(&chat, &nothing, source);
            assert!(matches!(
                context.empty,
                Some(EmptyState::NotAChatflow { .. })
            ));
            let context = node_context(&thread(0), &nothing, source);
            assert_eq!(context.empty, Some(EmptyState::NoThreadRuns));
        }
        let files = node_context(&thread(1), &nothing, ContextSource::Files);
        assert!(matches!(files.empty, Some(EmptyState::NoMemoryFile { .. })));
        let outputs = node_context(&thread(1), &nothing, ContextSource::Outputs);
        assert_eq!(
            outputs.empty,
            Some(EmptyState::NoExecution {
                run_id: "run-1".into()
            })
        );
        let main_branch = sources(
            missing_file(),
            vec![docs(1, "succeeded", json!({"text": "hi"}))],
        );
        let outputs = node_context(&thread(1), &main_branch, ContextSource::Outputs);
        assert_eq!(outputs.empty, Some(EmptyState::NodeMemoryNotEnabled));
        let prompts = node_context(&thread(1), &main_branch, ContextSource::Prompts);
        assert_eq!(prompts.empty, None);
        assert_eq!(prompts.messages[0].message.role, Role::System);
    }

    #[test]
    fn design_b_reads_the_succeeded_execution_and_flags_a_dangling_run() {
        let mut thread = thread(2);
        thread.dangling.push(turn(2));
        let executions = vec![
            docs(2, "failed", json!({"text": "boom"})),
            docs(2, "succeeded", outputs("q2", "a2")),
        ];
        let context = node_context(
            &thread,
            &sources(missing_file(), executions),
            ContextSource::Outputs,
        );
        assert_eq!(context.execution_id.as_deref(), Some("e2-succeeded"));
        assert_eq!(context.messages.len(), 2);
        assert!(
            matches!(&context.problems[..], [NodeProblem::DanglingRun { run_id, .. }] if run_id == "run-2")
        );
    }

    #[test]
    fn unreadable_items_leave_the_rest_of_the_context() {
        let broken = json!({"context": [
            {"role": "user", "content": "q"},
            {"role": "narrator", "content": "?"},
        ]});
        let context = node_context(
            &thread(1),
            &sources(missing_file(), vec![docs(1, "succeeded", broken)]),
            ContextSource::Outputs,
        );
        assert_eq!(context.messages.len(), 1);
        assert!(matches!(
            &context.problems[..],
            [NodeProblem::UnknownRole { .. }]
        ));
        assert_eq!(context.empty, None);
    }

    #[test]
    fn offload_problems_are_kept_with_the_row_copy() {
        let mut execution = docs(1, "succeeded", outputs("q", "a"));
        execution.outputs.problem = Some(NodeProblem::MissingOffloadFile {
            execution_id: "e1".into(),
            column: "outputs".into(),
            file_id: "f".into(),
            location: "no upload_files row".into(),
        });
        let context = node_context(
            &thread(1),
            &sources(missing_file(), vec![execution]),
            ContextSource::Outputs,
        );
        assert_eq!(context.messages.len(), 2);
        assert!(!context.offloaded);
        assert!(
            context.problems[0]
                .to_string()
                .contains("no upload_files row")
        );
    }

    #[test]
    fn the_timeline_compares_each_turn_with_the_file() {
        let memory = file(json!({"version": 1, "turns": {
            "run-1": {"user_content": "q1", "assistant_content": "a1"},
            "run-2": {"user_content": "q2", "assistant_content": "draft"},
            "run-4": {"user_content": "q4", "assistant_content": "a4"},
        }}));
        let executions = vec![
            docs(1, "succeeded", outputs("q1", "a1")),
            docs(2, "succeeded", outputs("q2", "final")),
            docs(3, "succeeded", outputs("q3", "a3")),
        ];
        let built = timeline(&thread(4), "llm", &memory, &executions);
        let flags: Vec<Option<Disagreement>> =
            built.turns.iter().map(|t| t.disagreement.clone()).collect();
        assert_eq!(flags[0], None);
        assert!(matches!(
            flags[1],
            Some(Disagreement::DifferentAssistant { .. })
        ));
        assert_eq!(flags[2], Some(Disagreement::MissingInFile));
        assert_eq!(flags[3], Some(Disagreement::MissingInOutputs));
        assert_eq!(built.sizes(), [2, 2, 2, 0]);
        assert_eq!(built.turns[3].executions, 0);
        assert_eq!(built.turns[3].status, None);
        // Without a file there is nothing to disagree with.
        let alone = timeline(&thread(4), "llm", &missing_file(), &executions);
        assert_eq!(alone.disagreements().count(), 0);
    }

    fn brief(run: usize, node_id: &str, second: i64) -> NodeExecutionBrief {
        NodeExecutionBrief {
            id: format!("{node_id}-{run}"),
            workflow_run_id: format!("run-{run}"),
            node_id: node_id.into(),
            node_type: "llm".into(),
            title: node_id.to_uppercase(),
            status: "succeeded".into(),
            index: 1,
            created_at: NaiveDateTime::default() + chrono::TimeDelta::seconds(second),
        }
    }

    #[test]
    fn nodes_are_listed_in_first_run_order_with_their_latest_thread_run() {
        // Run 9 is a regenerated sibling, not on the thread of runs 1 and 2.
        let executions = [
            brief(1, "writer", 1),
            brief(1, "researcher", 0),
            brief(2, "researcher", 5),
            brief(9, "researcher", 9),
            brief(9, "writer", 9),
        ];
        let nodes = summarize_nodes(&thread(2), &executions);
        let rows: Vec<(&str, usize, usize, Option<&str>)> = nodes
            .iter()
            .map(|n| {
                (
                    n.node_id.as_str(),
                    n.executions,
                    n.on_thread,
                    n.latest_run.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("writer", 2, 1, Some("run-1")),
                ("researcher", 3, 2, Some("run-2")),
            ]
        );
    }

    #[test]
    fn node_ids_that_leave_the_directory_are_not_file_names() {
        assert!(is_plain_name("1733817600001"));
        assert!(is_plain_name("llm.v2"));
        for bad in ["", "..", "../x", "a/b", "a\\b"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn sparkline_scales_to_the_largest_size() {
        assert_eq!(sparkline(&[]), "");
        assert_eq!(sparkline(&[0, 0]), "▁▁");
        assert_eq!(sparkline(&[0, 1, 2, 4, 8]), "▁▂▃▅█");
        assert_eq!(sparkline(&[u64::MAX, 1]), "█▂");
    }

    #[test]
    fn budgets_count_node_contexts_like_histories() {
        let context = node_context(
            &thread(1),
            &sources(
                missing_file(),
                vec![docs(1, "succeeded", outputs(&"long ".repeat(300), "a"))],
            ),
            ContextSource::Outputs,
        );
        let settings = BudgetSettings {
            counter: crate::memory::tokens::TokenCounter::for_model(
                crate::memory::tokens::CounterKind::OpenAi,
                "gpt-4o",
            ),
            max_tokens: 50,
            model: "gpt-4o".into(),
            options: crate::memory::history::HistoryOptions::default(),
        };
        let view = NodeContextView::compute(context, &settings, &mut CountCache::default());
        assert_eq!(view.budget.dropped(), 1, "the long user message is cut");
        let lines = view.budget.lines();
        assert_eq!(lines[0].source_id, "context[0]");
        assert_eq!((lines[0].side, lines[1].side), (Side::Query, Side::Answer));
    }
}

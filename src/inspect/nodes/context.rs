//! A node's context from one source at the thread's end (design A's file, design B's
//! `outputs["context"]`, or the prompts it sent), why it may be empty, and its token budget.
//! Pure: everything is computed from what [`super::sources`] loaded.

use serde::Serialize;

use super::sources::{MemoryFileRead, NodeSources};
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::{History, HistoryMessage, Side};
use crate::memory::model::Role;
use crate::memory::node_context::{
    MemoryFile, NodeMessage, NodeProblem, ParsedMessages, parse_memory_file,
};
use crate::memory::tokens::CountCache;
use crate::sources::node_context::{ExecutionDocs, NodeThread, parse_execution};

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
pub(super) fn succeeded(executions: &[ExecutionDocs]) -> Option<&ExecutionDocs> {
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
        .extend(thread.run_problem(&last.workflow_run_id));
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
        paused: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::inspect::nodes::fixtures::{
        docs, info, missing_file, outputs, sources, thread, turn,
    };
    use crate::sources::node_context::CHATFLOW_MODE;

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
    fn a_run_dify_archived_reads_as_archived_not_dangling() {
        let mut thread = thread(2);
        thread.archived.push(turn(2));
        let context = node_context(
            &thread,
            &sources(missing_file(), Vec::new()),
            ContextSource::Outputs,
        );
        assert!(
            matches!(&context.problems[..], [NodeProblem::ArchivedRun { run_id, .. }] if run_id == "run-2"),
            "{:?}",
            context.problems
        );
        assert!(context.problems[0].to_string().contains("archived"));
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
            context_window: crate::memory::context_windows::ContextWindow::Exact(128_000),
            options: crate::memory::history::HistoryOptions::default(),
        };
        let view = NodeContextView::compute(context, &settings, &mut CountCache::default());
        assert_eq!(view.budget.dropped(), 1, "the long user message is cut");
        let lines = view.budget.lines();
        assert_eq!(lines[0].source_id, "context[0]");
        assert_eq!((lines[0].side, lines[1].side), (Side::Query, Side::Answer));
    }

    #[test]
    fn the_apps_mode_decides_and_a_turns_recorded_mode_stands_in_for_a_deleted_app() {
        let mut chatflow = thread(2);
        assert!(chatflow.is_chatflow());
        // The app's row is gone (the conversation list's join found none).
        chatflow.info.app_mode = None;
        assert!(!chatflow.is_chatflow(), "no mode recorded anywhere");
        chatflow.turns[1].app_mode = Some(CHATFLOW_MODE.to_owned());
        assert!(chatflow.is_chatflow());
        // The newest turn's record counts, and the app's own mode wins over it.
        chatflow.turns[1].app_mode = Some("chat".to_owned());
        chatflow.turns[0].app_mode = Some(CHATFLOW_MODE.to_owned());
        assert!(!chatflow.is_chatflow());
        chatflow.info.app_mode = Some(CHATFLOW_MODE.to_owned());
        assert!(chatflow.is_chatflow());
    }
}

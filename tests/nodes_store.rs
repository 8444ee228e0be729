//! Node contexts over the demo chatflow, on SQLite and PostgreSQL: the nodes pane, each source,
//! the offloaded output, the A/B disagreement, bad input and `doctor`.

#[macro_use]
mod common;

use std::path::Path;

use memscope::demo::{Demo, DemoOptions, DemoSummary, Scale};
use memscope::inspect::doctor::{self, DoctorSettings};
use memscope::inspect::nodes::{
    ContextSource, EmptyState, NodeContextView, NodeThread, load_conversation_executions,
    load_node_sources, load_thread, load_timeline, node_context, summarize_nodes, timeline,
};
use memscope::memory::budget_view::BudgetSettings;
use memscope::memory::history::{HistoryOptions, PopRule};
use memscope::memory::model::Role;
use memscope::memory::node_context::{Disagreement, NodeProblem};
use memscope::memory::thread::ExtractionMode;
use memscope::memory::tokens::{CountCache, CounterKind, TokenCounter};
use memscope::sources::dify::queries::ConversationFilter;
use memscope::sources::doctor::DEFAULT_KEEP_LAST;
use memscope::storage::{ObjectStore, StorageBackend};
use memscope::store::Store;

const RESEARCHER: &str = "1733817600001";
const WRITER: &str = "1733817600002";

struct DemoDb {
    store: Store,
    storage: tempfile::TempDir,
    summary: DemoSummary,
}

impl DemoDb {
    fn story(&self, title: &str) -> &str {
        &self
            .summary
            .stories
            .iter()
            .find(|s| s.title == title)
            .unwrap_or_else(|| panic!("no story {title}"))
            .id
    }

    fn root(&self) -> &Path {
        self.storage.path()
    }

    /// The demo's storage directory, read through the object-storage layer.
    fn objects(&self) -> ObjectStore {
        ObjectStore::open(&StorageBackend::Fs {
            root: self.root().to_path_buf(),
        })
        .expect("local storage")
    }

    async fn thread(&self, title: &str, leaf: Option<&str>) -> NodeThread {
        load_thread(
            &self.store,
            self.story(title),
            leaf,
            ExtractionMode::Dify,
            PopRule::default(),
        )
        .await
        .expect("thread")
    }

    async fn context(
        &self,
        thread: &NodeThread,
        node: &str,
        source: ContextSource,
    ) -> memscope::inspect::nodes::NodeContext {
        let sources = load_node_sources(&self.store, &self.objects(), thread, node)
            .await
            .expect("sources");
        node_context(thread, &sources, source)
    }
}

async fn demo_db(db: &common::TestDb) -> DemoDb {
    let storage = tempfile::tempdir().expect("storage");
    let store = Store::init(db.url()).await.expect("init");
    let options = DemoOptions {
        scale: Scale::Small,
        seed: 42,
        storage_root: storage.path().to_path_buf(),
        kb_root: storage.path().join("kb"),
    };
    let mut demo = Demo::new(&options);
    for batch in demo.by_ref() {
        store
            .insert_batch(&batch.expect("demo batch"))
            .await
            .expect("insert");
    }
    DemoDb {
        store,
        storage,
        summary: demo.into_summary(),
    }
}

const KYOTO: &str = "Chatflow node memory";
const PACKING: &str = "Orphaned workflow run";

db_tests! {
    async fn the_nodes_pane_lists_every_node_that_ran(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        assert_eq!(thread.turns.len(), 4, "turn 3 was regenerated away");
        assert!(thread.dangling.is_empty());
        let executions = load_conversation_executions(&demo.store, &thread.info.id)
            .await
            .expect("executions");
        let nodes = summarize_nodes(&thread, &executions);
        let listed: Vec<(&str, &str, usize, usize)> = nodes
            .iter()
            .map(|n| (n.node_id.as_str(), n.node_type.as_str(), n.executions, n.on_thread))
            .collect();
        assert_eq!(
            listed,
            [
                ("1733817600000", "start", 5, 4),
                (RESEARCHER, "llm", 5, 4),
                (WRITER, "llm", 5, 4),
                ("answer", "answer", 5, 4),
            ]
        );
        let last_run = &thread.turns[3].workflow_run_id;
        assert!(nodes.iter().all(|n| n.latest_run.as_ref() == Some(last_run)));
    }

    async fn design_b_reads_the_offloaded_context(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        let context = demo.context(&thread, RESEARCHER, ContextSource::Outputs).await;
        assert_eq!(context.execution_id.as_deref(), Some(demo.story("Offloaded node outputs")));
        assert!(context.offloaded);
        assert!(context.problems.is_empty(), "{:?}", context.problems);
        assert_eq!(context.messages.len(), 10);
        assert!(context.messages.iter().all(|m| m.message.role != Role::System));
        let regenerated_away = context
            .messages
            .iter()
            .any(|m| m.message.content.text().contains("Shigetsu"));
        assert!(!regenerated_away, "the regenerated sibling is not in the thread's context");

        let settings = BudgetSettings {
            counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
            max_tokens: 500,
            model: "gpt-4o".into(),
            context_window: memscope::memory::context_windows::ContextWindow::Exact(128_000),
            options: HistoryOptions::default(),
        };
        let view = NodeContextView::compute(context, &settings, &mut CountCache::default());
        assert!(view.budget.dropped() > 0, "the dossier pushes older turns past the cut line");
        assert_eq!(view.budget.lines().len(), 10);
    }

    async fn a_missing_offload_file_is_an_error_and_the_row_still_shows(db) {
        let demo = demo_db(&db).await;
        std::fs::remove_dir_all(demo.root().join("upload_files")).expect("remove uploads");
        let thread = demo.thread(KYOTO, None).await;
        let context = demo.context(&thread, RESEARCHER, ContextSource::Outputs).await;
        assert!(!context.offloaded);
        assert!(
            matches!(&context.problems[..], [NodeProblem::MissingOffloadFile { column, .. }] if column == "outputs"),
            "{:?}",
            context.problems
        );
        assert_eq!(context.messages.len(), 2, "the row's truncated context");
    }

    async fn design_a_follows_the_thread_in_both_file_shapes(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        for node in [RESEARCHER, WRITER] {
            let context = demo.context(&thread, node, ContextSource::Files).await;
            assert!(context.problems.is_empty(), "{node}: {:?}", context.problems);
            assert!(context.missing_runs.is_empty());
            assert_eq!(context.messages.len(), 8, "{node}: two per thread turn");
            assert!(context
                .messages
                .iter()
                .all(|m| !m.message.content.text().contains("Shigetsu")));
        }
        let researcher = demo.context(&thread, RESEARCHER, ContextSource::Files).await;
        assert_eq!(
            researcher.messages[3].message.content.text(),
            "Nara is about an hour away by bus; worth a half-day trip.",
            "design A keeps the stale draft"
        );
    }

    async fn prompts_show_the_system_prompt(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        let context = demo.context(&thread, WRITER, ContextSource::Prompts).await;
        assert!(context.problems.is_empty(), "{:?}", context.problems);
        assert_eq!(context.messages[0].message.role, Role::System);
        assert!(context.messages[0].message.content.text().contains("travel plans"));
        assert_eq!(context.messages.last().map(|m| m.message.role), Some(Role::User));
    }

    async fn the_timeline_flags_the_disagreement_and_grows(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        let sources = load_node_sources(&demo.store, &demo.objects(), &thread, RESEARCHER)
            .await
            .expect("sources");
        let executions = load_timeline(&demo.store, &demo.objects(), &thread, RESEARCHER)
            .await
            .expect("timeline");
        let researcher = timeline(&thread, RESEARCHER, &sources.memory_file, &executions);
        assert_eq!(researcher.sizes(), [2, 6, 8, 10]);
        let flagged: Vec<_> = researcher.disagreements().collect();
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].workflow_run_id, thread.turns[1].workflow_run_id);
        assert!(matches!(
            flagged[0].disagreement,
            Some(Disagreement::DifferentAssistant { .. })
        ));

        let sources = load_node_sources(&demo.store, &demo.objects(), &thread, WRITER)
            .await
            .expect("sources");
        let executions = load_timeline(&demo.store, &demo.objects(), &thread, WRITER)
            .await
            .expect("timeline");
        let writer = timeline(&thread, WRITER, &sources.memory_file, &executions);
        assert_eq!(writer.disagreements().count(), 0);
    }

    async fn invalid_outputs_are_a_per_item_error(db) {
        let demo = demo_db(&db).await;
        let newest = demo.thread(KYOTO, None).await;
        // Turn 3's original answer, regenerated away: its writer outputs are cut off.
        let all = demo.store.all_messages(&newest.info.id).await.expect("messages");
        let sibling = all
            .iter()
            .find(|m| {
                m.parent_message_id.as_deref() == Some(newest.turns[1].message_id.as_str())
                    && m.id != newest.turns[2].message_id
            })
            .expect("regenerated sibling");
        let thread = demo.thread(KYOTO, Some(&sibling.id)).await;
        assert_eq!(thread.turns.len(), 3);
        let context = demo.context(&thread, WRITER, ContextSource::Outputs).await;
        assert_eq!(context.execution_id.as_deref(), Some(demo.story("Invalid outputs JSON")));
        assert!(matches!(&context.problems[..], [NodeProblem::NotJson { .. }]));
        assert!(context.messages.is_empty());
        let prompts = demo.context(&thread, WRITER, ContextSource::Prompts).await;
        assert_eq!(prompts.messages.len(), 6, "the prompts of the same execution still read");
    }

    async fn an_orphaned_run_says_where_it_points(db) {
        let demo = demo_db(&db).await;
        let message = demo.story(PACKING).to_owned();
        let packing = demo
            .store
            .list_conversations(&ConversationFilter {
                search: Some("Packing list".into()),
                ..Default::default()
            })
            .await
            .expect("list");
        let thread = load_thread(&demo.store, &packing[0].id, Some(&message), ExtractionMode::Dify, PopRule::default())
            .await
            .expect("thread");
        assert_eq!(thread.dangling.len(), 1);
        let context = demo.context(&thread, RESEARCHER, ContextSource::Outputs).await;
        assert!(matches!(context.empty, Some(EmptyState::NoExecution { .. })));
        assert!(matches!(&context.problems[..], [NodeProblem::DanglingRun { message_id, .. }] if *message_id == message));
    }

    async fn a_chat_app_has_no_node_memory(db) {
        let demo = demo_db(&db).await;
        let chat = demo
            .store
            .list_conversations(&Default::default())
            .await
            .expect("list")
            .into_iter()
            .find(|c| c.app_mode.as_deref() == Some("chat"))
            .expect("a chat conversation");
        let thread = load_thread(&demo.store, &chat.id, None, ExtractionMode::Dify, PopRule::default())
            .await
            .expect("thread");
        for source in ContextSource::ALL {
            let context = demo.context(&thread, RESEARCHER, source).await;
            assert!(matches!(context.empty, Some(EmptyState::NotAChatflow { .. })));
            assert!(context.empty.as_ref().is_some_and(|e| e.to_string().contains("conversation id")));
        }
    }

    async fn doctor_reports_node_context_problems(db) {
        let demo = demo_db(&db).await;
        let thread = demo.thread(KYOTO, None).await;
        let file = demo.root().join(memscope::sources::dify::node_contexts::memory_file_key(&thread.info, RESEARCHER));
        std::fs::write(&file, b"{\"version\": 1, \"turns\": {\"r\": 7}}").expect("corrupt file");
        std::fs::remove_dir_all(demo.root().join("upload_files")).expect("remove uploads");
        let settings = DoctorSettings {
            counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
            budget: 1_000_000,
            storage: Some(demo.objects()),
            keep_last: DEFAULT_KEEP_LAST,
            options: Default::default(),
        };
        let report = doctor::run(&demo.store, &settings).await.expect("doctor");
        // Each node-context finding's problem, as its JSON gives it.
        let problems: Vec<serde_json::Value> = report
            .findings
            .iter()
            .filter(|f| f.kind() == "node_context")
            .map(|f| serde_json::to_value(f).expect("a finding is JSON")["extra"]["problem"].clone())
            .collect();
        assert!(problems.iter().any(|p| p["problem"] == "bad_turn" && p["run_id"] == "r"), "{problems:?}");
        assert!(problems.iter().any(|p| p["problem"] == "missing_offload_file"), "{problems:?}");
        assert_eq!(problems.len(), 2, "the cut-off outputs are an unreadable_json finding only: {problems:?}");
    }
}

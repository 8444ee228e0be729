//! The job runner: carries effects out on tokio tasks and reports every result on one channel.
//! Every job starts through [`Tasks`] (`slot.rs`): a load takes its kind's slot and stops the
//! previous one, and reports stamped with its request's generation; a write runs to its end.
//! The core drops a report another request overtook (`update/loads.rs`), so the latest wins.

mod chat_memories;
mod checkpoints;
mod doctor;
mod export;
mod memory_bases;
mod session;
mod slot;

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;

use self::slot::{LoadReply, Slot, Tasks, report, with_cache};
use super::state::{Loaded, NodeRow};
use super::update::opened_database::{OpenedDatabase, syncs_here};
use super::update::{Effect, JobEvent, Load, LoadReport, LoadedNodes, Stamped};
use crate::inspect::InspectError;
use crate::inspect::listing::{list_conversations, list_scans};
use crate::inspect::nodes::{
    ExecutionDocs, NodeContextView, NodeSummary, NodeThread, Timeline, latest_context,
    load_conversation_executions, load_latest_executions, load_node_sources, load_thread,
    load_timeline, node_context, summarize_nodes, timeline,
};
use crate::inspect::search_match::conversation_snippet;
use crate::inspect::turn_trees::turn_trees;
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::{PopRule, assemble_history};
use crate::memory::thread::ExtractionMode;
use crate::memory::tokens::{CountCache, Encoding, preload};
use crate::sources::conversation::{ListQuery, ListedPage};
use crate::storage::ObjectStore;
use crate::store::{Access, Store};
use crate::summarize::Summarizer;
use crate::sync::MbSettings;

/// Characters of a row's message text shown around the filter's hit (the list cuts it to fit).
const SNIPPET_WIDTH: usize = 160;

/// The doctor of `store`, reading Dify's files from `storage` where it holds them.
fn doctor_runner(
    store: &Arc<Store>,
    storage: &ObjectStore,
    storage_configured: bool,
    events: &UnboundedSender<JobEvent>,
) -> doctor::DoctorRunner {
    let reads_files = storage_configured || store.created_by_memscope();
    doctor::DoctorRunner::new(
        store.clone(),
        reads_files.then(|| storage.clone()),
        events.clone(),
    )
}

/// Runs effects against a store, sharing one token count cache between jobs.
pub struct JobRunner {
    store: Arc<Store>,
    /// Where Dify's files are: node memory files and offloaded outputs.
    storage: ObjectStore,
    cache: Arc<Mutex<CountCache>>,
    tasks: Tasks,
    memory_bases: memory_bases::MbRunner,
    doctor: doctor::DoctorRunner,
    /// Writes trim summaries (`[summarizer]` of the config).
    summarizer: Arc<Summarizer>,
    /// memscope's data directory, where prunes archive the rows they delete.
    data_dir: PathBuf,
    /// How `:open` opens another database: as the first was (`--write` or not).
    access: Access,
    /// Whether Dify's storage is configured: doctor then reads every database's files, and
    /// otherwise only those of a database memscope made (in its own directory).
    storage_configured: bool,
    /// The memory-base settings, for the runner of another database's memory bases.
    syncers: MbSettings,
    /// Whether the app asked for the memory-base watcher (started where the database allows).
    watch: bool,
    events: UnboundedSender<JobEvent>,
}

impl JobRunner {
    pub fn new(
        store: Store,
        storage: ObjectStore,
        storage_configured: bool,
        syncers: MbSettings,
        data_dir: PathBuf,
        events: UnboundedSender<JobEvent>,
    ) -> JobRunner {
        let store = Arc::new(store);
        JobRunner {
            memory_bases: memory_bases::MbRunner::new(
                store.clone(),
                syncers.clone(),
                events.clone(),
            ),
            doctor: doctor_runner(&store, &storage, storage_configured, &events),
            store,
            storage,
            cache: Arc::new(Mutex::new(CountCache::new(CountCache::DEFAULT_CAPACITY))),
            tasks: Tasks::new(events.clone()),
            summarizer: Arc::new(Summarizer::Extractive),
            data_dir,
            access: Access::Auto,
            storage_configured,
            syncers,
            watch: false,
            events,
        }
    }

    /// `--write` was given: `:open` opens other databases writable too.
    pub fn set_access(&mut self, access: Access) {
        self.access = access;
    }

    pub fn set_summarizer(&mut self, summarizer: Summarizer) {
        self.summarizer = Arc::new(summarizer);
    }

    /// Builds a tokenizer off the UI thread, so the first budget does not wait for it.
    pub fn preload(&self, encoding: Encoding) {
        tokio::task::spawn_blocking(move || preload(encoding));
    }

    /// Starts the memory-base watcher, as `memscope watch` runs it, unless the database is
    /// read-only or one whose syncs memscope leaves to Langflow; `false` when it did not start.
    /// A database `:open` opens later gets one on the same terms.
    pub fn start_watcher(&mut self) -> bool {
        self.watch = true;
        if self.store.is_read_only() || !syncs_here(&self.store) {
            return false;
        }
        self.memory_bases.start_watcher();
        true
    }

    /// Runs every job from now on against `database`. What runs on the one before stops: its
    /// loads, its doctor scan, and its syncs and watcher (each rolls back at its next check).
    fn switch_to(&mut self, database: Box<OpenedDatabase>) {
        self.tasks.stop_loads();
        self.doctor.cancel();
        let store = Arc::new(database.store);
        let events = self.events.clone();
        let memory_bases =
            memory_bases::MbRunner::new(store.clone(), self.syncers.clone(), events.clone());
        let mut before = std::mem::replace(&mut self.memory_bases, memory_bases);
        tokio::spawn(async move { before.shutdown().await });
        self.doctor = doctor_runner(&store, &self.storage, self.storage_configured, &events);
        self.store = store;
        if self.watch {
            self.start_watcher();
        }
    }

    /// Stops the watcher and running syncs, giving them a moment to roll back.
    /// Stops every job, then closes the database: the TUI leaves no side file of a read
    /// behind, however quickly the process exits after it.
    pub async fn shutdown(&mut self) {
        self.memory_bases.shutdown().await;
        self.doctor.cancel();
        self.tasks.shutdown().await;
        self.store.close().await;
    }

    pub fn run(&mut self, effect: Effect) {
        match effect {
            Effect::Load(Stamped { generation, value }) => self.load(generation, value),
            Effect::MemoryBases(effect) => self.memory_bases.run(effect),
            Effect::StopDoctor => self.doctor.cancel(),
            Effect::Checkpoints(write) => {
                checkpoints::write(&mut self.tasks, self.store.clone(), write)
            }
            Effect::SessionTrim(write) => {
                let data_dir = self.data_dir.clone();
                session::write_trim(&mut self.tasks, self.store.clone(), data_dir, write)
            }
            Effect::CopyToClipboard(text) => copy_to_clipboard(&text),
            Effect::SwitchDatabase(database) => self.switch_to(database),
            Effect::ChatMemory(effect) => {
                let store = self.store.clone();
                let summarizer = self.summarizer.clone();
                chat_memories::write(&mut self.tasks, store, summarizer, effect)
            }
            // Dropping the task's future stops its query (see `sources/dify/queries/search.rs`).
            Effect::StopList => self.tasks.stop(Slot::List),
            Effect::PollNewest { id } => {
                let store = self.store.clone();
                let reply = self.tasks.reply();
                self.tasks.poll(async move {
                    match store.history_messages(&id, 1).await {
                        Ok(rows) => {
                            let newest = rows.into_iter().next().map(|m| m.id);
                            reply.send(JobEvent::Newest { id, newest });
                        }
                        Err(error) => {
                            report(error);
                        }
                    }
                })
            }
        }
    }

    /// Starts the load requested as `generation` in its kind's slot.
    fn load(&mut self, generation: u64, load: Load) {
        let store = self.store.clone();
        let cache = self.cache.clone();
        let storage = self.storage.clone();
        match load {
            Load::MemoryBases(load) => self.memory_bases.load(generation, load),
            Load::Doctor(scan) => self.doctor.run(generation, scan),
            Load::Sessions(load) => session::load(&mut self.tasks, generation, store, cache, load),
            Load::Checkpoints(load) => checkpoints::load(&mut self.tasks, generation, store, load),
            Load::PrunePlan { threads, keep_last } => {
                let data_dir = self.data_dir.clone();
                let request = checkpoints::prune_request(threads, keep_last);
                checkpoints::plan_prune(&mut self.tasks, generation, store, data_dir, request)
            }
            Load::Export {
                key,
                leaf,
                budget,
                message_limit,
            } => {
                let data_dir = self.data_dir.clone();
                let job = export::ExportJob {
                    key,
                    leaf,
                    budget,
                    message_limit,
                };
                export::export(&mut self.tasks, generation, store, storage, data_dir, job)
            }
            Load::Undo { thread_id } => {
                let data_dir = self.data_dir.clone();
                checkpoints::plan_undo(&mut self.tasks, generation, store, data_dir, thread_id)
            }
            Load::ChatMemory(load) => {
                let summarizer = self.summarizer.clone();
                chat_memories::load(&mut self.tasks, generation, store, cache, summarizer, load)
            }
            Load::Database { url } => {
                let access = self.access;
                self.tasks
                    .load(Slot::Database, generation, |reply| async move {
                        let opened = Store::open(&url, access).await;
                        reply.send(LoadReport::Database(
                            opened
                                .map(|store| Box::new(OpenedDatabase::of(store)))
                                .map_err(report),
                        ));
                    })
            }
            Load::Snippet {
                key,
                search,
                settings,
            } => self
                .tasks
                .load(Slot::Snippet, generation, |reply| async move {
                    let result =
                        conversation_snippet(&store, &key, &search, SNIPPET_WIDTH, &settings)
                            .await
                            .map_err(report);
                    reply.send(LoadReport::Snippet { key, result });
                }),
            Load::List(query) => self.tasks.load(Slot::List, generation, |reply| async move {
                let result = list(&store, &reply, &query).await;
                reply.send(LoadReport::List(result));
            }),
            Load::CountThreads {
                ids,
                settings,
                message_limit,
            } => self
                .tasks
                .load(Slot::ThreadTokens, generation, |reply| async move {
                    let counted = count_threads(&store, cache, &ids, settings, message_limit).await;
                    if let Some(tokens) = counted {
                        reply.send(LoadReport::ThreadTokens(tokens));
                    }
                }),
            Load::Conversation { id, message_limit } => {
                self.tasks
                    .load(Slot::Conversation, generation, |reply| async move {
                        let result = conversation(&store, &id, message_limit).await;
                        reply.send(LoadReport::Conversation(result));
                    })
            }
            Load::Budget {
                loaded,
                leaf,
                mode,
                window,
                settings,
            } => self
                .tasks
                .load(Slot::Budget, generation, |reply| async move {
                    let result = with_cache(cache, move |cache| {
                        let rows = loaded.budget_rows(leaf, mode, window);
                        let files = &loaded.conversation.files;
                        Box::new(BudgetView::for_history(
                            assemble_history(&rows, files, &settings.options),
                            &settings,
                            cache,
                        ))
                    })
                    .await;
                    reply.send(LoadReport::Budget(result));
                }),
            Load::Nodes {
                conversation_id,
                leaf,
                settings,
            } => self
                .tasks
                .load(Slot::Nodes, generation, |reply| async move {
                    let result =
                        nodes(&store, &storage, cache, &conversation_id, leaf, settings).await;
                    reply.send(LoadReport::Nodes(result));
                }),
            Load::NodeContext {
                thread,
                node_id,
                source,
                settings,
            } => self
                .tasks
                .load(Slot::NodeContext, generation, |reply| async move {
                    let result = match load_node_sources(&store, &storage, &thread, &node_id).await
                    {
                        Ok(sources) => {
                            with_cache(cache, move |cache| {
                                let context = node_context(&thread, &sources, source);
                                Box::new(NodeContextView::compute(context, &settings, cache))
                            })
                            .await
                        }
                        Err(error) => Err(report(error)),
                    };
                    reply.send(LoadReport::NodeContext(result));
                }),
            Load::Timeline { thread, node_id } => {
                self.tasks
                    .load(Slot::Timeline, generation, |reply| async move {
                        let result = load_node_timeline(&store, &storage, &thread, &node_id)
                            .await
                            .map_err(report);
                        reply.send(LoadReport::Timeline(result));
                    })
            }
        }
    }
}

/// A conversation loaded, with its tree built on a worker.
async fn conversation(store: &Store, id: &str, message_limit: i64) -> Result<Arc<Loaded>, String> {
    let conversation = turn_trees(store)
        .map_err(report)?
        .conversation(store, id, Some(message_limit))
        .await
        .map_err(report)?;
    tokio::task::spawn_blocking(move || Arc::new(Loaded::new(conversation)))
        .await
        .map_err(report)
}

/// The nodes pane's thread and rows, each node's latest context counted on a worker.
async fn nodes(
    store: &Store,
    storage: &ObjectStore,
    cache: Arc<Mutex<CountCache>>,
    conversation_id: &str,
    leaf: Option<String>,
    settings: BudgetSettings,
) -> Result<LoadedNodes, String> {
    let (thread, nodes) = load_nodes(store, storage, conversation_id, leaf.as_deref())
        .await
        .map_err(report)?;
    with_cache(cache, move |cache| {
        let rows = nodes
            .into_iter()
            .map(|(summary, docs)| NodeRow {
                latest: latest_context(&docs, &settings, cache),
                summary,
            })
            .collect();
        LoadedNodes { thread, rows }
    })
    .await
}

/// One page of conversations. A scan reports each row as it finds it; an indexed search is
/// quick enough to show whole.
async fn list(store: &Store, reply: &LoadReply, query: &ListQuery) -> Result<ListedPage, String> {
    let streams = list_scans(store, query).map_err(report)?;
    let page = list_conversations(store, query, &mut |row| {
        // Once the app stopped listening, nothing more is sent.
        if streams && !reply.send(LoadReport::ListFound(row.clone())) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })
    .await
    .map_err(report)?;
    Ok(ListedPage {
        conversations: page.conversations,
        next: page.next,
    })
}

/// The thread node memory reads at `leaf`, and each node with its executions in its latest
/// thread run (to count its latest context).
async fn load_nodes(
    store: &Store,
    storage: &ObjectStore,
    conversation_id: &str,
    leaf: Option<&str>,
) -> Result<(Arc<NodeThread>, Vec<(NodeSummary, Vec<ExecutionDocs>)>), InspectError> {
    let thread = load_thread(
        store,
        conversation_id,
        leaf,
        ExtractionMode::Dify,
        PopRule::default(),
    )
    .await?;
    let executions = load_conversation_executions(store, &thread.info.id).await?;
    let nodes = summarize_nodes(&thread, &executions);
    let mut latest = load_latest_executions(store, storage, &nodes).await?;
    let rows = nodes
        .into_iter()
        .map(|node| {
            let docs = latest.remove(&node.node_id).unwrap_or_default();
            (node, docs)
        })
        .collect();
    Ok((Arc::new(thread), rows))
}

/// A node's timeline over the thread, compared with its memory file.
async fn load_node_timeline(
    store: &Store,
    storage: &ObjectStore,
    thread: &NodeThread,
    node_id: &str,
) -> Result<Timeline, InspectError> {
    let sources = load_node_sources(store, storage, thread, node_id).await?;
    let executions = load_timeline(store, storage, thread, node_id).await?;
    Ok(timeline(thread, node_id, &sources.memory_file, &executions))
}

/// Tokens of each conversation's latest thread: the page's windows in one batch of queries,
/// counted on a worker, and reported together so the column fills in with one frame. `None`
/// when they could not be read (the column keeps its placeholders).
async fn count_threads(
    store: &Store,
    cache: Arc<Mutex<CountCache>>,
    ids: &[String],
    settings: BudgetSettings,
    message_limit: i64,
) -> Option<Vec<(String, u64)>> {
    let windows = turn_trees(store)
        .map_err(report)
        .ok()?
        .windows(store, ids, Some(message_limit))
        .await
        .map_err(report)
        .ok()?;
    with_cache(cache, move |cache| {
        windows
            .into_iter()
            .map(|window| {
                let view = BudgetView::for_history(
                    assemble_history(&window.rows_newest_first, &window.files, &settings.options),
                    &settings,
                    cache,
                );
                (window.info.id, view.pruned.tokens_before)
            })
            .collect()
    })
    .await
    .ok()
}

/// Hands `text` to the terminal's clipboard with OSC 52; the terminal, not memscope, decides
/// whether to take it (tmux needs `set-clipboard on`).
fn copy_to_clipboard(text: &str) {
    use crossterm::clipboard::CopyToClipboard;
    if let Err(error) =
        crossterm::execute!(std::io::stdout(), CopyToClipboard::to_clipboard_from(text))
    {
        tracing::warn!(%error, "could not write the OSC 52 copy sequence");
    }
}

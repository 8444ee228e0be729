//! The job runner: carries effects out on tokio tasks and reports every result on one channel.
//! Each kind of job has a slot; a new request aborts the slot's previous task, and the core
//! drops any result whose generation is not the latest, so the latest request wins.

mod chat_memories;
mod doctor;
mod memory_bases;
mod slot;

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use self::slot::{SLOTS, Slot, report};
use super::state::{Loaded, NodeRow};
use super::update::{Effect, JobEvent, LoadedNodes};
use crate::inspect::InspectError;
use crate::inspect::budget::{BudgetSettings, BudgetView};
use crate::inspect::conversation::{load_conversation, load_windows};
use crate::inspect::nodes::{
    ExecutionDocs, NodeContextView, NodeSummary, NodeThread, Timeline, latest_context,
    load_conversation_executions, load_latest_executions, load_node_sources, load_thread,
    load_timeline, node_context, summarize_nodes, timeline,
};
use crate::memory::history::PopRule;
use crate::memory::thread::ExtractionMode;
use crate::memory::tokens::{CountCache, Encoding, preload};
use crate::storage::ObjectStore;
use crate::store::Store;
use crate::summarize::Summarizer;
use crate::sync::MbSettings;

/// Runs effects against a store, sharing one token count cache between jobs.
pub struct JobRunner {
    store: Arc<Store>,
    /// Where Dify's files are: node memory files and offloaded outputs.
    storage: ObjectStore,
    cache: Arc<Mutex<CountCache>>,
    events: UnboundedSender<JobEvent>,
    running: [Option<JoinHandle<()>>; SLOTS],
    memory_bases: memory_bases::MbRunner,
    doctor: doctor::DoctorRunner,
    /// Writes trim summaries (`[summarizer]` of the config).
    summarizer: Arc<Summarizer>,
}

impl JobRunner {
    pub fn new(
        store: Store,
        storage: ObjectStore,
        syncers: MbSettings,
        events: UnboundedSender<JobEvent>,
    ) -> JobRunner {
        let store = Arc::new(store);
        JobRunner {
            memory_bases: memory_bases::MbRunner::new(store.clone(), syncers, events.clone()),
            doctor: doctor::DoctorRunner::new(store.clone(), storage.clone(), events.clone()),
            store,
            storage,
            cache: Arc::new(Mutex::new(CountCache::new(CountCache::DEFAULT_CAPACITY))),
            events,
            running: Default::default(),
            summarizer: Arc::new(Summarizer::Extractive),
        }
    }

    pub fn set_summarizer(&mut self, summarizer: Summarizer) {
        self.summarizer = Arc::new(summarizer);
    }

    /// Builds a tokenizer off the UI thread, so the first budget does not wait for it.
    pub fn preload(&self, encoding: Encoding) {
        tokio::task::spawn_blocking(move || preload(encoding));
    }

    /// Starts the memory-base watcher (on a writable database).
    pub fn start_watcher(&mut self) {
        self.memory_bases.start_watcher();
    }

    /// Stops the watcher and running syncs, giving them a moment to roll back.
    pub async fn shutdown(&mut self) {
        self.memory_bases.shutdown().await;
        self.doctor.cancel();
        for task in self.running.iter_mut().filter_map(Option::take) {
            task.abort();
        }
    }

    pub fn run(&mut self, effect: Effect) {
        let effect = match effect {
            Effect::MemoryBases(effect) => return self.memory_bases.run(effect),
            Effect::Doctor(effect) => return self.doctor.run(effect),
            Effect::CopyToClipboard(text) => return copy_to_clipboard(&text),
            effect => effect,
        };
        let store = self.store.clone();
        let cache = self.cache.clone();
        let events = self.events.clone();
        let storage = self.storage.clone();
        let (slot, task): (Slot, JoinHandle<()>) = match effect {
            Effect::LoadList { generation, filter } => (
                Slot::List,
                tokio::spawn(async move {
                    // A scan reports each row as it finds it; an indexed search is quick
                    // enough to show whole.
                    let streams = store.search_path(filter.search.as_deref()).is_scan();
                    let mut rows = Vec::new();
                    let result = store
                        .stream_conversations(&filter, |row| {
                            if streams {
                                let found = row.clone();
                                let _ = events.send(JobEvent::ListFound {
                                    generation,
                                    row: found,
                                });
                            }
                            rows.push(row);
                        })
                        .await
                        .map(|_| rows)
                        .map_err(report);
                    let _ = events.send(JobEvent::List { generation, result });
                }),
            ),
            Effect::StopList => {
                // Dropping the task's future stops its query (see `store::search`).
                if let Some(task) = self.running[Slot::List as usize].take() {
                    task.abort();
                }
                return;
            }
            Effect::CountThreads {
                generation,
                ids,
                settings,
                message_limit,
            } => (
                Slot::ThreadTokens,
                tokio::spawn(count_threads(
                    store,
                    cache,
                    events,
                    generation,
                    ids,
                    settings,
                    message_limit,
                )),
            ),
            Effect::LoadConversation { generation, id } => (
                Slot::Conversation,
                tokio::spawn(async move {
                    let result = match load_conversation(&store, &id).await {
                        Ok(conversation) => {
                            tokio::task::spawn_blocking(move || Arc::new(Loaded::new(conversation)))
                                .await
                                .map_err(report)
                        }
                        Err(error) => Err(report(error)),
                    };
                    let _ = events.send(JobEvent::Conversation { generation, result });
                }),
            ),
            Effect::ComputeBudget {
                generation,
                loaded,
                leaf,
                mode,
                window,
                settings,
            } => (
                Slot::Budget,
                tokio::task::spawn_blocking(move || {
                    let rows = loaded.budget_rows(leaf, mode, window);
                    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
                    let view = BudgetView::compute(
                        &rows,
                        &loaded.conversation.files,
                        &settings,
                        &mut cache,
                    );
                    let _ = events.send(JobEvent::Budget {
                        generation,
                        result: Ok(Box::new(view)),
                    });
                }),
            ),
            Effect::PollNewest { id } => (
                Slot::Poll,
                tokio::spawn(async move {
                    match store.history_messages(&id, 1).await {
                        Ok(rows) => {
                            let newest = rows.into_iter().next().map(|m| m.id);
                            let _ = events.send(JobEvent::Newest { id, newest });
                        }
                        Err(error) => {
                            report(error);
                        }
                    }
                }),
            ),
            Effect::LoadNodes {
                generation,
                conversation_id,
                leaf,
                settings,
            } => (
                Slot::Nodes,
                tokio::spawn(async move {
                    let result =
                        match load_nodes(&store, &storage, &conversation_id, leaf.as_deref()).await
                        {
                            Ok((thread, nodes)) => tokio::task::spawn_blocking(move || {
                                let mut cache =
                                    cache.lock().unwrap_or_else(PoisonError::into_inner);
                                let rows = nodes
                                    .into_iter()
                                    .map(|(summary, docs)| NodeRow {
                                        latest: latest_context(&docs, &settings, &mut cache),
                                        summary,
                                    })
                                    .collect();
                                LoadedNodes { thread, rows }
                            })
                            .await
                            .map_err(report),
                            Err(error) => Err(report(error)),
                        };
                    let _ = events.send(JobEvent::Nodes { generation, result });
                }),
            ),
            Effect::LoadNodeContext {
                generation,
                thread,
                node_id,
                source,
                settings,
            } => (
                Slot::NodeContext,
                tokio::spawn(async move {
                    let result = match load_node_sources(&store, &storage, &thread, &node_id).await
                    {
                        Ok(sources) => tokio::task::spawn_blocking(move || {
                            let context = node_context(&thread, &sources, source);
                            let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
                            Box::new(NodeContextView::compute(context, &settings, &mut cache))
                        })
                        .await
                        .map_err(report),
                        Err(error) => Err(report(error)),
                    };
                    let _ = events.send(JobEvent::NodeContext { generation, result });
                }),
            ),
            Effect::ChatMemory(effect) => {
                let summarizer = self.summarizer.clone();
                match chat_memories::spawn(store, cache, events, summarizer, effect) {
                    (Some(slot), task) => (slot, task),
                    (None, _) => return,
                }
            }
            Effect::LoadTimeline {
                generation,
                thread,
                node_id,
            } => (
                Slot::Timeline,
                tokio::spawn(async move {
                    let result = load_node_timeline(&store, &storage, &thread, &node_id)
                        .await
                        .map_err(report);
                    let _ = events.send(JobEvent::Timeline { generation, result });
                }),
            ),
            Effect::MemoryBases(_) | Effect::Doctor(_) | Effect::CopyToClipboard(_) => {
                unreachable!("run above")
            }
        };
        if let Some(previous) = self.running[slot as usize].replace(task) {
            previous.abort();
        }
    }
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
/// counted on a worker, and reported together so the column fills in with one frame.
async fn count_threads(
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    events: UnboundedSender<JobEvent>,
    generation: u64,
    ids: Vec<String>,
    settings: BudgetSettings,
    message_limit: i64,
) {
    let windows = match load_windows(&store, &ids, Some(message_limit)).await {
        Ok(windows) => windows,
        Err(error) => {
            report(error);
            return;
        }
    };
    let counted = tokio::task::spawn_blocking(move || {
        let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
        windows
            .into_iter()
            .map(|window| {
                let view = BudgetView::compute(
                    &window.rows_newest_first,
                    &window.files,
                    &settings,
                    &mut cache,
                );
                (window.info.id, view.pruned.tokens_before)
            })
            .collect()
    })
    .await;
    if let Ok(tokens) = counted {
        let _ = events.send(JobEvent::ThreadTokens { generation, tokens });
    }
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

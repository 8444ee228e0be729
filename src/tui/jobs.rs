//! The job runner: carries effects out on tokio tasks and reports every result on one channel.
//! Each kind of job has a slot; a new request aborts the slot's previous task, and the core
//! drops any result whose generation is not the latest, so the latest request wins.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::state::Loaded;
use super::update::{Effect, JobEvent};
use crate::inspect::budget::{BudgetSettings, BudgetView};
use crate::inspect::conversation::{load_conversation, load_window};
use crate::memory::tokens::{CountCache, Encoding, preload};
use crate::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    List,
    ThreadTokens,
    Conversation,
    Budget,
    Poll,
}

const SLOTS: usize = 5;

/// Runs effects against a store, sharing one token count cache between jobs.
pub struct JobRunner {
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    events: UnboundedSender<JobEvent>,
    running: [Option<JoinHandle<()>>; SLOTS],
}

impl JobRunner {
    pub fn new(store: Store, events: UnboundedSender<JobEvent>) -> JobRunner {
        JobRunner {
            store: Arc::new(store),
            cache: Arc::new(Mutex::new(CountCache::new(CountCache::DEFAULT_CAPACITY))),
            events,
            running: Default::default(),
        }
    }

    /// Builds a tokenizer off the UI thread, so the first budget does not wait for it.
    pub fn preload(&self, encoding: Encoding) {
        tokio::task::spawn_blocking(move || preload(encoding));
    }

    pub fn run(&mut self, effect: Effect) {
        let store = self.store.clone();
        let cache = self.cache.clone();
        let events = self.events.clone();
        let (slot, task): (Slot, JoinHandle<()>) = match effect {
            Effect::LoadList { generation, filter } => (
                Slot::List,
                tokio::spawn(async move {
                    let result = store.list_conversations(&filter).await.map_err(report);
                    let _ = events.send(JobEvent::List { generation, result });
                }),
            ),
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
        };
        if let Some(previous) = self.running[slot as usize].replace(task) {
            previous.abort();
        }
    }
}

/// Tokens of each conversation's latest thread, reported one conversation at a time so the
/// list fills in.
async fn count_threads(
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    events: UnboundedSender<JobEvent>,
    generation: u64,
    ids: Vec<String>,
    settings: BudgetSettings,
    message_limit: i64,
) {
    let settings = Arc::new(settings);
    for id in ids {
        let window = match load_window(&store, &id, Some(message_limit)).await {
            Ok(window) => window,
            Err(error) => {
                report(error);
                continue;
            }
        };
        let (cache, settings) = (cache.clone(), settings.clone());
        let counted = tokio::task::spawn_blocking(move || {
            let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
            BudgetView::compute(
                &window.rows_newest_first,
                &window.files,
                &settings,
                &mut cache,
            )
            .pruned
            .tokens_before
        })
        .await;
        let Ok(tokens) = counted else { return };
        let sent = events.send(JobEvent::ThreadTokens {
            generation,
            tokens: vec![(id, tokens)],
        });
        if sent.is_err() {
            return;
        }
    }
}

/// Logs a job failure and turns it into the text the screen shows.
fn report(error: impl std::fmt::Display) -> String {
    let text = error.to_string();
    tracing::warn!(error = %text, "background job failed");
    text
}

//! Jobs of the chat memories tab and the trim preview: its loads (reads, counts, the remote
//! summary) and its writes (each write is one transaction in the store).

use std::sync::{Arc, Mutex, PoisonError};

use super::slot::{Slot, Tasks, report, with_cache};
use crate::inspect::trim::{
    NewMessage, TrimCounter, TrimInspectError, TrimSession, add_message, apply_policy,
    delete_messages, load_memory, messages_to_delete, row_message,
};
use crate::memory::tokens::{CountCache, TokenCounter};
use crate::memory::trim::{ChatMemoryPolicy, TrimError, TrimPlan};
use crate::store::{CancelFlag, Store};
use crate::summarize::{Summarizer, extractive_plan, summarize_plan};
use crate::tui::state::chat_memories::Write;
use crate::tui::state::trim::TrimSessions;
use crate::tui::update::chat_memories::{
    MemoryEffect, MemoryJob, MemoryLoad, MemoryLoaded, MemoryPage,
};
use crate::tui::update::trim::sessions;

/// Starts the load requested as `generation` in its slot.
pub(super) fn load(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    summarizer: Arc<Summarizer>,
    load: MemoryLoad,
) {
    match load {
        MemoryLoad::List => tasks.load(Slot::MemoryList, generation, |reply| async move {
            let result = store.list_chat_memories().await.map_err(report);
            reply.send(MemoryLoaded::List(result));
        }),
        MemoryLoad::Tokens { ids, counter } => {
            tasks.load(Slot::MemoryTokens, generation, |reply| async move {
                // Each memory's count is reported as soon as it is known.
                for id in ids {
                    let loaded = match load_memory(&store, &id).await {
                        Ok(loaded) => loaded,
                        Err(error) => {
                            report(error);
                            continue;
                        }
                    };
                    let counter = counter.clone();
                    let counted = with_cache(cache.clone(), move |cache| {
                        cache.count_list(&counter, &loaded.messages())
                    });
                    let Ok(tokens) = counted.await else { return };
                    reply.send(MemoryLoaded::Tokens(vec![(id, tokens)]));
                }
            })
        }
        MemoryLoad::Page {
            id,
            limit,
            offset,
            counter,
        } => tasks.load(Slot::MemoryPage, generation, |reply| async move {
            let result = page(&store, &cache, &id, limit, offset, &counter)
                .await
                .map_err(report);
            reply.send(MemoryLoaded::Page(result));
        }),
        MemoryLoad::TrimSource { id, counter } => {
            tasks.load(Slot::TrimSource, generation, |reply| async move {
                let result = match load_memory(&store, &id).await {
                    Ok(loaded) => {
                        with_cache(cache, move |cache| {
                            let messages = loaded.messages();
                            let tokens = TrimSession::new(
                                messages.clone(),
                                TrimCounter::Tokens(counter),
                                cache,
                            );
                            (Arc::new(sessions(tokens, messages)), loaded.policy)
                        })
                        .await
                    }
                    Err(error) => Err(report(error)),
                };
                reply.send(MemoryLoaded::TrimSource(result));
            })
        }
        MemoryLoad::Summary {
            sessions,
            policy,
            offline,
        } => tasks.load(Slot::Summary, generation, |reply| async move {
            let result = summary(&sessions, &policy, offline, &summarizer).await;
            reply.send(MemoryLoaded::Summary(result));
        }),
    }
}

/// Starts a write, which runs to its end.
pub(super) fn write(
    tasks: &mut Tasks,
    store: Arc<Store>,
    summarizer: Arc<Summarizer>,
    effect: MemoryEffect,
) {
    let reply = tasks.reply();
    match effect {
        MemoryEffect::Write { write, counter } => tasks.write(CancelFlag::default(), async move {
            let memory_id = write.memory_id().to_owned();
            let result = run_write(&store, &summarizer, write, TrimCounter::Tokens(counter))
                .await
                .map_err(report);
            reply.send(MemoryJob::Written { memory_id, result });
        }),
        MemoryEffect::CountDelete { write } => tasks.write(CancelFlag::default(), async move {
            let result = count_delete(&store, &write).await.map_err(report);
            reply.send(MemoryJob::DeleteCount { write, result });
        }),
    }
}

/// One page of a memory, each message counted.
async fn page(
    store: &Store,
    cache: &Mutex<CountCache>,
    id: &str,
    limit: i64,
    offset: i64,
    counter: &TokenCounter,
) -> Result<MemoryPage, TrimInspectError> {
    let memory = store
        .chat_memory(id)
        .await?
        .ok_or_else(|| TrimInspectError::UnknownMemory(id.to_owned()))?;
    let rows = store
        .chat_memory_messages(&memory.id, Some(limit), offset)
        .await?;
    let messages: Vec<_> = rows.iter().map(row_message).collect();
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    let tokens = cache
        .count_messages(counter, &messages)
        .iter()
        .map(|t| u64::from(t.inner))
        .collect();
    Ok(MemoryPage {
        memory,
        rows,
        tokens,
    })
}

/// The preview's plan summarized: by the extractive summarizer on a worker (`offline`), or by
/// the configured one.
async fn summary(
    sessions: &Arc<TrimSessions>,
    policy: &ChatMemoryPolicy,
    offline: bool,
    summarizer: &Summarizer,
) -> Result<TrimPlan, String> {
    if offline {
        let (sessions, policy) = (sessions.clone(), policy.clone());
        tokio::task::spawn_blocking(move || {
            let planner = sessions.tokens.planner(&policy)?;
            Ok(extractive_plan(&planner, planner.plan()))
        })
        .await
        .map_err(report)
        .and_then(|r: Result<_, TrimError>| r.map_err(report))
    } else {
        let planner = sessions.tokens.planner(policy).map_err(report)?;
        summarize_plan(&planner, planner.plan(), summarizer)
            .await
            .map_err(report)
    }
}

/// How many messages the delete `write` would remove; for an undo, the changes not undone yet.
async fn count_delete(store: &Store, write: &Write) -> Result<usize, TrimInspectError> {
    if let Write::Undo { memory_id } = write {
        let changes = store.chat_memory_changes(memory_id).await?;
        return Ok(changes.iter().filter(|c| c.undone_at.is_none()).count());
    }
    let Write::Delete { scope, roles, .. } = write else {
        return Ok(0);
    };
    let loaded = load_memory(store, write.memory_id()).await?;
    Ok(messages_to_delete(store, &loaded, *scope, roles)
        .await?
        .len())
}

/// Carries a confirmed write out; the text says what changed.
async fn run_write(
    store: &Store,
    summarizer: &Summarizer,
    write: Write,
    counter: TrimCounter,
) -> Result<String, TrimInspectError> {
    let loaded = load_memory(store, write.memory_id()).await?;
    let label = loaded.memory.label.clone();
    Ok(match write {
        Write::ApplyTrim { policy, .. } => {
            let applied =
                apply_policy(store, &loaded, &policy, counter, summarizer, "trim").await?;
            match applied.change_id {
                Some(change) => format!(
                    "trimmed {label}: {} removed, {} modified (change {}); u undoes it",
                    applied.plan.removed().count(),
                    applied.plan.modified().count(),
                    short(&change)
                ),
                None => format!("{label}: the trim changed nothing"),
            }
        }
        Write::Undo { .. } => match store.undo_chat_memory_change(&loaded.memory.id).await? {
            Some(change) => format!(
                "undid {} {} of {label}: messages restored",
                change.action,
                short(&change.id)
            ),
            None => format!("nothing to undo in {label}"),
        },
        Write::Delete { scope, roles, .. } => {
            match delete_messages(store, &loaded, scope, &roles).await? {
                Some((change, count)) => format!(
                    "deleted {count} {} from {label} (change {}); u undoes it",
                    crate::format::noun(count as u64, "message"),
                    short(&change)
                ),
                None => format!("no messages of {label} matched the delete"),
            }
        }
        Write::Add {
            role,
            content,
            files,
            ..
        } => {
            let new = NewMessage {
                memory_node_id: &loaded.memory.memory_node_id,
                chat_id: &loaded.memory.chat_id,
                role,
                content: &content,
                files,
                workflow_request_id: None,
                create: None,
            };
            let added = add_message(store, &new, counter, summarizer).await?;
            let trimmed = added.trim.plan.removed().count() as u64;
            if trimmed > 0 {
                format!(
                    "added message {} to {label}; its policy trimmed {trimmed} {} (u undoes both)",
                    added.seq,
                    crate::format::noun(trimmed, "message")
                )
            } else {
                format!("added message {} to {label} (u undoes it)", added.seq)
            }
        }
    })
}

fn short(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

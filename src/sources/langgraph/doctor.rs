//! `doctor` on a LangGraph checkpoint database, one thread at a time: what each thread costs
//! (every root checkpoint stores the whole state again, so a long thread grows as the square of
//! its length) and what keeping only its newest checkpoints would free, writes whose checkpoint
//! is gone, PostgreSQL blobs no checkpoint names, missing parents, and the values memscope
//! cannot read: pickle, an encrypted value without `LANGGRAPH_AES_KEY`, a type, class or
//! extension it does not know, a DeltaChannel. Sizes and types come from every row without
//! decoding it; each thread's latest checkpoint (what the graph reads next) is decoded.

use serde::Serialize;

use super::saver::{LangGraphDb, LangGraphError};
use crate::format::{byte_size, count, noun, thousands};
use crate::memory::tokens::{CountCache, TokenCounter};
use crate::sources::conversation::{Extra, SourceFuture};
use crate::sources::doctor::{
    ConversationDoctor, DoctorSettings, FindingTarget, Found, SourceFinding, SourceScan, extra_of,
};
use crate::sources::langgraph::decode::KEY_VARIABLE;
use crate::sources::langgraph::decode::footprint::{OrphanWrites, ThreadFootprint};
use crate::sources::langgraph::threads::needs_key;
use crate::sources::opened::ConversationKey;
use crate::store::{CancelFlag, Store};

/// A problem or a cost of one thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LangGraphFinding {
    /// A thread with more root checkpoints than it keeps: each holds its whole state
    /// again, and a prune keeping the newest would free the rest.
    ThreadGrowth {
        thread_id: String,
        /// Messages in the latest state; `None` when it cannot be read.
        messages: Option<usize>,
        root_checkpoints: usize,
        checkpoints: usize,
        bytes: i64,
        keep_last: usize,
        frees_checkpoints: usize,
        frees_writes: i64,
        frees_blobs: usize,
        frees_bytes: i64,
    },
    /// Writes keyed to a checkpoint that is not in the database (deleted by hand, or a run
    /// that died between its writes and its checkpoint).
    OrphanWrites {
        thread_id: String,
        checkpoint_ns: String,
        checkpoint_id: String,
        writes: i64,
        bytes: i64,
    },
    /// PostgreSQL blobs whose channel version no checkpoint names: nothing reads them.
    UnreferencedBlobs {
        thread_id: String,
        blobs: usize,
        bytes: i64,
    },
    /// A parent that is not in the database, or parent links that go round.
    MissingParent { thread_id: String, problem: String },
    /// Values memscope cannot read, and why.
    UnreadableValue {
        thread_id: String,
        /// The checkpoint read, when the problem is in one.
        checkpoint_id: Option<String>,
        reason: String,
    },
    /// Encrypted values while `LANGGRAPH_AES_KEY` is not set.
    EncryptedWithoutKey { thread_id: String, values: usize },
    /// The latest state's messages are over the token budget: a model call sends them all
    /// unless a node trims them.
    OverBudget {
        thread_id: String,
        messages: usize,
        tokens: u64,
        budget: i64,
    },
}

impl LangGraphFinding {
    pub fn kind(&self) -> &'static str {
        match self {
            LangGraphFinding::ThreadGrowth { .. } => "thread_growth",
            LangGraphFinding::OrphanWrites { .. } => "orphan_writes",
            LangGraphFinding::UnreferencedBlobs { .. } => "unreferenced_blobs",
            LangGraphFinding::MissingParent { .. } => "missing_parent",
            LangGraphFinding::UnreadableValue { .. } => "unreadable_value",
            LangGraphFinding::EncryptedWithoutKey { .. } => "encrypted_without_key",
            LangGraphFinding::OverBudget { .. } => "over_budget",
        }
    }

    pub fn thread_id(&self) -> &str {
        match self {
            LangGraphFinding::ThreadGrowth { thread_id, .. }
            | LangGraphFinding::OrphanWrites { thread_id, .. }
            | LangGraphFinding::UnreferencedBlobs { thread_id, .. }
            | LangGraphFinding::MissingParent { thread_id, .. }
            | LangGraphFinding::UnreadableValue { thread_id, .. }
            | LangGraphFinding::EncryptedWithoutKey { thread_id, .. }
            | LangGraphFinding::OverBudget { thread_id, .. } => thread_id,
        }
    }

    /// One line for a terminal.
    pub fn describe(&self) -> String {
        match self {
            LangGraphFinding::ThreadGrowth {
                thread_id,
                messages,
                root_checkpoints,
                checkpoints,
                bytes,
                keep_last,
                frees_checkpoints,
                frees_bytes,
                ..
            } => {
                let messages = messages.map_or_else(
                    || "its messages".to_owned(),
                    |n| format!("its {} {}", thousands(n as u64), noun(n as u64, "message")),
                );
                format!(
                    "thread {thread_id} stores {messages} {} times: {} in {}; keeping the \
                     newest {} frees {}, {}",
                    thousands(*root_checkpoints as u64),
                    size(*bytes),
                    count(*checkpoints as u64, "checkpoint"),
                    thousands(*keep_last as u64),
                    count(*frees_checkpoints as u64, "checkpoint"),
                    size(*frees_bytes),
                )
            }
            LangGraphFinding::OrphanWrites {
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                writes,
                bytes,
            } => format!(
                "thread {thread_id}: {} {} ({}) keyed to checkpoint {checkpoint_id}{}, which is \
                 not in the database",
                thousands(*writes),
                noun(*writes as u64, "write"),
                size(*bytes),
                namespace_label(checkpoint_ns),
            ),
            LangGraphFinding::UnreferencedBlobs {
                thread_id,
                blobs,
                bytes,
            } => format!(
                "thread {thread_id}: {} {} ({}) that no checkpoint names; nothing reads them",
                thousands(*blobs as u64),
                noun(*blobs as u64, "blob"),
                size(*bytes),
            ),
            LangGraphFinding::MissingParent { thread_id, problem } => {
                format!("thread {thread_id}: {problem}")
            }
            LangGraphFinding::UnreadableValue {
                thread_id,
                checkpoint_id,
                reason,
            } => match checkpoint_id {
                Some(id) => format!("thread {thread_id}, checkpoint {id}: {reason}"),
                None => format!("thread {thread_id}: {reason}"),
            },
            LangGraphFinding::EncryptedWithoutKey { thread_id, values } => format!(
                "thread {thread_id}: {} encrypted {} cannot be read; set {KEY_VARIABLE} to the \
                 key LangGraph uses",
                thousands(*values as u64),
                noun(*values as u64, "value"),
            ),
            LangGraphFinding::OverBudget {
                thread_id,
                messages,
                tokens,
                budget,
            } => format!(
                "thread {thread_id}: its latest state's {} {} are {} tokens, over the budget of \
                 {}; a model call sends them all unless a node trims them",
                thousands(*messages as u64),
                noun(*messages as u64, "message"),
                thousands(*tokens),
                thousands(*budget),
            ),
        }
    }
}

fn namespace_label(namespace: &str) -> String {
    if namespace.is_empty() {
        String::new()
    } else {
        format!(" (subgraph {namespace})")
    }
}

fn size(bytes: i64) -> String {
    byte_size(bytes.max(0) as u64)
}

impl SourceFinding for LangGraphFinding {
    fn kind(&self) -> &'static str {
        LangGraphFinding::kind(self)
    }

    fn conversation(&self) -> Option<&str> {
        Some(self.thread_id())
    }

    fn describe(&self) -> String {
        LangGraphFinding::describe(self)
    }

    fn extra(&self) -> Extra {
        extra_of(self, "thread_id")
    }

    fn leads_to(&self) -> FindingTarget {
        FindingTarget::Conversation(ConversationKey::new(self.thread_id()))
    }
}

/// `doctor` on a LangGraph database: every thread's rows measured, its latest state read.
pub struct LangGraphDoctor;

impl ConversationDoctor for LangGraphDoctor {
    fn unit(&self) -> &'static str {
        "checkpoint"
    }

    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64> {
        Box::pin(async move { Ok(checkpoints_to_scan(store).await?) })
    }

    fn scan<'a>(
        &'a self,
        store: &'a Store,
        settings: &'a DoctorSettings,
        stop: &'a CancelFlag,
        progress: &'a mut (dyn FnMut(u64) + Send),
    ) -> SourceFuture<'a, Option<SourceScan>> {
        Box::pin(async move {
            let scan = run_until(
                store,
                &settings.counter,
                settings.budget,
                settings.keep_last,
                stop,
                progress,
            )
            .await?;
            Ok(scan.map(|scan| SourceScan {
                conversations: scan.threads,
                messages: scan.messages,
                findings: scan.findings.into_iter().map(Found::new).collect(),
                ..SourceScan::default()
            }))
        })
    }
}

/// What one scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LangGraphScan {
    pub threads: usize,
    /// Messages in the threads' latest states.
    pub messages: usize,
    pub findings: Vec<LangGraphFinding>,
}

/// The findings of one thread's rows, and of its latest state when it was read (`Ok` with its
/// message count and what it could not read, or why it could not be read at all).
pub fn check_thread(
    thread_id: &str,
    footprint: &ThreadFootprint,
    latest: Option<&Result<LatestState, LangGraphError>>,
    has_key: bool,
    budget: i64,
) -> Vec<LangGraphFinding> {
    let thread_id = thread_id.to_owned();
    let mut findings = Vec::new();
    let messages = match latest {
        Some(Ok(state)) => {
            findings.extend(state.problems.iter().map(|reason| {
                LangGraphFinding::UnreadableValue {
                    thread_id: thread_id.clone(),
                    checkpoint_id: Some(state.checkpoint_id.clone()),
                    reason: reason.clone(),
                }
            }));
            if state.tokens as i128 > budget as i128 {
                findings.push(LangGraphFinding::OverBudget {
                    thread_id: thread_id.clone(),
                    messages: state.messages,
                    tokens: state.tokens,
                    budget,
                });
            }
            Some(state.messages)
        }
        // Without the key the count below says it once for the thread.
        Some(Err(error)) if has_key || !needs_key(error) => {
            findings.push(LangGraphFinding::UnreadableValue {
                thread_id: thread_id.clone(),
                checkpoint_id: None,
                reason: format!("the latest state cannot be read: {error}"),
            });
            None
        }
        _ => None,
    };
    if footprint.root_checkpoints > footprint.keep_last {
        findings.push(LangGraphFinding::ThreadGrowth {
            thread_id: thread_id.clone(),
            messages,
            root_checkpoints: footprint.root_checkpoints,
            checkpoints: footprint.checkpoints,
            bytes: footprint.bytes,
            keep_last: footprint.keep_last,
            frees_checkpoints: footprint.freed.checkpoints,
            frees_writes: footprint.freed.writes,
            frees_blobs: footprint.freed.blobs,
            frees_bytes: footprint.freed.bytes,
        });
    }
    findings.extend(footprint.orphan_writes.iter().map(
        |OrphanWrites {
             checkpoint_ns,
             checkpoint_id,
             writes,
             bytes,
         }| LangGraphFinding::OrphanWrites {
            thread_id: thread_id.clone(),
            checkpoint_ns: checkpoint_ns.clone(),
            checkpoint_id: checkpoint_id.clone(),
            writes: *writes,
            bytes: *bytes,
        },
    ));
    if footprint.unreferenced_blobs.blobs > 0 {
        findings.push(LangGraphFinding::UnreferencedBlobs {
            thread_id: thread_id.clone(),
            blobs: footprint.unreferenced_blobs.blobs,
            bytes: footprint.unreferenced_blobs.bytes,
        });
    }
    findings.extend(
        footprint
            .anomalies
            .iter()
            .map(|problem| LangGraphFinding::MissingParent {
                thread_id: thread_id.clone(),
                problem: problem.clone(),
            }),
    );
    let types = &footprint.value_types;
    let unreadable_type = |reason: String| LangGraphFinding::UnreadableValue {
        thread_id: thread_id.clone(),
        checkpoint_id: None,
        reason,
    };
    if types.pickle > 0 {
        findings.push(unreadable_type(format!(
            "{} pickle {}; memscope never runs pickle",
            thousands(types.pickle as u64),
            noun(types.pickle as u64, "value")
        )));
    }
    for (type_name, count) in &types.unknown {
        findings.push(unreadable_type(format!(
            "{} {} of type `{type_name}`, which LangGraph's serializer does not write",
            thousands(*count as u64),
            noun(*count as u64, "value")
        )));
    }
    if types.encrypted > 0 && !has_key {
        findings.push(LangGraphFinding::EncryptedWithoutKey {
            thread_id,
            values: types.encrypted,
        });
    }
    findings
}

/// What doctor takes from a thread's latest checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestState {
    pub checkpoint_id: String,
    pub messages: usize,
    /// Tokens of the messages a model is given, as the counter counts a list.
    pub tokens: u64,
    /// Entries of `messages` that are no message memscope reads, and what was read but not
    /// understood (an unknown class or extension).
    pub problems: Vec<String>,
}

/// Scans every thread until `stop` is cancelled (then `None`), telling `progress` how many
/// checkpoints it has measured after each thread.
pub async fn run_until(
    store: &Store,
    counter: &TokenCounter,
    budget: i64,
    keep_last: usize,
    stop: &CancelFlag,
    mut progress: impl FnMut(u64),
) -> Result<Option<LangGraphScan>, LangGraphError> {
    let db = LangGraphDb::open(store)?;
    let failed = |e| db.failed(e);
    let threads = db.pool.threads().await.map_err(failed)?;
    let mut scan = LangGraphScan {
        threads: threads.len(),
        ..LangGraphScan::default()
    };
    let mut growth = Vec::new();
    let mut other = Vec::new();
    let mut measured = 0u64;
    // Counts are not reused across threads: a small cache keeps memory flat.
    let mut cache = CountCache::new(4_096);
    for thread in &threads {
        if stop.is_cancelled() {
            return Ok(None);
        }
        let sizes = db
            .pool
            .thread_sizes(&thread.thread_id)
            .await
            .map_err(failed)?;
        let footprint =
            ThreadFootprint::measure(&sizes.checkpoints, &sizes.writes, &sizes.blobs, keep_last);
        let latest = match &thread.latest_checkpoint_id {
            Some(id) => Some(latest_state(&db, &thread.thread_id, id, counter, &mut cache).await),
            None => None,
        };
        if let Some(Ok(state)) = &latest {
            scan.messages += state.messages;
        }
        for finding in check_thread(
            &thread.thread_id,
            &footprint,
            latest.as_ref(),
            db.has_key(),
            budget,
        ) {
            match finding {
                LangGraphFinding::ThreadGrowth { .. } => growth.push((footprint.bytes, finding)),
                finding => other.push(finding),
            }
        }
        measured += footprint.checkpoints as u64;
        progress(measured);
    }
    // The largest threads first: a per-kind limit shows those.
    growth.sort_by_key(|(bytes, _)| std::cmp::Reverse(*bytes));
    scan.findings = growth.into_iter().map(|(_, f)| f).chain(other).collect();
    Ok(Some(scan))
}

async fn latest_state(
    db: &LangGraphDb,
    thread_id: &str,
    checkpoint_id: &str,
    counter: &TokenCounter,
    cache: &mut CountCache,
) -> Result<LatestState, LangGraphError> {
    let state = db.state_at(thread_id, checkpoint_id).await?;
    let prompt: Vec<_> = state
        .messages
        .iter()
        .filter_map(|m| m.to_prompt_message())
        .collect();
    let problems = state
        .unread
        .iter()
        .map(|u| {
            format!(
                "message {} of the `messages` channel: {}",
                u.index, u.reason
            )
        })
        .chain(state.warnings)
        .collect();
    Ok(LatestState {
        checkpoint_id: state.checkpoint_id,
        messages: state.messages.len(),
        tokens: cache.count_list(counter, &prompt),
        problems,
    })
}

/// Checkpoints a scan measures, for a progress gauge.
pub async fn checkpoints_to_scan(store: &Store) -> Result<u64, LangGraphError> {
    let db = LangGraphDb::open(store)?;
    let count = db.pool.checkpoint_count().await.map_err(|e| db.failed(e))?;
    Ok(count.max(0) as u64)
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;

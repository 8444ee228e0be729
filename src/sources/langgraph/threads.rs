//! A LangGraph database's threads as conversations: the list (newest latest checkpoint first,
//! with its message count read from that checkpoint only), the search over thread ids and
//! message text, a thread's checkpoint tree (no checkpoint decoded) and the state at one
//! checkpoint.

use std::ops::ControlFlow;

use futures_util::{StreamExt, stream};
use serde::Serialize;

use super::read::{StoredCheckpoint, ThreadSummary};
use super::saver::{LangGraphDb, LangGraphError};
use super::stored::CheckpointError;
use crate::sources::langgraph::decode::DecodeError;
use crate::sources::langgraph::decode::checkpoint::UnreadMessage;
use crate::sources::langgraph::decode::glance::Glance;
use crate::sources::langgraph::decode::message::LangChainMessage;
use crate::sources::langgraph::decode::tree::{CheckpointTree, ROOT_NAMESPACE};
use crate::store::CancelFlag;

/// Latest checkpoints read at once while threads are listed (the pools have 4 to 5 connections).
const READS_AT_ONCE: usize = 3;

/// One thread as `conversations` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadRow {
    pub id: String,
    /// Messages in the latest state's `messages` channel; `None` when it could not be read.
    pub messages: Option<usize>,
    /// Checkpoints of every namespace.
    pub checkpoints: i64,
    /// The latest checkpoint's `ts`.
    pub last_activity: Option<String>,
    pub latest_checkpoint: Option<String>,
    /// Why the latest checkpoint could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadPage {
    pub threads: Vec<ThreadRow>,
    pub has_more: bool,
}

/// The `messages` channel at one checkpoint of the root graph.
#[derive(Debug, Clone)]
pub struct StateAt {
    pub checkpoint_id: String,
    pub ts: String,
    pub messages: Vec<LangChainMessage>,
    pub unread: Vec<UnreadMessage>,
    /// What was read but not understood.
    pub warnings: Vec<String>,
}

impl LangGraphDb {
    /// Threads by their latest checkpoint, newest first: `limit` of them from `offset`, those
    /// whose id or latest messages contain `search` (any case) when it is given.
    pub async fn thread_page(
        &self,
        search: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<ThreadPage, LangGraphError> {
        // Without a search, the threads before `offset` are known from the order alone: they
        // are passed over unread, so a later page costs what the first does.
        let unread = if search.is_none_or(str::is_empty) {
            offset
        } else {
            0
        };
        let mut threads = Vec::new();
        let mut skipped = unread;
        let mut has_more = false;
        self.scan_threads_from(search, unread, &CancelFlag::default(), |row| {
            if skipped < offset {
                skipped += 1;
                return ControlFlow::Continue(());
            }
            if threads.len() == limit {
                has_more = true;
                return ControlFlow::Break(());
            }
            threads.push(row);
            ControlFlow::Continue(())
        })
        .await?;
        Ok(ThreadPage { threads, has_more })
    }

    /// Hands each thread to `found`, newest latest checkpoint first, as soon as it is read:
    /// with `search`, only those whose id or latest messages contain it (any case), so a search
    /// that decodes every thread's latest checkpoint shows its matches as it goes. Stops when
    /// `found` breaks or `stop` is cancelled.
    pub async fn scan_threads(
        &self,
        search: Option<&str>,
        stop: &CancelFlag,
        found: impl FnMut(ThreadRow) -> ControlFlow<()>,
    ) -> Result<(), LangGraphError> {
        self.scan_threads_from(search, 0, stop, found).await
    }

    /// [`LangGraphDb::scan_threads`] past the first `unread` threads in its order, which are not
    /// read; only without a search, whose matches are known once read.
    async fn scan_threads_from(
        &self,
        search: Option<&str>,
        unread: usize,
        stop: &CancelFlag,
        mut found: impl FnMut(ThreadRow) -> ControlFlow<()>,
    ) -> Result<(), LangGraphError> {
        let mut all = self.pool.threads().await.map_err(|e| self.failed(e))?;
        // Ids sort chronologically; a thread with no root checkpoint goes last.
        all.sort_by(|a, b| {
            b.latest_checkpoint_id
                .cmp(&a.latest_checkpoint_id)
                .then_with(|| a.thread_id.cmp(&b.thread_id))
        });
        let needle = search.map(str::to_lowercase).filter(|s| !s.is_empty());
        let with_messages = needle.is_some();
        debug_assert!(!with_messages || unread == 0, "a search reads every thread");
        // Each row is a read of the latest checkpoint and its decode: a few are under way at
        // once, so one thread's bytes come off the database while another's are decoded. The
        // rows still come out in order; those under way when the scan stops are dropped.
        let mut rows = stream::iter(all.into_iter().skip(unread))
            .map(|summary| self.thread_row(summary, with_messages))
            .buffered(READS_AT_ONCE);
        while let Some(read) = rows.next().await {
            if stop.is_cancelled() {
                break;
            }
            let (row, messages) = read?;
            if let Some(needle) = &needle {
                let matches = row.id.to_lowercase().contains(needle)
                    || messages
                        .iter()
                        .filter_map(LangChainMessage::to_prompt_message)
                        .any(|m| m.content.text().to_lowercase().contains(needle));
                if !matches {
                    continue;
                }
            }
            if found(row).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// A thread's row and, `with_messages`, its latest messages (what a search reads); without
    /// them the latest checkpoint's messages are only counted. A latest checkpoint that cannot
    /// be read (an encrypted one without its key, say) is a row that says why; only a failed
    /// query is an error.
    async fn thread_row(
        &self,
        summary: ThreadSummary,
        with_messages: bool,
    ) -> Result<(ThreadRow, Vec<LangChainMessage>), LangGraphError> {
        let mut row = ThreadRow {
            id: summary.thread_id,
            messages: None,
            checkpoints: summary.checkpoints,
            last_activity: None,
            latest_checkpoint: summary.latest_checkpoint_id,
            error: None,
        };
        let Some(latest) = row.latest_checkpoint.clone() else {
            return Ok((row, Vec::new()));
        };
        let read = if with_messages {
            self.state_at(&row.id, &latest).await.map(|state| {
                let glance = Glance {
                    ts: state.ts,
                    messages: state.messages.len(),
                };
                (glance, state.messages)
            })
        } else {
            match self.stored_root(&row.id, &latest).await {
                Ok(stored) => self.glance(stored).await.map(|glance| (glance, Vec::new())),
                Err(error) => Err(error),
            }
        };
        match read {
            Ok((glance, messages)) => {
                row.messages = Some(glance.messages);
                row.last_activity = Some(glance.ts);
                Ok((row, messages))
            }
            Err(error @ LangGraphError::Query { .. }) => Err(error),
            Err(error) => {
                row.error = Some(error.to_string());
                Ok((row, Vec::new()))
            }
        }
    }

    /// A thread's checkpoints of every namespace, as a tree; no checkpoint is decoded.
    pub async fn tree(&self, thread: &str) -> Result<CheckpointTree, LangGraphError> {
        let (rows, tasks) = self
            .pool
            .thread_rows(thread)
            .await
            .map_err(|e| self.failed(e))?;
        if rows.is_empty() {
            return Err(LangGraphError::UnknownThread(thread.to_owned()));
        }
        Ok(CheckpointTree::build(&rows, &tasks))
    }

    /// The checkpoint `get_state` reads: the greatest id of the root graph's, `None` when the
    /// thread has only subgraph checkpoints. No checkpoint row is read, so this costs the same
    /// on a thread of any length.
    pub async fn latest_checkpoint(&self, thread: &str) -> Result<Option<String>, LangGraphError> {
        let (latest, exists) = self
            .pool
            .latest_checkpoint_id(thread)
            .await
            .map_err(|e| self.failed(e))?;
        if !exists {
            return Err(LangGraphError::UnknownThread(thread.to_owned()));
        }
        Ok(latest)
    }

    /// A root checkpoint of a thread as stored.
    async fn stored_root(
        &self,
        thread: &str,
        checkpoint: &str,
    ) -> Result<StoredCheckpoint, LangGraphError> {
        self.pool
            .checkpoint(thread, ROOT_NAMESPACE, checkpoint)
            .await
            .map_err(|e| self.failed(e))?
            .ok_or_else(|| LangGraphError::UnknownCheckpoint {
                thread: thread.to_owned(),
                error: crate::sources::langgraph::decode::tree::UnknownCheckpoint::new(checkpoint),
            })
    }

    /// The state at a root checkpoint of a thread.
    pub async fn state_at(
        &self,
        thread: &str,
        checkpoint: &str,
    ) -> Result<StateAt, LangGraphError> {
        let stored = self.stored_root(thread, checkpoint).await?;
        let (body, warnings) = self.decode(&stored)?;
        let (messages, unread) = body.messages();
        Ok(StateAt {
            checkpoint_id: body.id,
            ts: body.ts,
            messages,
            unread,
            warnings: warnings.iter().map(ToString::to_string).collect(),
        })
    }
}

/// Whether an error is a missing or wrong key, which `LANGGRAPH_AES_KEY` is the way out of.
pub fn needs_key(error: &LangGraphError) -> bool {
    let decode = match error {
        LangGraphError::Checkpoint(
            CheckpointError::Decode { error, .. } | CheckpointError::Blob { error, .. },
        ) => error,
        _ => return false,
    };
    matches!(
        decode,
        DecodeError::MissingKey { .. } | DecodeError::WrongKey
    )
}

//! A LangGraph database's threads as conversations: the list (newest latest checkpoint first,
//! with its message count read from that checkpoint only), the search over thread ids and
//! message text, a thread's checkpoint tree (no checkpoint decoded) and the state at one
//! checkpoint.

use serde::Serialize;

use super::read::ThreadSummary;
use super::saver::{LangGraphDb, LangGraphError};
use super::stored::CheckpointError;
use crate::memory::langgraph::DecodeError;
use crate::memory::langgraph::checkpoint::UnreadMessage;
use crate::memory::langgraph::message::LangChainMessage;
use crate::memory::langgraph::tree::{CheckpointTree, ROOT_NAMESPACE};

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
        let mut all = self.pool.threads().await.map_err(|e| self.failed(e))?;
        // Ids sort chronologically; a thread with no root checkpoint goes last.
        all.sort_by(|a, b| {
            b.latest_checkpoint_id
                .cmp(&a.latest_checkpoint_id)
                .then_with(|| a.thread_id.cmp(&b.thread_id))
        });
        let needle = search.map(str::to_lowercase).filter(|s| !s.is_empty());
        let mut threads = Vec::new();
        let mut skipped = 0;
        let mut has_more = false;
        for summary in all {
            let (row, messages) = self.thread_row(summary).await?;
            if let Some(needle) = &needle {
                let found = row.id.to_lowercase().contains(needle)
                    || messages
                        .iter()
                        .filter_map(LangChainMessage::to_prompt_message)
                        .any(|m| m.content.text().to_lowercase().contains(needle));
                if !found {
                    continue;
                }
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            if threads.len() == limit {
                has_more = true;
                break;
            }
            threads.push(row);
        }
        Ok(ThreadPage { threads, has_more })
    }

    /// A thread's row and its latest messages (what a search reads). A checkpoint without its key is an
    /// error; one that cannot be read otherwise is a row that says why.
    async fn thread_row(
        &self,
        summary: ThreadSummary,
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
        match self.state_at(&row.id, &latest).await {
            Ok(state) => {
                row.messages = Some(state.messages.len());
                row.last_activity = Some(state.ts);
                Ok((row, state.messages))
            }
            Err(error) if needs_key(&error) => Err(error),
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

    /// The state at a root checkpoint of a thread.
    pub async fn state_at(
        &self,
        thread: &str,
        checkpoint: &str,
    ) -> Result<StateAt, LangGraphError> {
        let stored = self
            .pool
            .checkpoint(thread, ROOT_NAMESPACE, checkpoint)
            .await
            .map_err(|e| self.failed(e))?
            .ok_or_else(|| LangGraphError::UnknownCheckpoint {
                thread: thread.to_owned(),
                error: crate::memory::langgraph::tree::UnknownCheckpoint {
                    id: checkpoint.to_owned(),
                },
            })?;
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

/// Whether an error is a missing or wrong key: the whole command fails on it, so the operator
/// sets `LANGGRAPH_AES_KEY` rather than reading a list of unreadable rows.
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

//! LangGraph's threads through the checkpoint-history capability: the tree from the rows alone
//! (`checkpoint_tree.rs`), one checkpoint decoded with its `messages` channel as neutral
//! messages and its tasks' writes, and the channel cut by LangGraph's recommended trim.

use super::checkpoint_tree::thread_tree;
use super::decode::budget::recommended_cut;
use super::decode::message::LangChainMessage;
use super::decode::tree::{UnknownCheckpoint, node_of_task};
use super::saver::{LangGraphDb, LangGraphError};
use crate::memory::trim::{MessageCounter, TrimError};
use crate::sources::checkpoint_history::{
    CheckpointHistory, CheckpointMessage, CheckpointState, MessagesBudget, NodeWrite,
    StoredToolCall, ThreadTree,
};
use crate::sources::conversation::SourceFuture;
use crate::store::Store;

/// Reads of a LangGraph database's threads for a viewer.
pub struct ThreadHistories;

impl CheckpointHistory for ThreadHistories {
    fn tree<'a>(&'a self, store: &'a Store, thread: &'a str) -> SourceFuture<'a, ThreadTree> {
        Box::pin(async move {
            let checkpoints = LangGraphDb::open(store)?.tree(thread).await?;
            let tree = thread_tree(thread, &checkpoints, None).map_err(|error| {
                LangGraphError::UnknownCheckpoint {
                    thread: thread.to_owned(),
                    error,
                }
            })?;
            Ok(tree)
        })
    }

    fn checkpoint<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        namespace: &'a str,
        checkpoint_id: &'a str,
    ) -> SourceFuture<'a, CheckpointState> {
        Box::pin(async move {
            let db = LangGraphDb::open(store)?;
            Ok(load_checkpoint(&db, thread, namespace, checkpoint_id).await?)
        })
    }

    fn budget(
        &self,
        checkpoint: &CheckpointState,
        counter: &dyn MessageCounter,
        max_tokens: i64,
    ) -> Result<MessagesBudget, TrimError> {
        let prompt = checkpoint
            .messages
            .iter()
            .filter_map(|m| m.prompt.clone())
            .collect();
        recommended_cut(prompt, counter, max_tokens)
    }
}

/// Reads one checkpoint of `thread` in `namespace`: the only checkpoint decoded.
async fn load_checkpoint(
    db: &LangGraphDb,
    thread: &str,
    namespace: &str,
    checkpoint: &str,
) -> Result<CheckpointState, LangGraphError> {
    let stored = db
        .pool
        .checkpoint(thread, namespace, checkpoint)
        .await
        .map_err(|e| db.failed(e))?
        .ok_or_else(|| LangGraphError::UnknownCheckpoint {
            thread: thread.to_owned(),
            error: UnknownCheckpoint::new(checkpoint),
        })?;
    let (body, warnings) = db.decode(&stored)?;
    let (messages, unread) = body.messages();
    let writes = stored
        .writes
        .iter()
        .map(|write| NodeWrite {
            node: node_of_task(&write.task_path),
            task_path: write.task_path.clone(),
            task_id: write.task_id.clone(),
            idx: write.idx,
            channel: write.channel.clone(),
            value: db
                .decode_write(write)
                .map(|decoded| decoded.value.to_json())
                .map_err(|error| error.to_string()),
        })
        .collect();
    Ok(CheckpointState {
        namespace: namespace.to_owned(),
        checkpoint_id: body.id,
        ts: body.ts,
        messages: messages.iter().map(checkpoint_message).collect(),
        warnings: unread
            .iter()
            .map(|u| format!("message {}: {}", u.index, u.reason))
            .chain(warnings.iter().map(ToString::to_string))
            .collect(),
        writes,
    })
}

/// A LangChain message as the viewer draws it: its `type` and class, its fields as stored, and
/// what a model sees of it (nothing of a `RemoveMessage`).
pub fn checkpoint_message(message: &LangChainMessage) -> CheckpointMessage {
    CheckpointMessage {
        label: format!("{} ({})", message.kind, message.class),
        name: message.name.clone(),
        id: message.id.clone(),
        tool_call_id: message.tool_call_id.clone(),
        status: message.status.clone(),
        content: message.content.clone(),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| StoredToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.args.clone(),
            })
            .collect(),
        usage: message.usage_metadata.clone(),
        prompt: message.to_prompt_message(),
    }
}

#[cfg(test)]
#[path = "thread_history_tests.rs"]
mod tests;

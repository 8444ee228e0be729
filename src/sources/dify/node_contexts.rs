//! Dify's node contexts (and memscope's own schema's, in Dify's tables): the thread node memory
//! reads, by Dify's walk or a chosen leaf's tree path, and which of its runs Dify archived or
//! lost; the node executions of a conversation's runs, their offloaded columns followed; and
//! where Dify keeps a node's memory file.

use super::executions::resolve_offloads;
use super::window::{conversation_info, load_conversation};
use crate::memory::history::{MAX_ROW_WINDOW, PopRule};
use crate::memory::node_context::{ThreadTurn, thread_turns};
use crate::memory::thread::ExtractionMode;
use crate::sources::conversation::{SourceError, SourceFuture};
use crate::sources::node_context::{ExecutionDocs, NodeContexts, NodeConversation, NodeThread};
use crate::storage::ObjectStore;
use crate::store::{NodeExecutionBrief, Store};

pub struct DifyNodeContexts;

impl NodeContexts for DifyNodeContexts {
    fn thread<'a>(
        &'a self,
        store: &'a Store,
        conversation_id: &'a str,
        leaf: Option<&'a str>,
        extraction: ExtractionMode,
        pop_rule: PopRule,
    ) -> SourceFuture<'a, NodeThread> {
        Box::pin(load_thread(
            store,
            conversation_id,
            leaf,
            extraction,
            pop_rule,
        ))
    }

    fn conversation_executions<'a>(
        &'a self,
        store: &'a Store,
        conversation_id: &'a str,
    ) -> SourceFuture<'a, Vec<NodeExecutionBrief>> {
        Box::pin(async move {
            let conversation = load_conversation(store, conversation_id, None).await?;
            let run_ids: Vec<String> = conversation
                .rows
                .iter()
                .filter_map(|row| row.workflow_run_id.clone())
                .collect();
            Ok(store.node_execution_briefs(&run_ids).await?)
        })
    }

    fn executions_in_each<'a>(
        &'a self,
        store: &'a Store,
        storage: &'a ObjectStore,
        wanted: &'a [(String, String)],
    ) -> SourceFuture<'a, Vec<Vec<ExecutionDocs>>> {
        Box::pin(async move {
            let mut records = Vec::new();
            let mut counts = Vec::with_capacity(wanted.len());
            for (run_id, node_id) in wanted {
                let found = store.node_executions_in_run(run_id, node_id).await?;
                counts.push(found.len());
                records.extend(found);
            }
            let mut docs = resolve_offloads(storage, records).await.into_iter();
            Ok(counts
                .into_iter()
                .map(|count| docs.by_ref().take(count).collect())
                .collect())
        })
    }

    fn executions_in_runs<'a>(
        &'a self,
        store: &'a Store,
        storage: &'a ObjectStore,
        run_ids: &'a [String],
        node_id: &'a str,
    ) -> SourceFuture<'a, Vec<ExecutionDocs>> {
        Box::pin(async move {
            let records = store.node_executions_in_runs(run_ids, node_id).await?;
            Ok(resolve_offloads(storage, records).await)
        })
    }

    /// `node_memory/{app_id}/{conversation_id}/{node_id}.json`.
    fn memory_file_key(&self, conversation: &NodeConversation, node_id: &str) -> String {
        memory_file_key(conversation, node_id)
    }
}

/// `node_memory/{app_id}/{conversation_id}/{node_id}.json`: the key of a node memory file in
/// Dify's storage.
pub fn memory_file_key(conversation: &NodeConversation, node_id: &str) -> String {
    format!(
        "node_memory/{}/{}/{node_id}.json",
        conversation.app_id, conversation.id
    )
}

/// Without a leaf, Dify's own query (the newest 500 rows, extraction, placeholder pop); with
/// one, the tree path from that leaf up to its root. Then which runs have no `workflow_runs`
/// row: archived by Dify (`workflow_archive_logs`), or missing.
async fn load_thread(
    store: &Store,
    conversation_id: &str,
    leaf: Option<&str>,
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Result<NodeThread, SourceError> {
    let (info, rows_newest_first) = match leaf {
        None => {
            let info = conversation_info(store, conversation_id).await?;
            let rows = store
                .history_messages(&info.id, MAX_ROW_WINDOW as i64)
                .await?;
            (info, rows)
        }
        Some(leaf) => {
            let conversation = load_conversation(store, conversation_id, None).await?;
            let tree = conversation.tree();
            let node = conversation.find(&tree, leaf)?;
            let rows = conversation.path_newest_first(&tree, node);
            (conversation.info, rows)
        }
    };
    let turns = thread_turns(&rows_newest_first, extraction, pop_rule);
    let run_ids: Vec<String> = turns.iter().map(|t| t.workflow_run_id.clone()).collect();
    let existing = store.existing_workflow_runs(&run_ids).await?;
    let gone: Vec<&ThreadTurn> = turns
        .iter()
        .filter(|t| !existing.contains(&t.workflow_run_id.to_lowercase()))
        .collect();
    let gone_ids: Vec<String> = gone.iter().map(|t| t.workflow_run_id.clone()).collect();
    let archived_ids = store.archived_workflow_runs(&gone_ids).await?;
    let (archived, dangling): (Vec<ThreadTurn>, Vec<ThreadTurn>) = gone
        .into_iter()
        .cloned()
        .partition(|t| archived_ids.contains(&t.workflow_run_id.to_lowercase()));
    Ok(NodeThread {
        info: info.into(),
        leaf: leaf.map(str::to_owned),
        turns,
        dangling,
        archived,
    })
}

//! What a node's context at the thread's end is read from: its node memory file in the app's
//! storage and its executions in the thread's last run.

use serde::Serialize;

use super::thread::node_contexts;
use crate::inspect::InspectError;
use crate::memory::node_context::NodeProblem;
use crate::sources::node_context::{ExecutionDocs, NodeThread};
use crate::storage::ObjectStore;
use crate::storage::files::FileReadError;
use crate::store::Store;

/// The node memory file as read from object storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum MemoryFileRead {
    Missing { path: String },
    Unreadable { problem: NodeProblem },
    Read { path: String, bytes: Vec<u8> },
}

/// Whether a node id stays inside its conversation's directory as a file name: node ids are
/// plain names; a separator or `..` in one cannot name a file of that directory.
fn is_plain_name(node_id: &str) -> bool {
    !node_id.is_empty() && node_id != ".." && !node_id.contains(['/', '\\'])
}

/// Reads a node memory file without blocking (see [`ObjectStore::read`]): a FIFO, an oversized
/// object or a stalled mount or server is a problem naming where it is, within a bounded time.
pub async fn read_memory_file(storage: &ObjectStore, key: &str) -> MemoryFileRead {
    memory_file_read(&storage.location(key), storage.read(key).await)
}

/// What a memory file read gave, as [`MemoryFileRead`]; `shown` is where the file is.
pub fn memory_file_read(shown: &str, read: Result<Vec<u8>, FileReadError>) -> MemoryFileRead {
    let shown = shown.to_owned();
    match read {
        Ok(bytes) => MemoryFileRead::Read { path: shown, bytes },
        Err(FileReadError::NotFound) => MemoryFileRead::Missing { path: shown },
        Err(error) => MemoryFileRead::Unreadable {
            problem: NodeProblem::UnreadableFile {
                path: shown,
                error: error.to_string(),
            },
        },
    }
}

/// Everything a node's context at the thread's end is computed from.
#[derive(Debug, Clone, Serialize)]
pub struct NodeSources {
    pub node_id: String,
    pub memory_file: MemoryFileRead,
    /// The node's executions in the thread's last run, oldest first.
    pub last_run: Vec<ExecutionDocs>,
}

/// Reads a node's memory file and its executions in the thread's last run: two indexed
/// lookups and at most three file reads, whatever the conversation's length.
pub async fn load_node_sources(
    store: &Store,
    storage: &ObjectStore,
    thread: &NodeThread,
    node_id: &str,
) -> Result<NodeSources, InspectError> {
    let nodes = node_contexts(store)?;
    let key = nodes.memory_file_key(&thread.info, node_id);
    let memory_file = if is_plain_name(node_id) {
        read_memory_file(storage, &key).await
    } else {
        MemoryFileRead::Missing {
            path: storage.location(&key),
        }
    };
    let last_run = match thread.last_turn() {
        Some(turn) => {
            let wanted = [(turn.workflow_run_id.clone(), node_id.to_owned())];
            let mut each = nodes.executions_in_each(store, storage, &wanted).await?;
            each.pop().unwrap_or_default()
        }
        None => Vec::new(),
    };
    Ok(NodeSources {
        node_id: node_id.to_owned(),
        memory_file,
        last_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_that_leave_the_directory_are_not_file_names() {
        assert!(is_plain_name("1733817600001"));
        assert!(is_plain_name("llm.v2"));
        for bad in ["", "..", "../x", "a/b", "a\\b"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }
}

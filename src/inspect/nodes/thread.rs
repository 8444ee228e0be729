//! The thread node memory reads, and the node-context capability every other read of node
//! inspection goes through: the database's source reads them (`sources/node_context.rs`).

use crate::inspect::InspectError;
use crate::memory::history::PopRule;
use crate::memory::thread::ExtractionMode;
use crate::sources::node_context::{NodeContexts, NodeThread};
use crate::sources::node_contexts_of;
use crate::store::{Part, Store, StoreError};

/// The node-context capability of the database's source; a database whose source has none has
/// no node contexts, which the error says as a missing part does.
pub(super) fn node_contexts(store: &Store) -> Result<&'static dyn NodeContexts, InspectError> {
    node_contexts_of(store.profile().source).ok_or_else(|| {
        InspectError::Store(StoreError::Lacks {
            url: store.url().to_owned(),
            explanation: store.profile().lacks(Part::NodeContexts),
        })
    })
}

/// Loads the thread node memory reads: without a leaf, the app's own query (Dify's: the
/// newest 500 rows, extraction, placeholder pop); with one, the tree path from that leaf up to
/// its root.
pub async fn load_thread(
    store: &Store,
    conversation_id: &str,
    leaf: Option<&str>,
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Result<NodeThread, InspectError> {
    Ok(node_contexts(store)?
        .thread(store, conversation_id, leaf, extraction, pop_rule)
        .await?)
}

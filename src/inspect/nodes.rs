//! Per-node contexts of a chatflow conversation: which nodes ran, what each LLM node remembers
//! (design A's file, design B's `outputs["context"]`) and what it actually sent
//! (`process_data["prompts"]`), with the same token budget as conversation history.
//!
//! Loading (`load_*`, async: the database and object storage) is separate from computing
//! (plain functions over what was loaded), so a UI loads in the background and recomputes a
//! budget or switches sources without touching the database again.

//!
//! What is read comes from the node-context capability of the database's source
//! (`sources/node_context.rs`: the thread, the executions with their columns in full, where a
//! node's memory file is; Dify's in `sources/dify/node_contexts.rs`), in neutral types. The
//! parts: the thread node memory reads and that capability (`thread`), what a context is read
//! from (`sources`), a context and its budget (`context`), a node across the thread's turns
//! (`timeline`), the nodes pane (`list`) and what `nodes` and `node-context` report (`report`).

mod context;
#[cfg(test)]
mod fixtures;
mod list;
pub mod report;
mod sources;
mod thread;
mod timeline;

pub use crate::sources::node_context::{
    CHATFLOW_MODE, ExecutionDocs, FullColumn, NodeConversation, NodeThread,
};
pub use context::{
    ContextSource, EmptyOrProblem, EmptyState, NodeContext, NodeContextView, node_context,
    parse_memory_read,
};
pub use list::{
    LatestContext, NodeSummary, latest_context, load_conversation_executions,
    load_latest_executions, resolve_node, summarize_nodes,
};
pub use sources::{
    MemoryFileRead, NodeSources, load_node_sources, memory_file_read, read_memory_file,
};
pub use thread::load_thread;
pub use timeline::{Timeline, TimelineTurn, load_timeline, sparkline, timeline};

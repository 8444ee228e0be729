//! The Trip Planner chatflow: its app-wide ids, its nodes and the LLM nodes' system prompts.

use crate::demo::files::FileRoot;
use crate::store::rows::AppRow;

pub(super) struct Node {
    pub(super) id: &'static str,
    pub(super) node_type: &'static str,
    pub(super) title: &'static str,
}

pub(super) const START: Node = Node {
    id: "1733817600000",
    node_type: "start",
    title: "Start",
};
/// Keeps node-scoped memory in a node memory file of `turns` keyed by workflow run.
pub(super) const RESEARCHER: Node = Node {
    id: "1733817600001",
    node_type: "llm",
    title: "Research",
};
/// Keeps node-scoped memory in a `messages` list file.
pub(super) const WRITER: Node = Node {
    id: "1733817600002",
    node_type: "llm",
    title: "Write reply",
};
pub(super) const ANSWER: Node = Node {
    id: "answer",
    node_type: "answer",
    title: "Answer",
};

pub(super) const RESEARCHER_SYSTEM: &str = "You are a travel researcher. Collect concrete facts (times, \
     prices, opening hours) for the traveller's request. Use web_search when unsure.";
pub(super) const WRITER_SYSTEM: &str = "You write friendly, concise travel plans from the research notes \
     you are given. Never invent facts that are not in the notes.";

/// The app-wide ids of the chatflow.
pub(super) struct Chatflow<'a> {
    pub(super) app: &'a AppRow,
    pub(super) workflow_id: String,
    pub(super) storage: FileRoot<'a>,
}

//! `thread` over every source: a conversation's tree (Dify's regeneration tree, LangGraph's
//! checkpoints, a Langflow session's log as one path) with the path the model sees marked, in
//! one document whatever the source.

use serde::Serialize;

use super::InspectError;
use super::document::{DocumentHead, conversations_of, key_options};
use crate::sources::conversation::{
    Command, Extra, SourceOptions, SourceTree, TreeNode, TreeRequest,
};
use crate::sources::opened::ConversationKey;
use crate::store::Store;

/// A conversation's tree as `thread --json` prints it: every key on every source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadDocument {
    #[serde(flatten)]
    pub head: DocumentHead,
    /// The conversation's id, as `conversations` lists it.
    pub id: String,
    pub title: Option<String>,
    /// Every node, in the order the text output draws them.
    pub nodes: Vec<ThreadNode>,
    /// The ids on the path the model sees, oldest first.
    pub thread: Vec<String>,
    pub extra: Extra,
    /// The lines the text output opens with, in the source's words.
    #[serde(skip)]
    pub header: Vec<String>,
    /// The lines the text output closes with.
    #[serde(skip)]
    pub footer: Vec<String>,
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadNode {
    pub id: String,
    pub parent: Option<String>,
    /// Branch depth, drawn as indentation.
    pub depth: usize,
    pub on_thread: bool,
    /// The node in a line, as the text output prints it.
    pub text: String,
    /// The heading of the part of the tree it is drawn under (a LangGraph subgraph); `null` for
    /// the conversation's own tree.
    pub group: Option<String>,
    pub extra: Extra,
}

impl ThreadDocument {
    fn of(head: DocumentHead, tree: SourceTree) -> ThreadDocument {
        ThreadDocument {
            head,
            id: tree.id,
            title: tree.title,
            nodes: tree.nodes.into_iter().map(ThreadNode::of).collect(),
            thread: tree.thread,
            extra: tree.extra,
            header: tree.header,
            footer: tree.footer,
        }
    }
}

impl ThreadNode {
    fn of(node: TreeNode) -> ThreadNode {
        ThreadNode {
            id: node.id,
            parent: node.parent,
            depth: node.depth,
            on_thread: node.on_thread,
            text: node.line,
            group: node.group,
            extra: node.extra,
        }
    }
}

/// The tree of the conversation `request` names, its settings checked against what the
/// database's source takes for `thread`.
pub async fn thread(store: &Store, request: &TreeRequest) -> Result<ThreadDocument, InspectError> {
    let source = conversations_of(store)?;
    request.options.check(
        store.profile().source.name(),
        source.settings(),
        Command::Thread,
    )?;
    let tree = source.tree(store, request).await?;
    Ok(ThreadDocument::of(DocumentHead::of(store), tree))
}

/// The tree of the conversation `key` names, as a view opened from the list shows it: in its
/// scope and view, every node's details read.
pub async fn thread_of_key(
    store: &Store,
    key: &ConversationKey,
) -> Result<ThreadDocument, InspectError> {
    let source = conversations_of(store)?;
    let request = TreeRequest {
        id: key.id.clone(),
        options: key_options(source, key, Command::Thread),
        defaults: SourceOptions::default(),
        details: true,
    };
    thread(store, &request).await
}

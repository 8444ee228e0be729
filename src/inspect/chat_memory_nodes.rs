//! The memory nodes of the chat memories, and the node a person names.
//!
//! A memory node has no table of its own: it is the `memory_node_id` its memories share (one
//! memory per chat), and its title is the label they carry (the oldest memory's, when they
//! differ). A node is named by its whole id, its title (case ignored) or a unique prefix of
//! its id (the first block the TUI shows); a name that matches none is refused with the nodes
//! nearest to it, so a typo never lands a message in a new memory.

use super::{AmbiguousId, InspectError};
use crate::memory::names::Unknown;
use crate::store::{ChatMemorySummary, ID_CANDIDATES, Store, StoreError};

/// One memory node: its id, its title, the policy of its oldest memory and its chats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNode {
    pub id: String,
    pub title: String,
    /// Every label its memories carry, the title first: each names the node.
    pub titles: Vec<String>,
    /// The policy JSON of its oldest memory: what a new chat on the node starts with.
    pub policy: String,
    /// Its memories' chat ids, oldest memory first.
    pub chats: Vec<String>,
}

impl MemoryNode {
    /// The node as messages name it: `id (title)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.id, self.title)
    }
}

/// The nodes of `memories`, by id; each one's title and policy from its oldest memory.
pub fn memory_nodes(memories: &[ChatMemorySummary]) -> Vec<MemoryNode> {
    let mut oldest_first: Vec<&ChatMemorySummary> = memories.iter().collect();
    oldest_first.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let mut nodes: Vec<MemoryNode> = Vec::new();
    for memory in oldest_first {
        match nodes.iter_mut().find(|n| n.id == memory.memory_node_id) {
            Some(node) => {
                if !node.titles.contains(&memory.label) {
                    node.titles.push(memory.label.clone());
                }
                node.chats.push(memory.chat_id.clone());
            }
            None => nodes.push(MemoryNode {
                id: memory.memory_node_id.clone(),
                title: memory.label.clone(),
                titles: vec![memory.label.clone()],
                policy: memory.policy.clone(),
                chats: vec![memory.chat_id.clone()],
            }),
        }
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    nodes
}

/// Every memory node of the database.
pub async fn load_memory_nodes(store: &Store) -> Result<Vec<MemoryNode>, StoreError> {
    Ok(memory_nodes(&store.list_chat_memories().await?))
}

/// The node `typed` names: the one with that id; else the one with that title (case ignored);
/// else the one whose id starts with it (case ignored). A title several nodes share, a prefix
/// several ids share, or a name that matches none fails, the last listing the nodes nearest
/// first.
pub fn resolve_memory_node<'a>(
    nodes: &'a [MemoryNode],
    typed: &str,
) -> Result<&'a MemoryNode, InspectError> {
    if let Some(node) = nodes.iter().find(|n| n.id == typed) {
        return Ok(node);
    }
    let wanted = typed.trim().to_lowercase();
    let titled: Vec<&MemoryNode> = nodes
        .iter()
        .filter(|n| n.titles.iter().any(|t| t.to_lowercase() == wanted))
        .collect();
    match titled[..] {
        [node] => return Ok(node),
        [] => {}
        ref many => {
            return Err(InspectError::AmbiguousTitle {
                title: typed.to_owned(),
                ids: many.iter().map(|n| n.id.clone()).collect(),
            });
        }
    }
    let prefixed: Vec<&MemoryNode> = nodes
        .iter()
        .filter(|n| !wanted.is_empty() && n.id.to_lowercase().starts_with(&wanted))
        .collect();
    match prefixed[..] {
        [node] => Ok(node),
        [] => {
            let valid = nodes.iter().map(|n| {
                let mut names = vec![n.id.clone(), n.id.chars().take(wanted.len()).collect()];
                names.extend(n.titles.iter().cloned());
                (n.label(), names)
            });
            Err(Unknown::by_names("memory node", typed, valid).into())
        }
        ref many => Err(AmbiguousId {
            what: "memory node",
            prefix: typed.trim().to_owned(),
            candidates: many.iter().take(ID_CANDIDATES).map(|n| n.label()).collect(),
        }
        .into()),
    }
}

/// Where `chat-memory add` puts a message: the memory of (node, chat), which exists unless
/// `create` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddTarget<'a> {
    /// The node's whole id: the one resolved, or the typed one for a new node.
    pub node_id: String,
    /// The node, when it has memories already.
    pub node: Option<&'a MemoryNode>,
}

/// The memory `chat-memory add --node typed --chat chat` writes to. Without `create`, the node
/// must exist and have a memory for `chat` (a chat it has not is refused with its chats,
/// nearest first); with it, a node that matches nothing is a new node of that id, and a chat
/// the node has not gets a new memory.
pub fn add_target<'a>(
    nodes: &'a [MemoryNode],
    typed: &str,
    chat: &str,
    create: bool,
) -> Result<AddTarget<'a>, InspectError> {
    let node = match resolve_memory_node(nodes, typed) {
        Ok(node) => node,
        Err(InspectError::Unknown(_)) if create => {
            return Ok(AddTarget {
                node_id: typed.trim().to_owned(),
                node: None,
            });
        }
        Err(error) => return Err(error),
    };
    if !create && !node.chats.iter().any(|c| c == chat) {
        let what = format!("chat on memory node {}", node.label());
        return Err(Unknown::new(what, chat, node.chats.iter().cloned()).into());
    }
    Ok(AddTarget {
        node_id: node.id.clone(),
        node: Some(node),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: &str, node: &str, chat: &str, label: &str, age: i64) -> ChatMemorySummary {
        let at = chrono::DateTime::from_timestamp(1_770_000_000 + age, 0)
            .unwrap()
            .naive_utc();
        ChatMemorySummary {
            id: id.into(),
            memory_node_id: node.into(),
            chat_id: chat.into(),
            label: label.into(),
            policy: format!("{{\"max_messages\": {age}}}"),
            created_at: at,
            updated_at: at,
            message_count: 1,
        }
    }

    const SUPPORT: &str = "8958de8a-0d2c-4f4e-9a41-0f6d2c1b7e55";
    const AGENT: &str = "3c1f0a9e-77b2-4c1d-8e0f-5a6b7c8d9e0f";
    const SESSION: &str = "3c9e2b71-1a2b-4c3d-9e8f-7a6b5c4d3e2f";

    fn nodes() -> Vec<MemoryNode> {
        memory_nodes(&[
            memory(
                "m2",
                SUPPORT,
                "user-2211-session-1",
                "Support Chat History",
                2,
            ),
            memory(
                "m1",
                SUPPORT,
                "user-1042-session-7",
                "Support Chat History",
                1,
            ),
            memory("m3", AGENT, "workflow-1", "Agent Scratchpad", 3),
            memory("m4", SESSION, "ext-chat-8812", "Session Context", 4),
        ])
    }

    #[test]
    fn a_node_is_its_memories_under_one_id_with_the_oldest_ones_title_and_policy() {
        let nodes = nodes();
        assert_eq!(nodes.len(), 3);
        let support = nodes.iter().find(|n| n.id == SUPPORT).unwrap();
        assert_eq!(support.title, "Support Chat History");
        assert_eq!(support.policy, "{\"max_messages\": 1}");
        assert_eq!(
            support.chats,
            ["user-1042-session-7", "user-2211-session-1"]
        );
    }

    #[test]
    fn a_node_is_named_by_its_id_its_title_or_a_unique_prefix() {
        let nodes = nodes();
        for typed in [
            SUPPORT,
            "8958de8a",
            "8958",
            "8958DE8A",
            "support chat history",
        ] {
            let node = resolve_memory_node(&nodes, typed).unwrap();
            assert_eq!(node.id, SUPPORT, "{typed}");
        }
    }

    #[test]
    fn an_ambiguous_prefix_lists_its_candidates() {
        let nodes = nodes();
        let error = resolve_memory_node(&nodes, "3c").unwrap_err().to_string();
        assert!(error.contains("ambiguous"), "{error}");
        assert!(error.contains("Agent Scratchpad") && error.contains("Session Context"));
    }

    #[test]
    fn a_typo_is_refused_with_the_nearest_node_first() {
        let nodes = nodes();
        let error = resolve_memory_node(&nodes, "8958de8b").unwrap_err();
        assert!(matches!(error, InspectError::Unknown(_)), "{error}");
        let text = error.to_string();
        let nearest = text.split("nearest first: ").nth(1).unwrap();
        assert!(nearest.starts_with(SUPPORT), "{text}");
        let titled = resolve_memory_node(&nodes, "Suport Chat History")
            .unwrap_err()
            .to_string();
        assert!(titled.contains("nearest first: 8958de8a"), "{titled}");
    }

    #[test]
    fn only_create_makes_a_new_memory_or_node() {
        let nodes = nodes();
        let existing = add_target(&nodes, "8958de8a", "user-1042-session-7", false).unwrap();
        assert_eq!(existing.node_id, SUPPORT);
        let error = add_target(&nodes, "8958de8a", "user-1042-sesion-7", false)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("nearest first: user-1042-session-7"),
            "{error}"
        );
        let new_chat = add_target(&nodes, "8958de8a", "user-9-session-1", true).unwrap();
        assert_eq!(new_chat.node.map(|n| n.id.as_str()), Some(SUPPORT));
        assert!(add_target(&nodes, "8958de8b", "c", false).is_err());
        let new_node = add_target(&nodes, "8958de8b", "c", true).unwrap();
        assert_eq!(
            (new_node.node_id.as_str(), new_node.node),
            ("8958de8b", None)
        );
        assert!(
            add_target(&nodes, "3c", "c", true).is_err(),
            "still ambiguous"
        );
    }
}

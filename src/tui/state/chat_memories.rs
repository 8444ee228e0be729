//! The chat memories tab: the list, the open memory's page of messages, and the writes that
//! wait for a confirmation.

use rustc_hash::FxHashMap;

use crate::memory::model::Role;
use crate::memory::trim::{ChatMemoryPolicy, LimitType, PolicyStrategy, TrimMode};
use crate::store::rows::{ChatMemoryMessageRow, ChatMemoryRow};
use crate::store::{ChatMemorySummary, DeleteScope};

use super::load::LoadStatus;
use super::screen_unit::{Around, ScreenUnit};
use crate::tui::keymap::KeyContext;

/// Messages per page of an open memory: seed 004's "get memory data" with limit and offset.
pub const MESSAGE_PAGE: i64 = 50;

#[derive(Debug, Clone, Default)]
pub struct ChatMemoriesState {
    pub status: LoadStatus,
    pub generation: u64,
    pub rows: Vec<ChatMemorySummary>,
    pub selected: usize,
    /// Tokens of each memory's whole list, filled in by a background job.
    pub tokens: FxHashMap<String, u64>,
    pub tokens_generation: u64,
    pub open: Option<MemoryView>,
    /// A write job is under way.
    pub writing: bool,
}

impl ChatMemoriesState {
    pub fn selected_row(&self) -> Option<&ChatMemorySummary> {
        self.rows.get(self.selected)
    }
}

/// One page of a memory's messages.
#[derive(Debug, Clone)]
pub struct MemoryView {
    pub id: String,
    pub status: LoadStatus,
    pub generation: u64,
    pub memory: Option<ChatMemoryRow>,
    pub offset: i64,
    pub rows: Vec<ChatMemoryMessageRow>,
    /// Tokens of each row on the page.
    pub tokens: Vec<u64>,
    pub selected: usize,
}

impl MemoryView {
    pub fn new(id: String, generation: u64) -> MemoryView {
        MemoryView {
            id,
            status: LoadStatus::Loading,
            generation,
            memory: None,
            offset: 0,
            rows: Vec::new(),
            tokens: Vec::new(),
            selected: 0,
        }
    }
}

/// A write that waits for "yes".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    ApplyTrim {
        memory_id: String,
        policy: ChatMemoryPolicy,
    },
    Undo {
        memory_id: String,
    },
    Delete {
        memory_id: String,
        scope: DeleteScope,
        roles: Vec<Role>,
    },
    Add {
        memory_id: String,
        role: Role,
        content: String,
        /// Seed 004's files JSON (`{"files": [...]}` or a bare list).
        files: Option<serde_json::Value>,
    },
}

impl Write {
    pub fn memory_id(&self) -> &str {
        match self {
            Write::ApplyTrim { memory_id, .. }
            | Write::Undo { memory_id }
            | Write::Delete { memory_id, .. }
            | Write::Add { memory_id, .. } => memory_id,
        }
    }
}

/// Which chat memory form is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKind {
    Add,
    Delete,
}

/// What a chat memory form is for: which form, on which memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryForm {
    pub kind: FormKind,
    pub memory_id: String,
}

/// A policy in a few words: `tokens ≤ 2000 · drop middle (first 2) · summary`.
pub fn policy_summary(json: &str) -> String {
    let Ok(policy) = ChatMemoryPolicy::from_json(json) else {
        return "bad policy".to_owned();
    };
    let unit = match policy.limit_type {
        LimitType::Messages => "messages",
        LimitType::Tokens => "tokens",
    };
    let mut limit = match (policy.trim_mode, policy.limit_type) {
        (TrimMode::Threshold, _) => format!("{unit} {}→{}", policy.trigger, policy.target),
        (TrimMode::Continuous, LimitType::Messages) => format!("{unit} ≤ {}", policy.max_messages),
        (TrimMode::Continuous, LimitType::Tokens) => format!("{unit} ≤ {}", policy.max_tokens),
    };
    // The predefined messages are pinned and count against the limit: fewer are left for the
    // history than the bare limit suggests.
    let predefined = policy.predefined_messages.len();
    if predefined > 0 {
        limit.push_str(&format!(" incl. {predefined} predefined"));
    }
    let strategy = match policy.strategy {
        PolicyStrategy::DropOldest => "drop oldest".to_owned(),
        PolicyStrategy::DropMiddle => format!("drop middle (first {})", policy.keep_first),
    };
    let mut parts = vec![limit, strategy];
    if policy.summarization.enabled {
        parts.push("summary".to_owned());
    }
    parts.join(" · ")
}

impl ScreenUnit for ChatMemoriesState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        KeyContext::ChatMemories
    }

    fn busy(&self) -> bool {
        self.status.is_loading() || self.open.as_ref().is_some_and(|m| m.status.is_loading())
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        match &self.open {
            Some(open) => {
                let row = open.rows.get(open.selected)?;
                Some(("message id", row.id.clone()))
            }
            None => Some(("chat memory id", self.selected_row()?.id.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_in_a_few_words() {
        assert_eq!(
            policy_summary(
                r#"{"limit_type":"tokens","max_tokens":2000,"strategy":"drop_middle",
                    "keep_first":2,"summarization":{"enabled":true}}"#
            ),
            "tokens ≤ 2000 · drop middle (first 2) · summary"
        );
        assert_eq!(
            policy_summary(r#"{"trim_mode":"threshold","trigger":500,"target":100}"#),
            "messages 500→100 · drop oldest"
        );
        assert_eq!(policy_summary("{"), "bad policy");
        assert_eq!(
            policy_summary(
                r#"{"limit_type":"messages","max_messages":20,"predefined_messages":[
                    {"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#
            ),
            "messages ≤ 20 incl. 2 predefined · drop oldest"
        );
    }
}

//! A LangGraph thread opened for a view: the `messages` channel of its latest checkpoint, and
//! what the model is fed of it under the trim LangGraph's documentation recommends.

use std::sync::Arc;

use super::budget::checkpoint_budget;
use super::decode::budget::channel_budget;
use super::decode::message::LangChainMessage;
use super::saver::LangGraphDb;
use crate::memory::budget_view::BudgetSettings;
use crate::memory::model::{ChatMessage, TokenUsage};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::SourceError;
use crate::sources::opened::{
    ConversationKey, ConversationMemory, FedHistory, OpenConversation, ShownMessage,
};
use crate::store::Store;

/// The channel's messages as decoded, and the ids the view shows them by.
#[derive(Debug, Clone)]
struct ChannelMemory {
    messages: Vec<LangChainMessage>,
    ids: Vec<String>,
}

impl ConversationMemory for ChannelMemory {
    fn fed(
        &self,
        _: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String> {
        let trimmed = channel_budget(&self.messages, &settings.counter, settings.max_tokens)
            .map_err(|e| e.to_string())?;
        let budget = checkpoint_budget(trimmed, self.ids.clone(), settings, cache);
        Ok(FedHistory {
            view: budget.view,
            rule: budget.rule,
            left_out: Vec::new(),
            flagged: Vec::new(),
            flagged_why: "",
            kept_above_cut: budget.kept_above_cut,
            warnings: budget.warnings,
            trim_start: Some(budget.trimmed.trim_start()),
        })
    }
}

/// The thread `key` names, at its latest checkpoint.
pub async fn open(store: &Store, key: &ConversationKey) -> Result<OpenConversation, SourceError> {
    let db = LangGraphDb::open(store)?;
    let tree = db.tree(&key.id).await?;
    let latest = tree.latest().map(|c| c.id.clone()).ok_or_else(|| {
        SourceError::not_found(format!(
            "thread {} has no checkpoint of its root graph",
            key.id
        ))
    })?;
    let state = db.state_at(&key.id, &latest).await?;
    let (messages, memory) = channel(state.messages);
    let mut warnings = state.warnings;
    warnings.extend(
        state
            .unread
            .iter()
            .map(|u| format!("message {}: {}", u.index, u.reason)),
    );
    Ok(OpenConversation {
        key: key.clone(),
        heading: format!(
            "thread {} at its latest checkpoint {} ({})",
            key.id, state.checkpoint_id, state.ts
        ),
        structure: format!(
            "LangGraph keeps a tree of {}, each the whole state after a step: shown \
             here is the latest one's messages channel",
            crate::format::count(tree.root.checkpoints.len() as u64, "checkpoint")
        ),
        memory,
        messages,
        warnings,
        views: None,
    })
}

/// A `messages` channel as the view shows it, and what the model is fed of it.
pub fn channel(
    messages: Vec<LangChainMessage>,
) -> (Vec<ShownMessage>, Arc<dyn ConversationMemory>) {
    let shown: Vec<ShownMessage> = messages
        .iter()
        .enumerate()
        .filter_map(|(index, m)| shown(index, m))
        .collect();
    let ids = shown.iter().map(|m| m.message.id.clone()).collect();
    (shown, Arc::new(ChannelMemory { messages, ids }))
}

/// A LangChain message as the view shows it; `None` for a `RemoveMessage`, which no model sees.
fn shown(index: usize, m: &LangChainMessage) -> Option<ShownMessage> {
    let prompt = m.to_prompt_message()?;
    let usage = m.usage_metadata.as_ref().and_then(|u| {
        Some(TokenUsage {
            input_tokens: u.get("input_tokens")?.as_i64()?,
            output_tokens: u.get("output_tokens")?.as_i64()?,
        })
    });
    let mut marks = Vec::new();
    if m.status.as_deref() == Some("error") {
        marks.push("tool error".to_owned());
    }
    Some(ShownMessage {
        message: ChatMessage {
            id: m.id.clone().unwrap_or_else(|| format!("#{index}")),
            message: prompt,
            created_at: None,
            usage,
        },
        run: None,
        sender: match &m.name {
            Some(name) => format!("{} · {name}", m.kind),
            None => m.kind.clone(),
        },
        files: Vec::new(),
        marks,
        owner: None,
        context_id: None,
    })
}

//! An open conversation as the TUI's session screens show it, for any source whose
//! conversations are not regeneration trees: its source's stored messages with its memory
//! (`sources/opened.rs`).

use super::InspectError;
use super::document::{conversations_of, key_options};
use std::sync::Arc;

use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::History;
use crate::memory::model::{ChatMessage, Role};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{
    Command, HistoryRequest, LeftOutCount, MessageKind, SourceHistory, SourceOptions,
};
use crate::sources::opened::{
    ConversationKey, ConversationMemory, FedHistory, OpenConversation, ShownMessage,
};
use crate::store::Store;

/// Opens the conversation `key` names: as its source shows one, else the messages its
/// `history` feeds the model (with the source's default settings, under `budget`).
pub async fn open_conversation(
    store: &Store,
    key: &ConversationKey,
    budget: &BudgetSettings,
) -> Result<OpenConversation, InspectError> {
    let source = conversations_of(store)?;
    if let Some(opened) = source.open(store, key) {
        return Ok(opened.await?);
    }
    let views = source.views(store, &key.id).await?;
    let request = HistoryRequest {
        id: key.id.clone(),
        options: key_options(source, key, Command::History),
        defaults: SourceOptions::default(),
        budget: budget.clone(),
        details: true,
    };
    let read = source.history(store, &request).await?;
    let mut opened = open_from_history(key.clone(), source.noun(), read);
    opened.views = views;
    Ok(opened)
}

/// The memory of a conversation whose source gives only what is fed (its `history`): the fed
/// messages are recounted under each budget, the rule and what is left out kept as read.
#[derive(Debug, Clone)]
struct FedAsRead {
    history: History,
    rule: String,
    left_out: Vec<LeftOutCount>,
    warnings: Vec<String>,
}

impl ConversationMemory for FedAsRead {
    fn fed(
        &self,
        _: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String> {
        let view = BudgetView::for_history(self.history.clone(), settings, cache);
        let mut warnings = self.warnings.clone();
        warnings.extend(view.warnings());
        Ok(FedHistory {
            view,
            rule: self.rule.clone(),
            left_out: self.left_out.clone(),
            flagged: Vec::new(),
            flagged_why: "",
            kept_above_cut: None,
            warnings,
            trim_start: None,
        })
    }
}

/// Who a fed message is from, as the view names it: its role, or what it is where that says
/// more (a reasoning item is the assistant's, but not what it said).
fn sender_of(kind: MessageKind, role: Role) -> String {
    match kind {
        MessageKind::Reasoning => "reasoning".to_owned(),
        MessageKind::Compaction => "compaction".to_owned(),
        MessageKind::Other => "item".to_owned(),
        MessageKind::Message | MessageKind::ToolCall | MessageKind::ToolResult => {
            role.as_str().to_owned()
        }
    }
}

/// A conversation opened from its `history`: the fed messages are the ones shown.
fn open_from_history(key: ConversationKey, noun: &str, read: SourceHistory) -> OpenConversation {
    let messages = read
        .view
        .history
        .messages
        .iter()
        .zip(&read.messages)
        .map(|(fed, facts)| ShownMessage {
            message: ChatMessage {
                id: fed.source_id.clone(),
                message: fed.message.clone(),
                created_at: facts.at.map(|at| at.naive_utc()),
                usage: None,
            },
            run: None,
            sender: sender_of(facts.kind, fed.message.role),
            files: Vec::new(),
            marks: Vec::new(),
            owner: None,
            context_id: None,
        })
        .collect();
    // The source's own first line says what was read; else the conversation by its id.
    let heading = read.header.first().cloned().unwrap_or_else(|| {
        let title = read.title.as_deref().map(|t| format!(" · {t}"));
        format!("{noun} {}{}", key.id, title.unwrap_or_default())
    });
    OpenConversation {
        key,
        heading,
        structure: format!("shown: the messages the model is fed ({})", read.rule),
        messages,
        memory: Arc::new(FedAsRead {
            history: read.view.history,
            rule: read.rule,
            left_out: read.left_out,
            warnings: Vec::new(),
        }),
        warnings: read.warnings,
        views: None,
    }
}

/// A message whole, for the detail popup: text, tool calls and what the source adds.
pub fn whole(shown: &ShownMessage) -> String {
    let message = &shown.message.message;
    let mut text = format!("{} ({})\n", shown.sender, message.role.as_str());
    if let Some(at) = shown.message.created_at {
        text += &format!("at {at}\n");
    }
    text += &format!("id {}\n", shown.message.id);
    if let Some(run) = &shown.run {
        text += &format!("run {run}\n");
    }
    if let Some(owner) = &shown.owner {
        text += &format!("owner {owner}\n");
    }
    if let Some(context) = &shown.context_id {
        text += &format!("context id {context}\n");
    }
    if let Some(call) = &message.tool_call_id {
        text += &format!("answers tool call {call}\n");
    }
    if let Some(usage) = shown.message.usage {
        text += &format!(
            "tokens of its call: {} in, {} out\n",
            usage.input_tokens, usage.output_tokens
        );
    }
    for mark in &shown.marks {
        text += &format!("⚑ {mark}\n");
    }
    for file in &shown.files {
        text += &format!("file {file}\n");
    }
    text.push('\n');
    text += &message.content.text();
    for call in &message.tool_calls {
        text += &format!("\n\ncalls {}({})", call.name, call.arguments);
    }
    text
}

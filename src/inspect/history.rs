//! `history`: what a conversation's memory feeds the model, under a token budget, in one shape
//! whatever the source: each message with its role, kind, text, tokens, whether it is kept,
//! and the message in the source's own format.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::InspectError;
use super::budget_figures::BudgetFigures;
use super::document::{DocumentHead, conversations_of};
use crate::memory::history::history_prompt_text;
use crate::memory::model::{Content, PromptMessage, Role};
use crate::sources::conversation::{
    Command, Extra, HistoryRequest, LeftOutCount, MessageKind, SourceHistory, rfc3339,
};
use crate::store::Store;

/// A conversation's history as `history --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryDocument {
    #[serde(flatten)]
    pub head: DocumentHead,
    pub id: String,
    pub title: Option<String>,
    /// The rule that chose the messages and the cut, in words.
    pub rule: String,
    #[serde(flatten)]
    pub budget: BudgetFigures,
    pub fits_context: Option<bool>,
    pub dropped: usize,
    pub kept: usize,
    /// Messages of the conversation not fed to the model, with why.
    pub left_out: Vec<LeftOutCount>,
    pub warnings: Vec<String>,
    pub messages: Vec<FedMessage>,
    pub extra: Extra,
    /// The lines the text output opens with.
    #[serde(skip)]
    pub header: Vec<String>,
}

/// One message the memory feeds, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct FedMessage {
    pub index: usize,
    pub id: String,
    pub role: Role,
    pub kind: MessageKind,
    pub text: String,
    /// What the prompt message holds: the text, or its parts (text, images, files).
    pub content: Content,
    pub tokens: u32,
    /// Tokens of the history if it started at this message.
    pub tokens_from_here: u64,
    /// Inside the budget: the model is handed it.
    pub kept: bool,
    #[serde(serialize_with = "rfc3339")]
    pub at: Option<DateTime<Utc>>,
    /// The message in the source's own format, as the model is handed it.
    pub raw: Box<serde_json::value::RawValue>,
    pub extra: Extra,
    /// The text the table prints when it differs from what is counted (an error marked).
    #[serde(skip)]
    pub shown: Option<String>,
}

/// The history of `request`'s conversation, read by its source.
pub async fn history(
    store: &Store,
    request: &HistoryRequest,
) -> Result<HistoryDocument, InspectError> {
    let source = conversations_of(store)?;
    request.options.check(
        store.profile().source.name(),
        source.settings(),
        Command::History,
    )?;
    let fed = source.history(store, request).await?;
    Ok(document(DocumentHead::of(store), fed))
}

/// The document of a history a source computed. Each message is moved in, not copied: a
/// thread of thousands of messages is built once.
pub fn document(head: DocumentHead, fed: SourceHistory) -> HistoryDocument {
    let view = fed.view;
    let dropped = view.dropped();
    let budget = BudgetFigures::of(&view);
    let fits_context = view.fits_context();
    let kept = view.counts.len() - dropped;
    let tokens: Vec<u32> = (0..view.history.messages.len())
        .map(|index| view.message_tokens(index))
        .collect();
    let from_here: Vec<u64> = (0..tokens.len()).map(|i| view.totals.from(i)).collect();
    let messages = view
        .history
        .messages
        .into_iter()
        .zip(fed.messages)
        .enumerate()
        .map(|(index, (message, facts))| FedMessage {
            index,
            id: message.source_id,
            role: message.message.role,
            kind: facts.kind,
            text: message.message.content.text().into_owned(),
            content: message.message.content,
            tokens: tokens[index],
            tokens_from_here: from_here[index],
            kept: index >= dropped || fed.kept_above_cut == Some(index),
            at: facts.at,
            raw: facts.raw,
            extra: facts.extra,
            shown: facts.shown,
        })
        .collect();
    HistoryDocument {
        head,
        id: fed.id,
        title: fed.title,
        rule: fed.rule,
        budget,
        fits_context,
        dropped,
        kept,
        left_out: fed.left_out,
        warnings: fed.warnings,
        messages,
        extra: fed.extra,
        header: fed.header,
    }
}

impl HistoryDocument {
    /// `get_history_prompt_text` of the kept messages: the history as one prompt text.
    pub fn prompt_text(&self, human_prefix: &str, ai_prefix: &str) -> String {
        let sent: Vec<PromptMessage> = self
            .messages
            .iter()
            .filter(|m| m.kept)
            .map(|m| PromptMessage::new(m.role, m.content.clone()))
            .collect();
        history_prompt_text(sent.iter(), human_prefix, ai_prefix)
    }
}

//! `history`: what a conversation's memory feeds the model, under a token budget, in one shape
//! whatever the source: each message with its role, kind, text, tokens, whether it is kept,
//! and the message in the source's own format.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value as Json;

use super::InspectError;
use super::budget_figures::BudgetFigures;
use super::document::{DocumentHead, conversations_of};
use crate::memory::budget_view::BudgetLine;
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
    /// The messages as the budget table prints them.
    #[serde(skip)]
    pub table: Vec<BudgetLine>,
    /// The kept messages as the model is handed them.
    #[serde(skip)]
    pub sent: Vec<PromptMessage>,
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
    pub raw: Json,
    pub extra: Extra,
}

/// The history of `request`'s conversation, read by its source.
pub async fn history(
    store: &Store,
    request: &HistoryRequest,
) -> Result<HistoryDocument, InspectError> {
    let source = conversations_of(store)?;
    request
        .options
        .check(store.profile().source.name(), source, Command::History)?;
    let fed = source.history(store, request).await?;
    Ok(document(DocumentHead::of(store), fed))
}

/// The document of a history a source computed.
pub fn document(head: DocumentHead, fed: SourceHistory) -> HistoryDocument {
    let view = &fed.view;
    let lines = view.lines();
    let dropped = view.dropped();
    let messages = lines
        .iter()
        .zip(&fed.messages)
        .map(|(line, facts)| FedMessage {
            index: line.index,
            id: line.source_id.clone(),
            role: line.role,
            kind: facts.kind,
            text: line.message.content.text().into_owned(),
            content: line.message.content.clone(),
            tokens: line.tokens,
            tokens_from_here: line.tokens_from_here,
            kept: line.kept || fed.kept_above_cut == Some(line.index),
            at: facts.at,
            raw: facts.raw.clone(),
            extra: facts.extra.clone(),
        })
        .collect();
    let sent = view
        .history
        .messages
        .iter()
        .enumerate()
        .filter(|(index, _)| *index >= dropped || fed.kept_above_cut == Some(*index))
        .map(|(_, m)| m.message.clone())
        .collect();
    let table = lines
        .into_iter()
        .zip(&fed.messages)
        .map(|(mut line, facts)| {
            if let Some(shown) = &facts.shown {
                line.message = PromptMessage::text(line.role, shown.clone());
            }
            line
        })
        .collect();
    HistoryDocument {
        head,
        id: fed.id,
        title: fed.title,
        rule: fed.rule,
        budget: BudgetFigures::of(view),
        fits_context: view.fits_context(),
        dropped,
        kept: view.counts.len() - dropped,
        left_out: fed.left_out,
        warnings: fed.warnings,
        messages,
        extra: fed.extra,
        header: fed.header,
        table,
        sent,
    }
}

impl HistoryDocument {
    /// `get_history_prompt_text` of the kept messages: the history as one prompt text.
    pub fn prompt_text(&self, human_prefix: &str, ai_prefix: &str) -> String {
        history_prompt_text(self.sent.iter(), human_prefix, ai_prefix)
    }
}

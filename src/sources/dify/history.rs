//! What Dify's `TokenBufferMemory` feeds the model of a conversation: the newest rows of its
//! window, the thread extracted from them, pruned to the token budget, as the conversation
//! capability gives it.

use serde_json::json;

use super::window::{DELETED_NOTE, load_window};
use crate::format::{count, noun, thousands};
use crate::memory::budget_view::BudgetView;
use crate::memory::history::{HistoryOptions, Side, assemble_history};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{
    Extra, HistoryRequest, MessageFacts, MessageKind, SourceError, SourceHistory,
};
use crate::store::Store;

pub async fn history(
    store: &Store,
    request: &HistoryRequest,
) -> Result<SourceHistory, SourceError> {
    let requested = request.number::<i64>("message-limit")?;
    let (loaded, window_source) = load_window(store, &request.id, requested).await?;
    let mut settings = request.budget.clone();
    settings.options = HistoryOptions {
        message_limit: Some(loaded.window as i64),
        ..HistoryOptions::default()
    };
    let history = assemble_history(&loaded.rows_newest_first, &loaded.files, &settings.options);
    let view = BudgetView::for_history(history, &settings, &mut CountCache::default());
    let mut warnings = view.warnings();
    let thoughts = store.agent_thought_counts(&view.history.thread).await?;
    if !thoughts.is_empty() {
        let total: i64 = thoughts.iter().map(|(_, n)| n).sum();
        warnings.push(format!(
            "{} of these turns are agent turns with {total} recorded {}: Dify's agent runner \
             sends each thought with its tool calls and tool results in place of the answer; \
             this history shows the answers",
            thoughts.len(),
            noun(total as u64, "thought")
        ));
    }
    let rows = &loaded.rows_newest_first;
    let messages = view
        .history
        .messages
        .iter()
        .map(|m| {
            let row = rows.iter().find(|row| row.id == m.source_id);
            MessageFacts {
                kind: MessageKind::Message,
                at: row.map(|row| row.created_at.and_utc()),
                raw: request.raw(&row),
                shown: None,
                extra: request.details(|| {
                    json!({"side": match m.side {
                        Side::Query => "query",
                        Side::Answer => "answer",
                    }})
                }),
            }
        })
        .collect();
    let mut header = Vec::new();
    if loaded.info.is_deleted {
        header.push(DELETED_NOTE.to_owned());
    }
    header.push(format!(
        "conversation {} \"{}\"",
        loaded.info.id, loaded.info.name
    ));
    header.push(format!(
        "window {} ({}), {} loaded{}",
        count(loaded.window as u64, "row"),
        window_source.describe(),
        thousands(rows.len() as u64),
        view.history
            .popped
            .as_ref()
            .map_or(String::new(), |id| format!(", placeholder {id} popped")),
    ));
    let extra = Extra::from_iter([
        ("deleted".to_owned(), json!(loaded.info.is_deleted)),
        ("window".to_owned(), json!(loaded.window)),
        ("window_source".to_owned(), json!(window_source)),
        ("rows_loaded".to_owned(), json!(rows.len())),
        ("popped".to_owned(), json!(view.history.popped)),
        ("paused".to_owned(), json!(view.history.paused)),
    ]);
    Ok(SourceHistory {
        id: loaded.info.id.clone(),
        title: Some(loaded.info.name.clone()),
        header,
        rule: format!(
            "the newest {} of the conversation, its thread, pruned to the budget",
            count(loaded.window as u64, "row")
        ),
        view,
        messages,
        kept_above_cut: None,
        left_out: Vec::new(),
        warnings,
        extra,
    })
}

//! `history`: exactly what TokenBufferMemory would send for a conversation.

use serde::Serialize;

use super::budget::{BudgetFigures, budget_table};
use crate::cli::args::HistoryArgs;
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliError, CliResult, ExitCode, deleted_banner, emit};
use crate::memory::budget_view::{BudgetLine, BudgetSettings, BudgetView};
use crate::inspect::conversation::{WindowOrigin, load_window};
use crate::memory::history::{HistoryOptions, PausedTurn, assemble_history, history_prompt_text};
use crate::memory::tokens::CountCache;
use crate::store::{ConversationShape, Part, Store};

#[derive(Serialize)]
pub(super) struct Report {
    conversation_id: String,
    conversation_name: String,
    /// Deleted in Dify (hidden there); shown as stored.
    deleted: bool,
    window: usize,
    window_source: WindowOrigin,
    rows_loaded: usize,
    /// The newest row, dropped as the current request's placeholder.
    popped: Option<String>,
    /// Rows paused for human input, and what memory makes of each.
    paused: Vec<PausedTurn>,
    #[serde(flatten)]
    budget: BudgetFigures,
    fits_context: Option<bool>,
    dropped: usize,
    kept: usize,
    warnings: Vec<String>,
    messages: Vec<BudgetLine>,
    /// `get_history_prompt_text` of the kept messages, with `--text`.
    text: Option<String>,
}

fn render(r: &Report) -> String {
    if let Some(text) = &r.text {
        return text.clone();
    }
    let mut out = deleted_banner(r.deleted).to_owned();
    out += &format!(
        "conversation {} \"{}\"\nwindow {} ({}), {} loaded{}\n{}",
        r.conversation_id,
        r.conversation_name,
        crate::format::count(r.window as u64, "row"),
        r.window_source.describe(),
        crate::format::thousands(r.rows_loaded as u64),
        r.popped
            .as_ref()
            .map_or(String::new(), |id| format!(", placeholder {id} popped")),
        r.budget.describe(r.dropped, r.dropped + r.kept),
    );
    out += &r.budget.context_line(r.fits_context);
    for warning in &r.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out.push('\n');
    out.push_str(&budget_table(&r.messages, r.dropped));
    out
}

pub async fn run(context: &Context, args: &HistoryArgs) -> CliResult {
    let store = context.open().await?;
    if store.profile().capabilities().conversations == ConversationShape::FlowSessions {
        return super::langflow::history(context, &store, args).await;
    }
    if store.profile().capabilities().conversations == ConversationShape::CheckpointThreads {
        return super::langgraph::history(context, &store, args).await;
    }
    if args.flow.is_some() || args.n_messages.is_some() || args.context_id.is_some() {
        return Err(CliError::usage(
            "--flow, --n-messages and --context-id are Langflow's: this database is not Langflow's",
        ));
    }
    if args.leaf.is_some() {
        return Err(CliError::usage(
            "--leaf is LangGraph's: this database keeps no checkpoints",
        ));
    }
    store.require(Part::Conversations)?;
    let report = report(context, &store, args).await?;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

/// The history of a Dify conversation with its budget (`export` bundles it too).
pub(super) async fn report(
    context: &Context,
    store: &Store,
    args: &HistoryArgs,
) -> CliResult<Report> {
    let (counter, model) = counter_from(context, &args.tokens)?;
    let context_window = context_window_of(context, &model);
    let requested = args
        .message_limit
        .or(Some(context.resolved.config.history.message_limit));
    let loaded = load_window(store, &args.conversation, requested).await?;
    let settings = BudgetSettings {
        counter,
        max_tokens: args
            .max_tokens
            .unwrap_or(context.resolved.config.tokens.budget),
        model,
        context_window,
        options: HistoryOptions {
            message_limit: Some(loaded.window as i64),
            ..HistoryOptions::default()
        },
    };
    let mut cache = CountCache::default();
    let view = BudgetView::for_history(
        assemble_history(&loaded.rows_newest_first, &loaded.files, &settings.options),
        &settings,
        &mut cache,
    );
    let text = args.text.then(|| {
        let (_, kept) = view.history.split_at_cut(&view.pruned);
        history_prompt_text(
            kept.iter().map(|m| &m.message),
            &args.human_prefix,
            &args.ai_prefix,
        )
    });
    let mut warnings = view.warnings();
    let thoughts = store.agent_thought_counts(&view.history.thread).await?;
    if !thoughts.is_empty() {
        let total: i64 = thoughts.iter().map(|(_, n)| n).sum();
        warnings.push(format!(
            "{} of these turns are agent turns with {total} recorded {}: Dify's agent runner \
             sends each thought with its tool calls and tool results in place of the answer; \
             this history shows the answers",
            thoughts.len(),
            crate::format::noun(total as u64, "thought")
        ));
    }
    let report = Report {
        conversation_id: loaded.info.id.clone(),
        conversation_name: loaded.info.name.clone(),
        deleted: loaded.info.is_deleted,
        window: loaded.window,
        window_source: loaded.window_source,
        rows_loaded: loaded.rows_newest_first.len(),
        popped: view.history.popped.clone(),
        paused: view.history.paused.clone(),
        budget: BudgetFigures::of(&view),
        fits_context: view.fits_context(),
        dropped: view.dropped(),
        kept: view.counts.len() - view.dropped(),
        warnings,
        messages: view.lines(),
        text,
    };
    Ok(report)
}

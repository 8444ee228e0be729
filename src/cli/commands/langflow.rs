//! `history` and `conversations` on a Langflow database: a session's Agent memory (what
//! `aget_agent_chat_history` feeds the model, with its token budget and what it leaves out) and
//! the list of (flow, session) conversations.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::budget::{BudgetFigures, budget_table};
use super::page::Page;
use crate::cli::args::{ConversationsArgs, HistoryArgs};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliError, CliResult, ExitCode, emit};
use crate::format::{one_line, thousands};
use crate::memory::budget_view::{BudgetLine, BudgetSettings};
use crate::inspect::session_budget::agent_memory_budget;
use crate::memory::agent_history::{
    AGENT_DEFAULT_N_MESSAGES, AgentHistoryArgs, LeftOut, agent_history,
};
use crate::memory::history::HistoryOptions;
use crate::memory::model::PromptMessage;
use crate::memory::tokens::CountCache;
use crate::sources::langflow::conversations::{self as sessions, LangflowConversation};
use crate::sources::langflow::messages::{session_flows, session_messages};
use crate::store::Store;

#[derive(Serialize)]
pub(super) struct Line {
    index: usize,
    id: String,
    timestamp: DateTime<Utc>,
    sender: String,
    sender_name: String,
    run_id: Option<String>,
    context_id: Option<String>,
    category: String,
    files: Vec<String>,
    text: String,
    tokens: u32,
    tokens_from_here: u64,
    kept: bool,
}

#[derive(Serialize)]
pub(super) struct Report {
    session_id: String,
    flow: Option<String>,
    flow_id: Option<String>,
    owner: Option<String>,
    n_messages: u32,
    context_id: Option<String>,
    #[serde(flatten)]
    budget: BudgetFigures,
    fits_context: Option<bool>,
    dropped: usize,
    kept: usize,
    /// Messages of the session not fed to the model, per reason.
    left_out: std::collections::BTreeMap<LeftOut, usize>,
    /// Fed messages whose category is `error`: their text reaches the model.
    error_text_fed: Vec<String>,
    warnings: Vec<String>,
    /// Exactly what `aget_agent_chat_history` returns, oldest first.
    messages: Vec<Line>,
    /// The messages as the budget table prints them, error-category text marked.
    #[serde(skip)]
    table: Vec<BudgetLine>,
}

fn render(r: &Report) -> String {
    let mut out = format!(
        "session {:?} of flow {} ({}), owner {}\nn_messages {}{}\n",
        r.session_id,
        r.flow.as_deref().unwrap_or("(deleted flow)"),
        r.flow_id.as_deref().unwrap_or("no flow id"),
        r.owner.as_deref().unwrap_or("(none)"),
        r.n_messages,
        r.context_id
            .as_deref()
            .map_or(String::new(), |c| format!(", context id {c:?}")),
    );
    out += &r.budget.describe(r.dropped, r.dropped + r.kept);
    out += &r.budget.context_line(r.fits_context);
    for (reason, count) in &r.left_out {
        out += &format!("left out: {count} {}\n", reason.describe());
    }
    for warning in &r.warnings {
        out += &format!("warning: {warning}\n");
    }
    if r.messages.is_empty() {
        out += "\nno messages are fed to the model\n";
        return out;
    }
    out.push('\n');
    out += &budget_table(&r.table, r.dropped);
    out
}

pub async fn history(context: &Context, store: &Store, args: &HistoryArgs) -> CliResult {
    let report = history_report(context, store, args).await?;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

/// What a session's Agent is fed, with its budget (`export` bundles it too).
pub(super) async fn history_report(
    context: &Context,
    store: &Store,
    args: &HistoryArgs,
) -> CliResult<Report> {
    let flows = session_flows(store, &args.conversation).await?;
    let flow = flows.choose(args.flow.as_deref())?.clone();
    let n_messages = args.n_messages.unwrap_or(AGENT_DEFAULT_N_MESSAGES);
    let rows = session_messages(store, &args.conversation, None).await?;
    let fed = agent_history(
        &rows,
        &AgentHistoryArgs {
            flow_id: flow.id.clone(),
            session_id: args.conversation.clone(),
            context_id: args.context_id.clone(),
            owner: flow.owner.clone(),
            n_messages: Some(n_messages),
        },
    );
    let (counter, model) = counter_from(context, &args.tokens)?;
    let settings = BudgetSettings {
        counter,
        max_tokens: args
            .max_tokens
            .unwrap_or(context.resolved.config.tokens.budget),
        context_window: context_window_of(context, &model),
        model,
        options: HistoryOptions::default(),
    };
    let budget = agent_memory_budget(
        &fed,
        n_messages,
        flow.owner.is_some(),
        &settings,
        &mut CountCache::default(),
    );
    let view = &budget.view;
    let budget_lines = view.lines();
    let table = budget_lines
        .iter()
        .cloned()
        .map(|mut line| {
            if fed.error_text_fed.contains(&line.source_id) {
                let marked = format!("[error] {}", line.message.content.text());
                line.message = PromptMessage::text(line.role, marked);
            }
            line
        })
        .collect();
    let messages = fed
        .messages
        .iter()
        .zip(&budget_lines)
        .map(|(m, line)| Line {
            index: line.index,
            id: m.id.clone(),
            timestamp: m.timestamp,
            sender: m.sender.clone(),
            sender_name: m.sender_name.clone(),
            run_id: m.run_id.clone(),
            context_id: m.context_id.clone(),
            category: m.category.clone(),
            files: m.files.clone(),
            text: m.text.clone(),
            tokens: line.tokens,
            tokens_from_here: line.tokens_from_here,
            kept: line.kept,
        })
        .collect();
    let report = Report {
        session_id: args.conversation.clone(),
        flow: flow.name.clone(),
        flow_id: flow.id.clone(),
        owner: flow.owner.clone(),
        n_messages,
        context_id: args.context_id.clone().filter(|c| !c.is_empty()),
        budget: BudgetFigures::of(view),
        fits_context: view.fits_context(),
        dropped: view.dropped(),
        kept: view.counts.len() - view.dropped(),
        left_out: fed.left_out.iter().copied().collect(),
        error_text_fed: fed.error_text_fed.clone(),
        warnings: budget.warnings.clone(),
        messages,
        table,
    };
    Ok(report)
}

fn render_page(page: &Page<LangflowConversation>) -> String {
    page.render(
        &[
            "id",
            "flow",
            "flow id",
            "messages",
            "last activity",
            "owner",
        ],
        |c| {
            vec![
                one_line(&c.id, 36),
                one_line(c.flow.as_deref().unwrap_or("(deleted flow)"), 24),
                c.flow_id.clone().unwrap_or_default(),
                thousands(c.messages),
                c.last_activity.format("%Y-%m-%d %H:%M").to_string(),
                c.owner_name
                    .clone()
                    .or_else(|| c.owner.clone())
                    .unwrap_or_default(),
            ]
        },
    )
}

pub async fn conversations(
    context: &Context,
    store: &Store,
    args: &ConversationsArgs,
) -> CliResult {
    if args.app.is_some() || args.include_deleted {
        return Err(CliError::usage(
            "--app and --include-deleted are Dify's: a Langflow database lists one \
             conversation per flow and session",
        ));
    }
    // Langflow's pages continue at an offset, printed as the cursor.
    let offset = match args.after.as_deref() {
        None => 0,
        Some(text) => text.parse::<u64>().map_err(|_| {
            CliError::failure(format!(
                "`{text}` is not a cursor printed by `conversations`"
            ))
        })?,
    };
    let page = sessions::conversations(store, args.search.as_deref(), offset, args.limit).await?;
    let next = page
        .has_more
        .then(|| (offset + page.conversations.len() as u64).to_string());
    emit(
        context.global.json,
        &Page {
            conversations: &page.conversations,
            next,
        },
        render_page,
    )?;
    Ok(ExitCode::Ok)
}

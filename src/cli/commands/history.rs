//! `history`: exactly what a conversation's memory feeds the model, with its token budget, the
//! same command and JSON shape for every source.

use super::budget::short_id;
use crate::cli::args::HistoryArgs;
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::history::{FedMessage, HistoryDocument, history};
use crate::memory::budget_view::BudgetSettings;
use crate::memory::history::HistoryOptions;
use crate::sources::conversation::{HistoryRequest, SourceOptions};
use crate::store::Store;

fn render(r: &HistoryDocument) -> String {
    let mut out = String::new();
    for line in &r.header {
        out += line;
        out.push('\n');
    }
    out += &r.budget.describe(r.dropped, r.dropped + r.kept);
    out += &r.budget.context_line(r.fits_context);
    for left_out in &r.left_out {
        out += &format!("left out: {} {}\n", left_out.messages, left_out.description);
    }
    for warning in &r.warnings {
        out += &format!("warning: {warning}\n");
    }
    if r.messages.is_empty() {
        out += "\nno messages are fed to the model\n";
        return out;
    }
    out.push('\n');
    out += &messages_table(&r.messages, &NOT_SENT);
    out
}

/// How a table of messages names those past the cut.
pub(super) struct CutWords {
    /// The mark before a message not kept: "[dropped]".
    pub mark: &'static str,
    /// The line above the first kept message after dropped ones, when some were kept before.
    pub between: &'static str,
    /// The same line when nothing above it is kept.
    pub above_all: &'static str,
}

/// The words of `history`: what is past the cut is not sent.
const NOT_SENT: CutWords = CutWords {
    mark: "[dropped]",
    between: "── cut line: the dropped messages above are not sent ──",
    above_all: "── cut line: everything above is pruned ──",
};

/// The messages with their tokens and the cut line: a message not kept is marked, and the line
/// sits above the first message kept after one that is not.
pub(super) fn messages_table(messages: &[FedMessage], words: &CutWords) -> String {
    let mut rows = Vec::new();
    let mut previous_kept = true;
    let mut any_kept = false;
    for message in messages {
        if message.kept && !previous_kept {
            let text = if any_kept {
                words.between
            } else {
                words.above_all
            };
            rows.push(vec![
                "──".into(),
                text.into(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        let label = format!("{} {}", message.role.as_str(), short_id(&message.id));
        rows.push(vec![
            message.index.to_string(),
            if message.kept {
                label
            } else {
                format!("{} {label}", words.mark)
            },
            thousands(message.tokens),
            thousands(message.tokens_from_here),
            one_line(message.shown.as_deref().unwrap_or(&message.text), 60),
        ]);
        previous_kept = message.kept;
        any_kept |= message.kept;
    }
    table(&["#", "message", "tokens", "from here", "content"], &rows)
}

pub async fn run(context: &Context, args: &HistoryArgs) -> CliResult {
    let store = context.open().await?;
    let report = document(context, &store, args, context.global.json).await?;
    if args.text {
        // `get_history_prompt_text`: the kept messages as the one text a prompt is given.
        emit(false, &report, |r| {
            r.prompt_text(&args.human_prefix, &args.ai_prefix)
        })?;
    } else {
        emit(context.global.json, &report, render)?;
    }
    Ok(ExitCode::Ok)
}

/// The settings only some sources take, as typed.
fn source_options(args: &HistoryArgs) -> SourceOptions {
    args.session.add_to(
        SourceOptions::default()
            .with("message-limit", args.message_limit)
            .with("flow", args.flow.as_ref())
            .with("n-messages", args.n_messages)
            .with("context-id", args.context_id.as_ref())
            .with("leaf", args.leaf.as_ref())
            .with("limit", args.limit)
            .with("ttl", args.ttl),
    )
}

/// The history `args` ask for (`export` bundles it too), each message's raw form with
/// `details` (what JSON prints: each message's raw form and extras).
pub(super) async fn document(
    context: &Context,
    store: &Store,
    args: &HistoryArgs,
    details: bool,
) -> CliResult<HistoryDocument> {
    Ok(history(store, &request(context, args, details)?).await?)
}

/// What `args` ask of the history, with the configuration's settings where none was given.
pub(super) fn request(
    context: &Context,
    args: &HistoryArgs,
    details: bool,
) -> CliResult<HistoryRequest> {
    let (counter, model) = counter_from(context, &args.tokens)?;
    let config = &context.resolved.config;
    let request = HistoryRequest {
        details,
        id: args.conversation.clone(),
        options: source_options(args),
        defaults: SourceOptions::default()
            .with("message-limit", Some(config.history.message_limit)),
        budget: BudgetSettings {
            counter,
            max_tokens: args.max_tokens.unwrap_or(config.tokens.budget),
            context_window: context_window_of(context, &model),
            model,
            options: HistoryOptions::default(),
        },
    };
    Ok(request)
}

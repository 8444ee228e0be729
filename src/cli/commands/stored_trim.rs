//! `trim preview|apply|undo --conversation ID` on a database whose source stores conversations
//! as a list memscope may shorten in place (an OpenAI Agents SDK session): keep the newest
//! items, by count (`--keep-last`) or by tokens (`--max-tokens`); apply deletes the older rows
//! after archiving them, and undo puts them back.

use super::history::{CutWords, messages_table};
use crate::cli::args::{TokenArgs, TrimArgs};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::format::{count, thousands};
use crate::inspect::stored_trim::{TrimDocument, UndoneDocument, apply, preview, stored_trim_of};
use crate::memory::budget_view::BudgetSettings;
use crate::memory::history::HistoryOptions;
use crate::sources::conversation::{HistoryRequest, SourceOptions};
use crate::sources::stored_trim::{Keep, StoredTrim, TrimRequest, archive_dir};
use crate::store::Store;

const DELETED: CutWords = CutWords {
    mark: "[deleted]",
    between: "── cut line: the rows above are deleted ──",
    above_all: "── cut line: everything above is deleted ──",
};

fn render(r: &TrimDocument) -> String {
    let mut out = String::new();
    for line in &r.header {
        out += line;
        out.push('\n');
    }
    out += &format!("counted for {} with {}\n", r.model, r.counter);
    out += &format!(
        "items: {} -> {}   tokens: {} -> {}\n",
        thousands(r.messages_before as u64),
        thousands(r.messages_after as u64),
        thousands(r.tokens_before),
        thousands(r.tokens_after),
    );
    for left_out in &r.left_out {
        out += &format!(
            "also deleted: {} {}\n",
            left_out.messages, left_out.description
        );
    }
    for warning in &r.warnings {
        out += &format!("warning: {warning}\n");
    }
    if !r.messages.is_empty() {
        out.push('\n');
        out += &messages_table(&r.messages, &DELETED);
    }
    match &r.archive {
        Some(archive) => {
            out += &format!(
                "\ndeleted {}; archived in {}\n`memscope --write trim undo --conversation {} \
                 --yes` puts them back\n",
                count(r.rows_deleted as u64, "row"),
                archive.display(),
                r.id
            );
        }
        None if r.rows_deleted == 0 => out += "\nnothing to delete: the session already fits\n",
        None => {}
    }
    out
}

/// The flags of other trims, which a stored trim does not read: named, so a typo or a wrong
/// guess never passes silently.
fn refuse_other_flags(args: &TrimArgs) -> CliResult<()> {
    let given = [
        (args.strategy.is_some(), "--strategy"),
        (args.policy.is_some(), "--policy"),
        (args.include_system.is_some(), "--include-system"),
        (args.start_on.is_some(), "--start-on"),
        (args.end_on.is_some(), "--end-on"),
        (args.allow_partial, "--allow-partial"),
        (args.split_on.is_some(), "--split-on"),
        (args.limit_type.is_some(), "--limit-type"),
        (args.trim_mode.is_some(), "--trim-mode"),
        (args.max_messages.is_some(), "--max-messages"),
        (args.trigger.is_some(), "--trigger"),
        (args.target.is_some(), "--target"),
        (args.min_messages.is_some(), "--min-messages"),
        (args.keep_first.is_some(), "--keep-first"),
        (args.clear_tool_results, "--clear-tool-results"),
        (args.max_images.is_some(), "--max-images"),
        (args.summarize, "--summarize"),
        (args.summarize_prompt.is_some(), "--summarize-prompt"),
    ];
    let refused: Vec<&str> = given
        .iter()
        .filter(|(set, _)| *set)
        .map(|(_, flag)| *flag)
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(CliError::usage(format!(
        "{} {} not taken by a session's trim: it keeps the newest items, by --keep-last N or \
         --max-tokens N",
        refused.join(", "),
        if refused.len() == 1 { "is" } else { "are" },
    )))
}

/// The settings of a stored session's own that a trim of it takes: which app's and user's
/// session the id names.
pub(super) fn session_options(args: &TrimArgs) -> SourceOptions {
    SourceOptions::default()
        .with("app", args.app.as_ref())
        .with("user", args.user.as_ref())
}

/// What `args` ask the trim of `id` to keep, counted as they say.
fn request(context: &Context, args: &TrimArgs, id: &str) -> CliResult<TrimRequest> {
    refuse_other_flags(args)?;
    let keep = match (args.keep_last, args.max_tokens) {
        (Some(items), None) => Keep::Last(items),
        (None, Some(tokens)) => Keep::MaxTokens(tokens.max(0) as u64),
        (Some(_), Some(_)) => {
            return Err(CliError::usage(
                "give --keep-last N (items) or --max-tokens N, not both",
            ));
        }
        (None, None) => {
            return Err(CliError::usage(
                "name what the trim keeps: --keep-last N (the newest N items) or --max-tokens N",
            ));
        }
    };
    let tokens = TokenArgs {
        model: args.model.clone(),
        counter: args.counter.clone(),
        encoding: args.encoding.clone(),
    };
    let (counter, model) = counter_from(context, &tokens)?;
    Ok(TrimRequest {
        history: HistoryRequest {
            id: id.to_owned(),
            options: session_options(args),
            defaults: SourceOptions::default(),
            budget: BudgetSettings {
                counter,
                max_tokens: args
                    .max_tokens
                    .unwrap_or(context.resolved.config.tokens.budget),
                context_window: context_window_of(context, &model),
                model,
                options: HistoryOptions::default(),
            },
            details: context.global.json,
        },
        keep,
    })
}

/// The database of `args`' conversation and its stored trim, when it has one; `None` leaves
/// the trim to the other kinds (a LangGraph thread, a Dify conversation's history).
async fn trimmed(
    context: &Context,
    args: &TrimArgs,
) -> CliResult<Option<(Store, &'static dyn StoredTrim, String)>> {
    let (Some(id), None) = (&args.conversation, &args.node) else {
        return Ok(None);
    };
    let store = context.open().await?;
    match stored_trim_of(&store) {
        Some(trim) => Ok(Some((store, trim, id.clone()))),
        None if args.keep_last.is_some() => Err(CliError::usage(format!(
            "--keep-last trims a session stored as a list of items (an OpenAI Agents SDK \
             session); this is {} {} database: use --max-tokens or a policy",
            crate::format::article(store.profile().source.name()),
            store.profile().source.name(),
        ))),
        None => Ok(None),
    }
}

/// Where trims' archives are kept: under memscope's data directory.
fn archives(context: &Context) -> CliResult<std::path::PathBuf> {
    let data = &context.resolved.dirs.data;
    archive_dir(data).map_err(|e| CliError::failure(format!("{}: {e}", data.display())))
}

/// `trim preview` of a stored session; `None` when the conversation is trimmed another way.
pub async fn try_preview(context: &Context, args: &TrimArgs) -> CliResult<Option<ExitCode>> {
    let Some((store, trim, id)) = trimmed(context, args).await? else {
        return Ok(None);
    };
    let document = preview(&store, trim, &request(context, args, &id)?).await?;
    emit(context.global.json, &document, render)?;
    Ok(Some(ExitCode::Ok))
}

/// `trim apply` of a stored session; `None` when the conversation is trimmed another way.
pub async fn try_apply(
    context: &Context,
    args: &TrimArgs,
    yes: bool,
) -> CliResult<Option<ExitCode>> {
    let Some((store, trim, id)) = trimmed(context, args).await? else {
        return Ok(None);
    };
    let request = request(context, args, &id)?;
    // Said before --yes is asked for: without --write nothing could be written anyway.
    store.ensure_writable_in_place()?;
    confirm(
        yes,
        "apply deletes the session's oldest rows (archived first; `trim undo` puts them back)",
    )?;
    let archives = archives(context)?;
    let document = apply(&store, trim, &request, &archives).await?;
    emit(context.global.json, &document, render)?;
    Ok(Some(ExitCode::Ok))
}

/// `trim undo --conversation` of a stored session; `None` when the database trims otherwise.
pub async fn try_undo(context: &Context, id: &str, yes: bool) -> CliResult<Option<ExitCode>> {
    let store = context.open().await?;
    let Some(trim) = stored_trim_of(&store) else {
        return Ok(None);
    };
    store.ensure_writable_in_place()?;
    confirm(yes, "undo puts the rows of the session's last trim back")?;
    let archives = archives(context)?;
    let undone = crate::inspect::stored_trim::undo(&store, trim, id, &archives).await?;
    emit(context.global.json, &undone, |u: &UndoneDocument| {
        format!(
            "put back {} of session {} from {}",
            count(u.undone.rows_restored as u64, "row"),
            u.undone.id,
            u.undone.archive.display()
        )
    })?;
    Ok(Some(ExitCode::Ok))
}

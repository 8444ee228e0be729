//! `export`: one JSON bundle of a conversation for a bug report (`inspect/export.rs` makes it,
//! as for the TUI's `E`), printed or written to `--out` whole or not at all.

use std::path::Path;

use serde::Serialize;

use crate::cli::args::{ExportArgs, HistoryArgs, ThreadArgs, ThreadMode};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::inspect::export::{ExportRequest, Exported, NodeSettings, bundle, write_whole};
use crate::store::{Part, Store};

fn history_args(args: &ExportArgs) -> HistoryArgs {
    HistoryArgs {
        conversation: args.conversation.clone(),
        max_tokens: args.max_tokens,
        message_limit: None,
        tokens: args.tokens.clone(),
        text: false,
        human_prefix: String::new(),
        ai_prefix: String::new(),
        flow: args.flow.clone(),
        n_messages: None,
        context_id: None,
        leaf: args.leaf.clone(),
        limit: None,
        ttl: None,
        session: args.session.clone(),
    }
}

/// `thread` of the conversation (as Dify extracts it, on Dify's), to `--leaf` where given.
fn thread_args(args: &ExportArgs) -> ThreadArgs {
    ThreadArgs {
        conversation: args.conversation.clone(),
        leaf: args.leaf.clone(),
        mode: ThreadMode::Dify,
        flow: args.flow.clone(),
        session: args.session.clone(),
    }
}

/// The bundle's parts as `thread`, `history`, `nodes` and `node-context` are asked for them;
/// the nodes' only on a database with node executions.
fn request(context: &Context, args: &ExportArgs, store: &Store) -> CliResult<ExportRequest> {
    let nodes = match store.profile().has(Part::NodeContexts) {
        true => Some(NodeSettings {
            storage: context.storage()?,
            list: super::nodes::settings(context, &args.tokens, None)?,
            context: super::nodes::settings(context, &args.tokens, args.max_tokens)?,
        }),
        false => None,
    };
    Ok(ExportRequest {
        conversation: args.conversation.clone(),
        thread: super::thread::request(context, &thread_args(args), true),
        history: super::history::request(context, &history_args(args), true)?,
        nodes,
        url: context.resolved.database_url.clone(),
    })
}

pub async fn run(context: &Context, args: &ExportArgs) -> CliResult {
    // Refused before any read: an existing file is kept unless --yes says to replace it.
    if let Some(out) = &args.out
        && out.exists()
    {
        confirm(
            args.yes,
            format!("{} exists and would be replaced", out.display()),
        )?;
    }
    let store = context.open().await?;
    let Exported {
        bundle,
        secrets_redacted: redacted,
    } = bundle(&store, &request(context, args, &store)?).await?;
    let Some(out) = &args.out else {
        emit(true, &bundle, |_| String::new())?;
        return Ok(ExitCode::Ok);
    };
    let text = serde_json::to_string_pretty(&bundle).map_err(CliError::from)?;
    write_file(out, &text, args.yes)?;
    #[derive(Serialize)]
    struct Written<'a> {
        written: &'a Path,
        bytes: usize,
        secrets_redacted: usize,
    }
    emit(
        context.global.json,
        &Written {
            written: out,
            bytes: text.len() + 1,
            secrets_redacted: redacted,
        },
        |w| {
            format!(
                "wrote {} ({} bytes, {} {} redacted)",
                w.written.display(),
                crate::format::thousands(w.bytes as u64),
                w.secrets_redacted,
                crate::format::noun(w.secrets_redacted as u64, "secret")
            )
        },
    )?;
    Ok(ExitCode::Ok)
}

/// Writes the bundle whole or not at all; without `replace`, a file that appeared meanwhile is
/// kept.
fn write_file(out: &Path, text: &str, replace: bool) -> CliResult<()> {
    write_whole(out, text, replace).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => {
            CliError::usage(format!("--out {}: not a file name", out.display()))
        }
        std::io::ErrorKind::AlreadyExists => {
            CliError::needs_yes(format!("{} exists and would be replaced", out.display()))
        }
        _ => CliError::failure(format!("cannot write {}: {e}", out.display())),
    })
}

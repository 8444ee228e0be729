//! `export`: one JSON bundle of a conversation for a bug report. Every source gives the same
//! parts, computed by the very functions its commands print (`thread`, `history`, `nodes`,
//! `node-context`), so the bundle says what those commands say; then every credential is
//! removed (`redact.rs`) before a byte is written.

mod redact;

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::cli::args::{
    ExportArgs, HistoryArgs, NodeContextArgs, NodeSource, NodesArgs, ThreadArgs, ThreadMode,
};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::store::{Backend, Part, Store, redact_url};

/// What made the database: enough to reproduce a report on the same kind.
#[derive(Serialize)]
struct DatabaseKind {
    /// memscope, Dify, Langflow or a LangGraph checkpoint saver.
    source: &'static str,
    backend: &'static str,
    /// The source's schema revision, when it records one (Dify's and Langflow's migrations).
    schema_revision: Option<String>,
    /// memscope's own schema version, on a database memscope created.
    schema_version: Option<i64>,
    /// The database URL, its password removed.
    url: String,
}

#[derive(Serialize)]
struct Bundle {
    memscope_version: &'static str,
    database: DatabaseKind,
    /// The conversation (Dify), session (Langflow) or thread (LangGraph) id, as typed.
    conversation: String,
    /// The conversation's parts, as their commands print them with `--json`.
    #[serde(flatten)]
    parts: Map<String, Value>,
}

fn to_value(value: impl Serialize) -> CliResult<Value> {
    serde_json::to_value(value).map_err(CliError::from)
}

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
        branch: None,
        ttl: None,
    }
}

/// `thread` of the conversation (as Dify extracts it, on Dify's), to `--leaf` where given.
fn thread_args(args: &ExportArgs) -> ThreadArgs {
    ThreadArgs {
        conversation: args.conversation.clone(),
        leaf: args.leaf.clone(),
        mode: ThreadMode::Dify,
        flow: args.flow.clone(),
        branch: None,
    }
}

/// The conversation's parts, the same on every source: its tree with the path the model sees
/// (to `--leaf` where given), what its memory feeds the model with the budget, and on a
/// database with node executions each node's context. A flag the source does not take is
/// refused as `thread` and `history` refuse it.
async fn conversation_parts(
    context: &Context,
    store: &Store,
    args: &ExportArgs,
) -> CliResult<Map<String, Value>> {
    let thread = super::thread::document(context, store, &thread_args(args), true).await?;
    let history = super::history::document(context, store, &history_args(args), true).await?;
    let mut parts = Map::new();
    parts.insert("thread".into(), to_value(thread)?);
    parts.insert("history".into(), to_value(history)?);
    if store.profile().has(Part::NodeContexts) {
        let nodes = super::nodes::list_report(
            context,
            store,
            &NodesArgs {
                conversation: args.conversation.clone(),
                leaf: None,
                tokens: args.tokens.clone(),
            },
        )
        .await?;
        let mut contexts = Vec::new();
        for node in nodes.node_ids() {
            let report = super::nodes::context_report(
                context,
                store,
                &NodeContextArgs {
                    conversation: args.conversation.clone(),
                    node: node.clone(),
                    leaf: None,
                    source: NodeSource::Outputs,
                    max_tokens: args.max_tokens,
                    tokens: args.tokens.clone(),
                },
            )
            .await?;
            contexts.push(to_value(report)?);
        }
        parts.insert("nodes".into(), to_value(nodes)?);
        parts.insert("node_contexts".into(), Value::Array(contexts));
    }
    Ok(parts)
}

fn database_kind(context: &Context, store: &Store) -> DatabaseKind {
    let profile = store.profile();
    DatabaseKind {
        source: profile.source.name(),
        backend: match store.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        },
        schema_revision: profile.revision.clone(),
        schema_version: store.schema_version(),
        url: redact_url(&context.resolved.database_url),
    }
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
    let parts = conversation_parts(context, &store, args).await?;
    let mut bundle = to_value(Bundle {
        memscope_version: env!("CARGO_PKG_VERSION"),
        database: database_kind(context, &store),
        conversation: args.conversation.clone(),
        parts,
    })?;
    let redacted = redact::redact(&mut bundle);
    if let Value::Object(fields) = &mut bundle {
        fields.insert("secrets_redacted".into(), Value::from(redacted));
    }
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

/// Writes the bundle whole or not at all: into a file beside `out`, then renamed over it.
/// Without `replace`, a file that appeared meanwhile is kept (the rename is a hard link that
/// fails on an existing name).
fn write_file(out: &Path, text: &str, replace: bool) -> CliResult<()> {
    let dir = match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| CliError::usage(format!("--out {}: not a file name", out.display())))?;
    let partial = dir.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = write_whole(&partial, out, text, replace);
    written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::needs_yes(format!("{} exists and would be replaced", out.display()))
        } else {
            CliError::failure(format!("cannot write {}: {e}", out.display()))
        }
    })
}

/// Writes `text` into `partial`, then moves it to `out`: over an existing file only when
/// `replace`, else by a hard link that fails on an existing name.
fn write_whole(partial: &Path, out: &Path, text: &str, replace: bool) -> std::io::Result<()> {
    let mut file = std::fs::File::create(partial)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    if replace {
        std::fs::rename(partial, out)
    } else {
        std::fs::hard_link(partial, out)?;
        std::fs::remove_file(partial)
    }
}

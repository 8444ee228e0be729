//! `checkpoints prune` and `checkpoints restore` on a database whose threads save checkpoints (a
//! LangGraph database), through its checkpoint-prune capability: the plan, the prune with its
//! archive (Ctrl-C before its commit deletes nothing and leaves no file), and the archive put
//! back, only into the database it came from.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::args::{CheckpointsCommand, PruneArgs};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit, table};
use crate::format::{noun, thousands};
use crate::sources::checkpoint_prune::{
    CheckpointPrune, KeepRule, PruneFailure, PrunePlan, PruneRequest, RestoredArchive,
};
use crate::sources::checkpoint_prune_of;
use crate::store::{CancelFlag, Part, Store};

pub async fn run(context: &Context, command: CheckpointsCommand) -> CliResult {
    match command {
        CheckpointsCommand::Prune(args) => prune(context, &args).await,
        CheckpointsCommand::Restore { archive, yes } => restore(context, &archive, yes).await,
    }
}

async fn open(context: &Context) -> CliResult<(Store, &'static dyn CheckpointPrune)> {
    // Another kind of database is refused as every command refuses one (exit 3).
    let store = context.open_for(Part::Checkpoints).await?;
    let prunes = checkpoint_prune_of(store.profile().source).ok_or_else(|| {
        CliError::not_in_this_database("memscope does not prune this database's checkpoints")
    })?;
    Ok((store, prunes))
}

/// `YYYY-MM-DD` (midnight UTC) or an RFC 3339 instant, as nanoseconds since 1970.
fn parse_before(text: &str) -> CliResult<u64> {
    let instant = chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc())
        })
        .map_err(|_| {
            CliError::usage(format!(
                "--before {text}: expected a date (2026-05-01) or an RFC 3339 instant \
                 (2026-05-01T12:00:00Z)"
            ))
        })?;
    instant
        .timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| CliError::usage(format!("--before {text}: out of range")))
}

#[derive(Serialize)]
struct Pruned {
    #[serde(flatten)]
    plan: PrunePlan,
    /// Whether the rows were deleted (`false`: the plan only).
    pruned: bool,
    archive: Option<PathBuf>,
    /// The command line that puts the archived rows back.
    restore: Option<String>,
    vacuumed: bool,
}

fn render(p: &Pruned) -> String {
    if p.plan.threads.is_empty() {
        return "nothing to prune: every thread keeps all its checkpoints".to_owned();
    }
    let rows: Vec<Vec<String>> = p
        .plan
        .threads
        .iter()
        .map(|t| {
            let mut row = vec![t.thread_id.clone()];
            row.extend(t.figures(thousands));
            row
        })
        .collect();
    let verb = if p.pruned { "deleted" } else { "would delete" };
    let mut out = format!(
        "{verb} {}, {}, {}: {} (keeping the {} newest of each thread{})\n\n",
        crate::format::count(p.plan.checkpoints as u64, "checkpoint"),
        crate::format::count(p.plan.writes, "write"),
        crate::format::count(p.plan.blobs as u64, "blob"),
        crate::format::count(p.plan.bytes, "byte"),
        p.plan.keep_last,
        p.plan
            .before
            .as_deref()
            .map(|b| format!(" and all saved from {b} on"))
            .unwrap_or_default(),
    );
    out.push_str(&table(
        &["thread", "checkpoints", "writes", "blobs", "bytes"],
        &rows,
    ));
    if let (Some(archive), Some(restore)) = (&p.archive, &p.restore) {
        out.push_str("\n\nthe deleted rows are archived in\n");
        out.push_str(&archive.display().to_string());
        out.push_str("\nand this puts them back:\n");
        out.push_str(restore);
    }
    if p.vacuumed {
        out.push_str("\n\nvacuumed: the freed space went back to the file system");
    }
    out
}

async fn prune(context: &Context, args: &PruneArgs) -> CliResult {
    let before = args.before.as_deref().map(parse_before).transpose()?;
    let (store, prunes) = open(context).await?;
    let request = PruneRequest {
        threads: args.threads.clone(),
        rule: KeepRule {
            keep_last: usize::try_from(args.keep_last).unwrap_or(usize::MAX),
            before_unix_nanos: before,
        },
        before: args.before.clone(),
    };
    let plan = prunes.plan(&store, &request).await?;
    if plan.threads.is_empty() || !args.yes {
        let report = Pruned {
            plan,
            pruned: false,
            archive: None,
            restore: None,
            vacuumed: false,
        };
        let nothing = report.plan.threads.is_empty();
        emit(context.global.json, &report, render)?;
        if nothing {
            return Ok(ExitCode::Ok);
        }
        let refused = CliError::needs_yes("prune deletes these checkpoints (archived first)");
        // Said now, not after the --yes: on a database opened read-only the prune needs --write.
        return Err(if store.is_read_only() {
            refused.with_hint(
                "this database was opened read-only: run the command again with --write and --yes",
            )
        } else {
            refused
        });
    }
    store.ensure_writable_in_place()?;
    let data = &context.resolved.dirs.data;
    let (archive, named) = match &args.archive {
        Some(archive) => (std::path::absolute(archive), archive),
        None => (prunes.new_archive(data), data),
    };
    let archive = archive.map_err(|e| CliError::failure(format!("{}: {e}", named.display())))?;
    // Ctrl-C stops the prune before its commit: nothing deleted, no archive left. The
    // listener is in place before the prune starts.
    let mut interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))?;
    let stop = CancelFlag::default();
    let watcher = tokio::spawn({
        let stop = stop.clone();
        async move {
            if interrupts.recv().await.is_some() {
                stop.cancel();
            }
        }
    });
    let pruned = prunes.prune(&store, &request, &archive, &stop).await;
    watcher.abort();
    let plan = pruned.map_err(|failure| failed(failure, prunes, &archive))?;
    if args.vacuum {
        tokio::select! {
            vacuumed = prunes.vacuum(&store) => vacuumed?,
            _ = tokio::signal::ctrl_c() => {
                return Err(interrupted(&format!(
                    "the vacuum stopped; the prune is done, its rows archived in {}",
                    archive.display()
                )));
            }
        }
    }
    let report = Pruned {
        plan,
        pruned: true,
        restore: Some(prunes.restore_command(store.url(), &archive)),
        archive: Some(archive),
        vacuumed: args.vacuum,
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

/// Stopped by Ctrl-C, saying what was left as it was.
fn interrupted(what: &str) -> CliError {
    CliError::new(
        ExitCode::Interrupted,
        "interrupted",
        format!("interrupted: {what}"),
    )
}

/// Why a prune or a restore of `archive` wrote nothing, with the way out.
fn failed(failure: PruneFailure, prunes: &dyn CheckpointPrune, archive: &Path) -> CliError {
    match failure {
        PruneFailure::Interrupted => interrupted("nothing was deleted"),
        PruneFailure::OtherDatabase { from, message } => {
            let hint = match from {
                Some(from) => format!(
                    "restore it into {from}: {}. A moved or copied file restores as long as \
                     the thread still holds a checkpoint that prune kept; when a later prune \
                     deleted them, restore that prune's archive first",
                    prunes.restore_command(&from, archive)
                ),
                None => "restore it into the database it was pruned from; when a later prune \
                         deleted the checkpoints this one kept, restore that prune's archive \
                         first"
                    .to_owned(),
            };
            CliError::new(ExitCode::Failure, "other-database", message).with_hint(hint)
        }
        PruneFailure::AlreadyRestored(message) => {
            CliError::new(ExitCode::Failure, "already-restored", message)
        }
        PruneFailure::Source(error) => error.into(),
    }
}

async fn restore(context: &Context, archive: &Path, yes: bool) -> CliResult {
    let (store, prunes) = open(context).await?;
    store.ensure_writable_in_place()?;
    confirm(yes, "restore puts the archived rows back into the database")?;
    let restored = prunes
        .restore(&store, archive)
        .await
        .map_err(|failure| failed(failure, prunes, archive))?;
    emit(context.global.json, &restored, |r: &RestoredArchive| {
        format!(
            "restored {} {} and {} {} from {}{}",
            thousands(r.rows as u64),
            noun(r.rows as u64, "row"),
            thousands(r.parents as u64),
            noun(r.parents as u64, "parent link"),
            r.path.display(),
            r.from
                .as_deref()
                .map(|from| format!(" (pruned from {from})"))
                .unwrap_or_default()
        )
    })?;
    Ok(ExitCode::Ok)
}

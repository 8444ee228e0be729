//! `watch`: syncs every auto-capture memory base's sessions as they reach their thresholds,
//! once or every interval, printing each job's progress.

use std::time::Duration;

use super::context::{mb_settings, sync_failed};
use crate::cli::args::WatchArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit};
use crate::format::thousands;
use crate::inspect::syncers;
use crate::store::{Part, Store};
use crate::sync::watch::WatchEvent;
use crate::sync::{CancelFlag, SyncOutcome};

/// Stops the task it holds when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn describe(event: &WatchEvent) -> String {
    let result = match &event.result {
        Ok(SyncOutcome::Completed(job)) => format!(
            "ingested {} {} (job {})",
            thousands(job.messages),
            crate::format::noun(job.messages, "message"),
            job.job_id
        ),
        Ok(SyncOutcome::NothingPending { .. }) => "nothing pending".to_owned(),
        Ok(SyncOutcome::Skipped { .. }) => "skipped: another sync is running".to_owned(),
        Err(error) => format!("failed: {error}"),
    };
    format!(
        "{} / {}: {}/{} pending, {result}",
        event.memory_base,
        event.session_id,
        thousands(event.pending),
        thousands(event.threshold)
    )
}

/// One watcher pass, the TUI's own; `progress` receives each running job's reports.
async fn watch_pass(
    context: &Context,
    store: &Store,
    args: &WatchArgs,
    progress: Option<&tokio::sync::mpsc::UnboundedSender<crate::sync::JobProgress>>,
) -> CliResult<Vec<WatchEvent>> {
    let settings = mb_settings(context, &args.sync);
    syncers::watch_pass(&settings, store, progress, &CancelFlag::default())
        .await
        .map_err(sync_failed)
}

/// Prints the progress of the watcher's jobs as they run: a line when a job starts or ends,
/// and at most one a second while it runs.
fn print_progress(
    mut reports: tokio::sync::mpsc::UnboundedReceiver<crate::sync::JobProgress>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last: Option<(String, std::time::Instant)> = None;
        while let Some(report) = reports.recv().await {
            let running = report.stage == crate::sync::Stage::Running;
            let same_job = last.as_ref().is_some_and(|(job, _)| *job == report.job_id);
            let recent = last
                .as_ref()
                .is_some_and(|(_, at)| at.elapsed() < Duration::from_secs(1));
            if running && same_job && recent {
                continue;
            }
            last = Some((report.job_id.clone(), std::time::Instant::now()));
            let stage = match &report.stage {
                crate::sync::Stage::Running => "syncing".to_owned(),
                crate::sync::Stage::Committed => "completed".to_owned(),
                crate::sync::Stage::RolledBack { reason } => format!("failed: {reason}"),
            };
            println!(
                "  session {}: {stage}, {} of {}, {} (job {})",
                report.session_id,
                thousands(report.messages_done),
                crate::format::count(report.messages_total, "message"),
                crate::format::count(report.chunks_written, "chunk"),
                report.job_id
            );
        }
    })
}

pub async fn watch(context: &Context, args: &WatchArgs) -> CliResult {
    let store = context.open_for(Part::MemoryBases).await?;
    let json = context.global.json;
    if args.once {
        let events = watch_pass(context, &store, args, None).await?;
        emit(json, &events, |events| {
            if events.is_empty() {
                "no session reached its threshold".to_owned()
            } else {
                events.iter().map(describe).collect::<Vec<_>>().join("\n")
            }
        })?;
        return Ok(ExitCode::Ok);
    }
    let interval = args
        .interval
        .map_or(
            mb_settings(context, &args.sync).watch_interval,
            Duration::from_secs,
        )
        .max(Duration::from_secs(1));
    // Text output says it is watching and shows jobs while they run; JSON output stays one
    // event object per line.
    let (progress, printer) = if json {
        (None, None)
    } else {
        println!(
            "watching auto-capture memory bases every {}s (ctrl-c stops)",
            interval.as_secs()
        );
        let (sender, reports) = tokio::sync::mpsc::unbounded_channel();
        (Some(sender), Some(print_progress(reports)))
    };
    let _printer = printer.map(AbortOnDrop);
    loop {
        let events = watch_pass(context, &store, args, progress.as_ref()).await?;
        // Let the printer catch up, so a job's lines come before its outcome.
        tokio::task::yield_now().await;
        for event in events {
            let line = if json {
                serde_json::to_string(&event)?
            } else {
                describe(&event)
            };
            println!("{line}");
        }
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = tokio::signal::ctrl_c() => return Ok(ExitCode::Ok),
        }
    }
}

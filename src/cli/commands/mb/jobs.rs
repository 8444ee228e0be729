//! The `mb` subcommands that run or manage ingestion jobs: sync, regenerate, the job list and
//! cancelling a job.

use std::time::Duration;

use tokio::sync::mpsc;

use super::context::{MbContext, sync_failed};
use super::render::render_jobs;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::format::thousands;
use crate::kb::embedder::HASHING_MODEL;
use crate::memory::names::Unknown;
use crate::sync::{CancelFlag, SessionSync, Trigger};

/// Syncs one session of a base, or all of them; progress goes to stderr so stdout stays the
/// result.
pub(super) async fn sync(
    mb: &MbContext<'_>,
    key: &str,
    session: Option<&str>,
    wait: u64,
) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
    let wait = Duration::from_secs(wait);
    let (progress, mut updates) = mpsc::unbounded_channel::<crate::sync::JobProgress>();
    let show_progress = !mb.json;
    let printer = tokio::spawn(async move {
        while let Some(update) = updates.recv().await {
            if show_progress {
                eprintln!(
                    "job {} session {}: {}/{}, {}",
                    &update.job_id[..8],
                    update.session_id,
                    thousands(update.messages_done),
                    crate::format::count(update.messages_total, "message"),
                    crate::format::count(update.chunks_written, "chunk")
                );
            }
        }
    });
    let cancel = CancelFlag::default();
    let outcomes: Vec<SessionSync> = match session {
        Some(session) => vec![(
            session.to_owned(),
            syncer
                .sync_session(
                    &base,
                    session,
                    Trigger::Manual,
                    wait,
                    Some(&progress),
                    &cancel,
                )
                .await,
        )],
        None => syncer
            .sync_base(&base, Trigger::Manual, wait, Some(&progress), &cancel)
            .await
            .map_err(sync_failed)?,
    };
    drop(progress);
    let _ = printer.await;
    report_outcomes(mb.json, outcomes)
}

pub(super) async fn regenerate(mb: &MbContext<'_>, key: &str, yes: bool) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
    confirm(
        yes,
        format!(
            "regenerating {} clears every cursor, its ingestion records and its \
             knowledge base, then re-ingests everything",
            base.name
        ),
    )?;
    let outcomes = syncer
        .regenerate(&base, None, &CancelFlag::default())
        .await
        .map_err(sync_failed)?;
    report_outcomes(mb.json, outcomes)
}

pub(super) async fn jobs(mb: &MbContext<'_>, key: Option<&str>, limit: i64) -> CliResult {
    let hashing = mb.syncer(HASHING_MODEL)?;
    let base_id = match key {
        Some(key) => Some(hashing.resolve(key).await.map_err(sync_failed)?.id),
        None => None,
    };
    let jobs = crate::inspect::memory_bases::jobs(&hashing, base_id.as_deref(), limit)
        .await
        .map_err(sync_failed)?;
    mb.emit(&jobs, |j| render_jobs(j))
}

pub(super) async fn cancel(mb: &MbContext<'_>, job: &str) -> CliResult {
    let hashing = mb.syncer(HASHING_MODEL)?;
    // Only a job that exists is cancelled; an id that names none is refused with the known ones.
    let known = uuid::Uuid::parse_str(&crate::store::dashed_id(job)).is_ok();
    let found = match known {
        true => mb.store.job(&crate::store::dashed_id(job)).await?,
        false => None,
    };
    let Some(found) = found else {
        let jobs = crate::inspect::memory_bases::jobs(&hashing, None, 50)
            .await
            .map_err(sync_failed)?;
        let ids = jobs.into_iter().map(|j| j.job_id);
        return Err(sync_failed(Unknown::new("ingestion job", job, ids).into())
            .with_hint("`memscope mb jobs` lists the jobs and their states"));
    };
    if !hashing.cancel_job(job).await.map_err(sync_failed)? {
        return Err(CliError::failure(format!(
            "job {job} is {}, not queued or running: there is nothing to cancel",
            found.status
        )));
    }
    mb.emit(
        &serde_json::json!({ "job_id": job, "cancelled": true }),
        |_| format!("job {job} cancelled; its process rolls it back at its next check"),
    )
}

/// Prints sync outcomes; the exit code is Conflict when any session was already syncing,
/// Failure when any other sync failed.
fn report_outcomes(json: bool, outcomes: Vec<SessionSync>) -> CliResult {
    let mut code = ExitCode::Ok;
    let mut results = Vec::new();
    for (session_id, outcome) in outcomes {
        match outcome {
            Ok(outcome) => results.push(serde_json::to_value(&outcome)?),
            Err(error) => {
                let failure = sync_failed(error);
                if code == ExitCode::Ok || failure.code == ExitCode::Conflict {
                    code = failure.code;
                }
                results.push(serde_json::json!({ "outcome": "error", "session_id": session_id, "error": failure.message, "exit_code": failure.code as i32 }));
                CliError {
                    message: format!("session {session_id}: {}", failure.message),
                    ..failure
                }
                .print(json);
            }
        }
    }
    // Each failure is on standard error already: standard output carries the other outcomes
    // (under --json every outcome, failures too), and nothing when every session failed.
    if !results.is_empty() && results.iter().all(|r| r["outcome"] == "error") {
        return Ok(code);
    }
    emit(json, &results, |results| {
        results
            .iter()
            .filter(|r| r["outcome"] != "error")
            .map(|r| match r["outcome"].as_str() {
                Some("completed") => format!(
                    "session {}: ingested {} {} as {} {} (job {})",
                    r["session_id"].as_str().unwrap_or(""),
                    thousands(r["messages"].as_i64().unwrap_or(0)),
                    crate::format::noun(r["messages"].as_u64().unwrap_or(0), "message"),
                    thousands(r["chunks"].as_i64().unwrap_or(0)),
                    crate::format::noun(r["chunks"].as_u64().unwrap_or(0), "chunk"),
                    r["job_id"].as_str().unwrap_or("")
                ),
                Some("nothing_pending") => format!(
                    "session {}: nothing pending",
                    r["session_id"].as_str().unwrap_or("")
                ),
                Some("skipped") => format!(
                    "session {}: skipped, another sync is running",
                    r["session_id"].as_str().unwrap_or("")
                ),
                _ => format!(
                    "session {}: {}",
                    r["session_id"].as_str().unwrap_or(""),
                    r["outcome"].as_str().unwrap_or("")
                ),
            })
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(code)
}

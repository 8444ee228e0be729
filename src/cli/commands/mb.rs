//! `mb` (memory bases), `capture` and `watch`.

use std::time::Duration;

use chrono::Utc;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::cli::args::{CaptureArgs, MbArgs, MbCommand, SyncArgs, UnitArg, WatchArgs};
use crate::cli::output::{CliError, CliResult, ExitCode, cell, confirm, emit, table, thousands};
use crate::cli::{Context, read_input};
use crate::inspect::memory_bases::{self as view, BaseStatus, SessionStatus};
use crate::inspect::syncers;
use crate::kb::embedder::HASHING_MODEL;
use crate::memory::memory_base::ThresholdUnit;
use crate::store::memory_bases::{MemoryBaseInfo, MemoryBaseUpdate};
use crate::store::{Part, Store};
use crate::sync::capture::CapturedMessage;
use crate::sync::watch::WatchEvent;
use crate::sync::{CancelFlag, MbSettings, SessionSync, SyncError, SyncOutcome, Syncer, Trigger};

impl From<UnitArg> for ThresholdUnit {
    fn from(unit: UnitArg) -> Self {
        match unit {
            UnitArg::Messages => ThresholdUnit::Messages,
            UnitArg::Runs => ThresholdUnit::Runs,
        }
    }
}

/// A sync failure as the CLI reports it: "already syncing" has its own exit code.
fn sync_failed(error: SyncError) -> CliError {
    CliError::from(error)
}

/// `[memory_bases]` of the configuration with the command line's overrides.
fn mb_settings(context: &Context, args: &SyncArgs) -> MbSettings {
    MbSettings::from_config(&context.resolved).with(&args.overrides())
}

fn syncer_for(context: &Context, store: &Store, model: &str, args: &SyncArgs) -> CliResult<Syncer> {
    mb_settings(context, args)
        .syncer(store.clone(), model)
        .map_err(sync_failed)
}

async fn resolve(
    store: &Store,
    context: &Context,
    args: &SyncArgs,
    key: &str,
) -> CliResult<(MemoryBaseInfo, Syncer)> {
    let hashing = syncer_for(context, store, HASHING_MODEL, args)?;
    let base = hashing.resolve(key).await.map_err(sync_failed)?;
    let syncer = syncer_for(context, store, &base.embedding_model, args)?;
    Ok((base, syncer))
}

/// Every knowledge base of the database, as Langflow lists them, memory bases marked: the
/// database's own KB directory (see `kb::database_kb_root`).
pub async fn kbs(context: &Context) -> CliResult {
    let store = context.open().await?;
    let root = &crate::kb::database_kb_root(&context.resolved.kb_root, store.database_id());
    let kbs = crate::kb::list_kbs(root);
    emit(context.global.json, &kbs, |kbs| {
        if kbs.is_empty() {
            return format!("no knowledge bases under {}", root.display());
        }
        let rows: Vec<Vec<String>> = kbs
            .iter()
            .map(|kb| {
                vec![
                    kb.username.clone(),
                    kb.kb_name.clone(),
                    if kb.is_memory_base { "memory base" } else { "" }.to_owned(),
                    kb.chunks.map_or_else(|| "?".to_owned(), thousands),
                    kb.embedding_model.clone().unwrap_or_default(),
                ]
            })
            .collect();
        format!(
            "{}\n{}",
            root.display(),
            table(
                &["user", "knowledge base", "kind", "chunks", "model"],
                &rows
            )
        )
    })?;
    Ok(ExitCode::Ok)
}

pub async fn run(context: &Context, args: &MbArgs) -> CliResult {
    let store = context.open_for(Part::MemoryBases).await?;
    let json = context.global.json;
    let sync_args = &args.sync;
    match &args.command {
        MbCommand::List => {
            let statuses = view::statuses(&store, &mb_settings(context, sync_args)).await?;
            emit(json, &statuses, |s| render_bases(s))?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Create {
            name,
            flow,
            threshold,
            unit,
            auto_capture,
            embedding_model,
        } => {
            let request = view::NewBaseRequest {
                name: name.clone(),
                flow: flow.clone(),
                threshold: *threshold,
                unit: (*unit).into(),
                auto_capture: *auto_capture,
                embedding_model: embedding_model.clone(),
            };
            let id = view::create_base(&store, &mb_settings(context, sync_args), &request).await?;
            let (base, _) = resolve(&store, context, sync_args, &id).await?;
            emit(json, &base, |b| {
                format!(
                    "created memory base {} ({}), KB {}",
                    b.name, b.id, b.kb_name
                )
            })?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Show { base } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            let status = view::base_status(&syncer, base)
                .await
                .map_err(sync_failed)?;
            let sessions = view::sessions(&syncer, &status.base)
                .await
                .map_err(sync_failed)?;
            let jobs = view::jobs(&syncer, Some(&status.base.id), 10)
                .await
                .map_err(sync_failed)?;
            #[derive(Serialize)]
            struct Show<'a> {
                #[serde(flatten)]
                status: &'a BaseStatus,
                session_list: &'a [SessionStatus],
                jobs: &'a [crate::store::memory_bases::JobInfo],
            }
            let show = Show {
                status: &status,
                session_list: &sessions,
                jobs: &jobs,
            };
            emit(json, &show, |s| {
                let mut out = render_bases(std::slice::from_ref(s.status));
                out.push_str(&format!("\nKB: {}\n\n", s.status.kb_path.display()));
                out.push_str(&render_sessions(s.session_list));
                out.push_str("\n\nrecent jobs:\n");
                out.push_str(&render_jobs(s.jobs));
                out
            })?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Update {
            base,
            name,
            threshold,
            unit,
            auto_capture,
        } => {
            let (base, _) = resolve(&store, context, sync_args, base).await?;
            let update = MemoryBaseUpdate {
                name: name.clone(),
                threshold: *threshold,
                unit: unit.map(Into::into),
                auto_capture: *auto_capture,
            };
            store.update_memory_base(&base.id, &update).await?;
            let (base, _) = resolve(&store, context, sync_args, &base.id).await?;
            emit(json, &base, |b| {
                format!(
                    "{}: threshold {} {}, auto-capture {}",
                    b.name, b.threshold, b.threshold_unit, b.auto_capture
                )
            })?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Delete { base, yes } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            confirm(
                *yes,
                format!(
                    "deleting memory base {} removes its sessions, records and knowledge base",
                    base.name
                ),
            )?;
            let wait = mb_settings(context, sync_args).delete_wait();
            let report = syncer.delete(&base, wait).await.map_err(sync_failed)?;
            emit(json, &report, |r| {
                format!(
                    "deleted memory base {} ({} job(s) cancelled), removed {}",
                    base.name,
                    r.cancelled_jobs.len(),
                    r.kb_path.display()
                )
            })?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Sessions { base } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            let sessions = view::sessions(&syncer, &base).await.map_err(sync_failed)?;
            emit(json, &sessions, |s| render_sessions(s))?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Sync {
            base,
            session,
            wait,
        } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            let wait = Duration::from_secs(*wait);
            let (progress, mut updates) = mpsc::unbounded_channel::<crate::sync::JobProgress>();
            // Progress goes to stderr so stdout stays the result.
            let show_progress = !json;
            let printer = tokio::spawn(async move {
                while let Some(update) = updates.recv().await {
                    if show_progress {
                        eprintln!(
                            "job {} session {}: {}/{} messages, {} chunks",
                            &update.job_id[..8],
                            update.session_id,
                            update.messages_done,
                            update.messages_total,
                            update.chunks_written
                        );
                    }
                }
            });
            let cancel = CancelFlag::default();
            let outcomes: Vec<SessionSync> = match session {
                Some(session) => vec![(
                    session.clone(),
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
            report_outcomes(json, outcomes)
        }
        MbCommand::Regenerate { base, yes } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            confirm(
                *yes,
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
            report_outcomes(json, outcomes)
        }
        MbCommand::Check { base } => {
            let bases = match base {
                Some(key) => vec![resolve(&store, context, sync_args, key).await?.0],
                None => store.memory_bases().await?,
            };
            let mut reports = Vec::new();
            let mut any = false;
            for base in bases {
                let syncer = syncer_for(context, &store, &base.embedding_model, sync_args)?;
                let report = syncer.check(&base).await.map_err(sync_failed)?;
                any |= !report.mismatches.is_empty();
                // A KB left where databases used to share one directory is named, never used.
                let shared = crate::kb::left_in_shared_layout(
                    &context.resolved.kb_root,
                    store.database_id(),
                    &report.kb_path,
                )
                .map(|shared| {
                    crate::kb::shared_layout_advice(&report.name, &shared, &report.kb_path)
                });
                reports.push(Checked {
                    report,
                    shared_layout: shared,
                });
            }
            emit(json, &reports, |reports| {
                reports
                    .iter()
                    .map(|checked| {
                        let reasons: Vec<String> = checked
                            .report
                            .mismatches
                            .iter()
                            .map(ToString::to_string)
                            .chain(checked.shared_layout.clone())
                            .collect();
                        if reasons.is_empty() {
                            format!("{}: ok", checked.report.name)
                        } else {
                            format!("{}: MISMATCH: {}", checked.report.name, reasons.join("; "))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })?;
            Ok(if any {
                ExitCode::Findings
            } else {
                ExitCode::Ok
            })
        }
        MbCommand::Search {
            base,
            query,
            session,
            top_k,
        } => {
            let (base, syncer) = resolve(&store, context, sync_args, base).await?;
            let hits = view::search(&syncer, &base, query, session.as_deref(), *top_k)
                .await
                .map_err(sync_failed)?;
            emit(json, &hits, |hits| {
                let rows: Vec<Vec<String>> = hits
                    .iter()
                    .map(|h| {
                        vec![
                            format!("{:.3}", 1.0 - h.distance),
                            cell(&h.session_id, 20),
                            cell(&h.message_id, 8),
                            cell(&h.content, 80),
                        ]
                    })
                    .collect();
                table(&["score", "session", "message", "content"], &rows)
            })?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Jobs { base, limit } => {
            let hashing = syncer_for(context, &store, HASHING_MODEL, sync_args)?;
            let base_id = match base {
                Some(key) => Some(hashing.resolve(key).await.map_err(sync_failed)?.id),
                None => None,
            };
            let jobs = view::jobs(&hashing, base_id.as_deref(), *limit)
                .await
                .map_err(sync_failed)?;
            emit(json, &jobs, |j| render_jobs(j))?;
            Ok(ExitCode::Ok)
        }
        MbCommand::Cancel { job } => {
            let hashing = syncer_for(context, &store, HASHING_MODEL, sync_args)?;
            if !hashing.cancel_job(job).await.map_err(sync_failed)? {
                return Err(
                    CliError::not_found(format!("job {job} is not queued or running"))
                        .with_hint("`memscope mb jobs` lists the jobs and their states"),
                );
            }
            emit(
                json,
                &serde_json::json!({ "job_id": job, "cancelled": true }),
                |_| format!("job {job} cancelled; its process rolls it back at its next check"),
            )?;
            Ok(ExitCode::Ok)
        }
    }
}

/// One base's `mb check`: the report, and what to do about a KB left in the shared layout.
#[derive(Serialize)]
struct Checked {
    #[serde(flatten)]
    report: crate::sync::CheckReport,
    shared_layout: Option<String>,
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
    emit(json, &results, |results| {
        results
            .iter()
            .map(|r| match r["outcome"].as_str() {
                Some("completed") => format!(
                    "session {}: ingested {} {} as {} {} (job {})",
                    r["session_id"].as_str().unwrap_or(""),
                    thousands(r["messages"].as_i64().unwrap_or(0)),
                    crate::inspect::noun(r["messages"].as_u64().unwrap_or(0), "message"),
                    thousands(r["chunks"].as_i64().unwrap_or(0)),
                    crate::inspect::noun(r["chunks"].as_u64().unwrap_or(0), "chunk"),
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
                    "session {}: error: {}",
                    r["session_id"].as_str().unwrap_or(""),
                    r["error"].as_str().unwrap_or("")
                ),
            })
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(code)
}

fn render_bases(statuses: &[BaseStatus]) -> String {
    if statuses.is_empty() {
        return "no memory bases".to_owned();
    }
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|s| {
            let b = &s.base;
            let warning = if s.mismatches.is_empty() {
                String::new()
            } else {
                format!("! {}", s.mismatches[0])
            };
            vec![
                cell(&b.name, 24),
                cell(b.flow_name.as_deref().unwrap_or(&b.flow_id), 20),
                format!("{} {}", b.threshold, b.threshold_unit),
                if b.auto_capture { "auto" } else { "manual" }.to_owned(),
                cell(&b.kb_name, 28),
                thousands(b.sessions),
                thousands(b.total_processed),
                s.status.as_str().to_owned(),
                warning,
            ]
        })
        .collect();
    table(
        &[
            "name",
            "flow",
            "threshold",
            "capture",
            "kb",
            "sessions",
            "processed",
            "status",
            "warning",
        ],
        &rows,
    )
}

fn render_sessions(sessions: &[SessionStatus]) -> String {
    if sessions.is_empty() {
        return "no tracked sessions".to_owned();
    }
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            vec![
                cell(&s.session.session_id, 36),
                s.pending_label(),
                gauge(s.ratio()),
                thousands(s.pending_messages),
                s.session
                    .cursor_id
                    .as_deref()
                    .map_or("-".to_owned(), |c| cell(c, 8)),
                thousands(s.session.total_processed),
                s.session.last_sync_at.map_or("never".to_owned(), |t| {
                    t.format("%Y-%m-%d %H:%M").to_string()
                }),
            ]
        })
        .collect();
    table(
        &[
            "session",
            "pending",
            "",
            "to ingest",
            "cursor",
            "processed",
            "last sync",
        ],
        &rows,
    )
}

fn gauge(ratio: f64) -> String {
    let filled = (ratio * 10.0).round() as usize;
    format!(
        "[{}{}]",
        "#".repeat(filled),
        ".".repeat(10 - filled.min(10))
    )
}

fn render_jobs(jobs: &[crate::store::memory_bases::JobInfo]) -> String {
    if jobs.is_empty() {
        return "no ingestion jobs".to_owned();
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|j| {
            let elapsed = j.finished_timestamp.unwrap_or_else(Utc::now) - j.created_timestamp;
            vec![
                j.job_id.clone(),
                match &j.ended_reason {
                    Some(reason) => format!("{} ({reason})", j.status),
                    None => j.status.clone(),
                },
                cell(j.session_id().unwrap_or("-"), 36),
                j.created_timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
                format!("{:.1}s", elapsed.num_milliseconds() as f64 / 1000.0),
            ]
        })
        .collect();
    table(&["job", "status", "session", "created", "elapsed"], &rows)
}

pub async fn capture(context: &Context, args: &CaptureArgs) -> CliResult {
    let messages: Vec<CapturedMessage> =
        serde_json::from_str(&read_input(&args.input)?).map_err(|e| {
            CliError::failure(format!("capture input is not a JSON list of messages: {e}"))
        })?;
    let store = context.open_for(Part::MemoryBases).await?;
    let flow_id = view::find_flow(&store, &args.flow).await?;
    // Capture itself embeds nothing; the syncs it starts use the bases' embedder.
    let bases = store.memory_bases_of_flow(&flow_id).await?;
    let model = bases
        .iter()
        .find(|b| b.auto_capture)
        .map_or(HASHING_MODEL, |b| b.embedding_model.as_str());
    let syncer = syncer_for(context, &store, model, &args.sync)?;
    let report = syncer
        .capture(&flow_id, &args.session, args.run.as_deref(), &messages)
        .await
        .map_err(sync_failed)?;
    emit(context.global.json, &report, |r| {
        let mut out = format!(
            "recorded {} message(s) of run {} in session {} ({} memory base(s))",
            r.message_ids.len(),
            r.run_id,
            r.session_id,
            r.memory_bases.len()
        );
        for sync in &r.syncs {
            if let SyncOutcome::Completed(job) = sync {
                out.push_str(&format!(
                    "\nthreshold reached: ingested {} messages (job {})",
                    job.messages, job.job_id
                ));
            }
        }
        for error in &r.errors {
            out.push_str(&format!("\nsync failed: {error}"));
        }
        out
    })?;
    Ok(if report.errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

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
            crate::inspect::noun(job.messages, "message"),
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
                "  session {}: {stage}, {} of {} messages, {} chunks (job {})",
                report.session_id,
                thousands(report.messages_done),
                thousands(report.messages_total),
                thousands(report.chunks_written),
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

//! The `mb` subcommands about the bases themselves: list, create, show, update, delete, their
//! sessions, their consistency check and a search of their knowledge base.

use serde::Serialize;

use super::context::{MbContext, sync_failed};
use super::render::{render_bases, render_jobs, render_sessions};
use crate::cli::args::UnitArg;
use crate::cli::output::{CliResult, ExitCode, confirm, emit, table};
use crate::format::one_line;
use crate::inspect::memory_bases::{self as view, BaseStatus, SessionStatus};
use crate::memory::memory_base::ThresholdUnit;
use crate::store::BaseChange;
use crate::store::memory_bases::{JobInfo, MemoryBaseUpdate};

impl From<UnitArg> for ThresholdUnit {
    fn from(unit: UnitArg) -> Self {
        match unit {
            UnitArg::Messages => ThresholdUnit::Messages,
            UnitArg::Runs => ThresholdUnit::Runs,
        }
    }
}

pub(super) async fn list(mb: &MbContext<'_>) -> CliResult {
    let statuses = view::statuses(&mb.store, &mb.settings()).await?;
    mb.emit(&statuses, |s| render_bases(s))
}

pub(super) async fn create(mb: &MbContext<'_>, request: &view::NewBaseRequest) -> CliResult {
    let id = view::create_base(&mb.store, &mb.settings(), request).await?;
    let (base, _) = mb.resolve(&id).await?;
    mb.emit(&base, |b| {
        format!(
            "created memory base {} ({}), KB {}",
            b.name, b.id, b.kb_name
        )
    })
}

pub(super) async fn show(mb: &MbContext<'_>, key: &str) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
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
        jobs: &'a [JobInfo],
    }
    let show = Show {
        status: &status,
        session_list: &sessions,
        jobs: &jobs,
    };
    mb.emit(&show, |s| {
        let mut out = render_bases(std::slice::from_ref(s.status));
        out.push_str(&format!("\nKB: {}\n\n", s.status.kb_path.display()));
        out.push_str(&render_sessions(s.session_list));
        out.push_str("\n\nrecent jobs:\n");
        out.push_str(&render_jobs(s.jobs));
        out
    })
}

pub(super) async fn update(mb: &MbContext<'_>, key: &str, update: &MemoryBaseUpdate) -> CliResult {
    let (base, _) = mb.resolve(key).await?;
    mb.store.update_memory_base(&base.id, update).await?;
    let (base, _) = mb.resolve(&base.id).await?;
    mb.emit(&base, |b| {
        format!(
            "{}: threshold {} {}, auto-capture {}",
            b.name, b.threshold, b.threshold_unit, b.auto_capture
        )
    })
}

pub(super) async fn delete(mb: &MbContext<'_>, key: &str, yes: bool) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
    // Refused before the confirmation where memscope never deletes a base.
    mb.store.ensure_base_change(BaseChange::Delete)?;
    confirm(
        yes,
        format!(
            "deleting memory base {} removes its sessions, records and knowledge base",
            base.name
        ),
    )?;
    let report = syncer
        .delete(&base, mb.settings().delete_wait())
        .await
        .map_err(sync_failed)?;
    mb.emit(&report, |r| {
        format!(
            "deleted memory base {} ({} cancelled), removed {}",
            base.name,
            crate::format::count(r.cancelled_jobs.len() as u64, "job"),
            r.kb_path.display()
        )
    })
}

pub(super) async fn sessions(mb: &MbContext<'_>, key: &str) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
    let sessions = view::sessions(&syncer, &base).await.map_err(sync_failed)?;
    mb.emit(&sessions, |s| render_sessions(s))
}

/// One base's `mb check`: the report, and what to do about a KB left in the shared layout.
#[derive(Serialize)]
struct Checked {
    #[serde(flatten)]
    report: crate::sync::CheckReport,
    shared_layout: Option<String>,
}

/// Checks one base, or every base: exit code Findings when any mismatches its knowledge base.
pub(super) async fn check(mb: &MbContext<'_>, key: Option<&str>) -> CliResult {
    let bases = match key {
        Some(key) => vec![mb.resolve(key).await?.0],
        None => mb.store.memory_bases().await?,
    };
    let mut reports = Vec::new();
    let mut any = false;
    for base in bases {
        let syncer = mb.syncer(&base.embedding_model)?;
        let report = syncer.check(&base).await.map_err(sync_failed)?;
        any |= !report.mismatches.is_empty();
        // A KB left where databases used to share one directory is named, never used.
        let shared = crate::kb::left_in_shared_layout(
            &mb.context.resolved.kb_root,
            mb.store.database_id(),
            &report.kb_path,
        )
        .map(|shared| crate::kb::shared_layout_advice(&report.name, &shared, &report.kb_path));
        reports.push(Checked {
            report,
            shared_layout: shared,
        });
    }
    emit(mb.json, &reports, |reports| {
        if reports.is_empty() {
            return "no memory bases to check".to_owned();
        }
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

pub(super) async fn search(
    mb: &MbContext<'_>,
    key: &str,
    query: &str,
    session: Option<&str>,
    top_k: usize,
) -> CliResult {
    let (base, syncer) = mb.resolve(key).await?;
    let hits = view::search(&syncer, &base, query, session, top_k)
        .await
        .map_err(sync_failed)?;
    mb.emit(&hits, |hits| {
        let rows: Vec<Vec<String>> = hits
            .iter()
            .map(|h| {
                vec![
                    format!("{:.3}", 1.0 - h.distance),
                    one_line(&h.session_id, 20),
                    one_line(&h.message_id, 8),
                    one_line(&h.content, 80),
                ]
            })
            .collect();
        table(&["score", "session", "message", "content"], &rows)
    })
}

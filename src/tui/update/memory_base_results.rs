//! The memory bases tab's job results: loads, finished writes and syncs, job progress and the
//! watcher's reports.

use chrono::{DateTime, Utc};

use super::effect::Effect;
use super::memory_base_forms::new_base_form;
use super::memory_base_jobs::{MbEvent, MbLoaded, SyncResult};
use super::memory_bases::{reload_bases, reload_jobs, reload_sessions};
use crate::inspect::memory_bases::{BaseStatus, NewBaseRequest};
use crate::sync::{JobProgress, Stage};
use crate::tui::state::FormPurpose;
use crate::tui::state::confirm::Confirm;
use crate::tui::state::memory_bases::{
    BaseForm, Focus, JOB_ROWS, MemoryBaseWrite, TrackedJob, new_base_request,
};
use crate::tui::state::{AppState, LoadStatus, Overlay};

/// Applies a load's report (of the latest request: `loads.rs` checked). `false` when it
/// changed nothing.
pub(super) fn on_load(state: &mut AppState, report: MbLoaded, effects: &mut Vec<Effect>) -> bool {
    match report {
        MbLoaded::Bases(result) => return bases_loaded(state, result, effects),
        MbLoaded::Sessions(result) => {
            let tab = &mut state.memory_bases;
            match result {
                Ok(sessions) => {
                    let selected_id = tab.selected_session().map(|s| s.session.session_id.clone());
                    let fallback = tab.session_selected;
                    tab.session_selected =
                        reselect(&sessions, selected_id, |s| &s.session.session_id, fallback).0;
                    tab.sessions = sessions;
                    tab.sessions_status = LoadStatus::Loaded;
                }
                Err(error) => tab.sessions_status = LoadStatus::Failed(error),
            }
        }
        MbLoaded::Jobs { result, now } => {
            advance_clock(state, now);
            match result {
                Ok(jobs) => state.jobs.table = jobs,
                Err(error) => state.message = Some(format!("jobs: {error}")),
            }
            let last = state.jobs.lines().len().saturating_sub(1);
            state.jobs.selected = state.jobs.selected.min(last);
        }
        MbLoaded::Hits(result) => {
            let Some(search) = state.memory_bases.search.as_mut() else {
                return false;
            };
            match result {
                Ok(hits) => {
                    search.hits = hits;
                    search.status = LoadStatus::Loaded;
                }
                Err(error) => search.status = LoadStatus::Failed(error),
            }
        }
    }
    true
}

/// Applies a job's result or report.
pub(super) fn on_job(state: &mut AppState, event: MbEvent, effects: &mut Vec<Effect>) -> bool {
    match event {
        MbEvent::Progress {
            progress,
            at,
            automatic,
        } => progressed(state, progress, at, automatic, effects),
        MbEvent::Synced { base_name, result } => {
            state.message = Some(match result {
                Ok(results) => describe_syncs(state, &base_name, results),
                Err(error) => format!("sync of {base_name} failed: {error}"),
            });
            reload_bases(state, false, effects);
            reload_jobs(state, effects);
        }
        MbEvent::CreateChecked { request, result } => {
            return create_checked(state, request, result);
        }
        MbEvent::Created { result } => {
            let tab = &mut state.memory_bases;
            match result {
                Ok(done) => {
                    tab.create_draft = None;
                    state.message = Some(done);
                }
                // Refused after all (e.g. another process took the name): the form comes back
                // as it was typed, with the reason, unless another popup is in front by now.
                Err(error) => {
                    if state.overlay == Overlay::None
                        && let Some(form) = tab.create_draft.take()
                    {
                        state.overlay = Overlay::Form(new_base_form(form).refused(error.clone()));
                    }
                    state.message = Some(format!("failed: {error}"));
                }
            }
            reload_bases(state, false, effects);
        }
        MbEvent::Written { result } => {
            state.message = Some(result.unwrap_or_else(|e| format!("failed: {e}")));
            reload_bases(state, false, effects);
            reload_jobs(state, effects);
        }
        MbEvent::Watched(event) => match event.result {
            // Automatic: skips stay quiet, and completions show in the jobs popup.
            Ok(_) => state.jobs.watcher_error = None,
            Err(error) => {
                state.jobs.watcher_error = Some(format!(
                    "auto-sync of {} / {}: {error}",
                    event.memory_base, event.session_id
                ));
            }
        },
        MbEvent::WatchFailed(error) => {
            state.jobs.watcher_error = Some(format!("watcher: {error}"));
        }
        MbEvent::Cancelled { job_id, result } => {
            state.message = Some(match result {
                Ok(true) => format!("job {job_id} cancelled: it rolls back at its next check"),
                Ok(false) => format!("job {job_id} is not queued or running"),
                Err(error) => format!("could not cancel job {job_id}: {error}"),
            });
            reload_jobs(state, effects);
        }
    }
    true
}

/// The bases arrived: the selection follows its base, and its sessions load.
fn bases_loaded(
    state: &mut AppState,
    result: Result<Vec<BaseStatus>, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let tab = &mut state.memory_bases;
    match result {
        Ok(bases) => {
            let selected_id = tab.selected_base().map(|b| b.base.id.clone());
            let (selected, kept) = reselect(&bases, selected_id, |b| &b.base.id, tab.selected);
            if !kept {
                // Deleted, or the first load: its sessions are another base's.
                tab.sessions.clear();
                tab.session_selected = 0;
                tab.focus = Focus::Bases;
                tab.search = None;
            }
            tab.selected = selected;
            tab.bases = bases;
            tab.status = LoadStatus::Loaded;
            reload_sessions(state, effects);
        }
        Err(error) => tab.status = LoadStatus::Failed(error),
    }
    true
}

/// A running job's report: tracked for the jobs popup; a finished one reloads what it changed.
fn progressed(
    state: &mut AppState,
    progress: JobProgress,
    at: DateTime<Utc>,
    automatic: bool,
    effects: &mut Vec<Effect>,
) {
    advance_clock(state, at);
    let finished = (progress.stage != Stage::Running).then_some(at);
    let tracked = &mut state.jobs.tracked;
    match tracked
        .iter_mut()
        .find(|t| t.progress.job_id == progress.job_id)
    {
        Some(job) => {
            job.progress = progress;
            job.finished = finished;
        }
        None => tracked.push(TrackedJob {
            progress,
            started: at,
            finished,
            automatic,
        }),
    }
    // Keep the recent ones: the job table has the rest.
    if tracked.len() > JOB_ROWS as usize {
        tracked.retain(TrackedJob::is_running);
    }
    if finished.is_some() {
        reload_bases(state, false, effects);
        reload_jobs(state, effects);
    }
}

/// The new base's check: the confirmation when it passed, the form with the reason otherwise.
/// `false` when that form is no longer waiting for it (closed, or changed and sent again).
fn create_checked(
    state: &mut AppState,
    request: NewBaseRequest,
    result: Result<(), String>,
) -> bool {
    let waiting = matches!(&state.overlay, Overlay::Form(popup)
        if popup.purpose == FormPurpose::MemoryBase(BaseForm::Create)
            && popup.waiting.is_some()
            && new_base_request(&popup.form).as_ref() == Ok(&request));
    if !waiting {
        return false;
    }
    let Overlay::Form(popup) = std::mem::take(&mut state.overlay) else {
        return false;
    };
    match result {
        Ok(()) => {
            state.memory_bases.create_draft = Some(popup.form);
            state.overlay =
                Overlay::Confirm(Confirm::memory_base(MemoryBaseWrite::Create(request)));
        }
        Err(error) => state.overlay = Overlay::Form(popup.refused(error)),
    }
    true
}

/// A reload keeps the selection on the row with `id`; if it is gone, on `fallback` (clamped).
/// Also says whether the row was found.
fn reselect<T>(
    rows: &[T],
    id: Option<String>,
    key: impl Fn(&T) -> &String,
    fallback: usize,
) -> (usize, bool) {
    let found = id.and_then(|id| rows.iter().position(|row| *key(row) == id));
    let last = rows.len().saturating_sub(1);
    (found.unwrap_or(fallback).min(last), found.is_some())
}

fn advance_clock(state: &mut AppState, at: DateTime<Utc>) {
    let now = &mut state.jobs.now;
    if now.is_none_or(|n| n < at) {
        *now = Some(at);
    }
}

/// One line for a manual sync's sessions; failures are remembered for the jobs popup.
fn describe_syncs(state: &mut AppState, base_name: &str, results: Vec<SyncResult>) -> String {
    let mut ingested = 0;
    let mut nothing = 0;
    let mut conflicts = Vec::new();
    let mut failures = Vec::new();
    for result in results {
        match result {
            SyncResult::Completed { messages, .. } => ingested += messages,
            SyncResult::NothingPending { .. } => nothing += 1,
            SyncResult::Conflict { session_id } => conflicts.push(session_id),
            SyncResult::Failed {
                session_id,
                job_id,
                error,
            } => {
                if let Some(job_id) = job_id {
                    state.jobs.errors.push((job_id, error.clone()));
                }
                failures.push(match session_id {
                    Some(session_id) => format!("{session_id}: {error}"),
                    None => error,
                });
            }
        }
    }
    if !conflicts.is_empty() {
        return format!(
            "{base_name}: already syncing ({}); try again when it finishes",
            conflicts.join(", ")
        );
    }
    if !failures.is_empty() {
        return format!("{base_name}: sync failed: {}", failures.join("; "));
    }
    if ingested == 0 && nothing > 0 {
        return format!("{base_name}: nothing pending");
    }
    format!(
        "{base_name}: ingested {}",
        crate::format::count(ingested, "message")
    )
}

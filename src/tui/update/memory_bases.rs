//! The memory bases tab and the jobs popup: their actions, dialogs and job results.
//!
//! Every write is a request to the job runner, refused up front on a read-only database; its
//! result comes back as an [`MbEvent`], after which the tab reloads. A manual sync that loses the
//! race to another sync shows "already syncing"; the watcher's automatic ones stay quiet.

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent};

use super::Effect;
use crate::inspect::memory_bases::{BaseState, BaseStatus, NewBaseRequest, SessionStatus};
use crate::kb::store::SearchHit;
use crate::store::memory_bases::{JobInfo, MemoryBaseInfo, MemoryBaseUpdate};
use crate::sync::watch::WatchEvent;
use crate::sync::{JobProgress, Stage, SyncOutcome};
use crate::tui::action::Action;
use crate::tui::state::memory_bases::{
    Confirm, CreateForm, Dialog, Focus, JOB_ROWS, SearchState, TrackedJob, threshold_form,
    threshold_of,
};
use crate::tui::state::{AppState, LoadStatus, Overlay, Screen};

/// Work on memory bases for the job runner.
#[derive(Debug, Clone)]
pub enum MbEffect {
    LoadBases {
        generation: u64,
    },
    LoadSessions {
        generation: u64,
        base: Box<MemoryBaseInfo>,
    },
    /// The job table's recent rows (every process's jobs).
    LoadJobs {
        generation: u64,
        limit: i64,
    },
    /// A manual sync of one session, or of every session of the base.
    Sync {
        base: Box<MemoryBaseInfo>,
        session: Option<String>,
    },
    Update {
        base: Box<MemoryBaseInfo>,
        update: MemoryBaseUpdate,
    },
    /// Checks a new base's flow, name and model before the confirmation.
    CheckCreate(NewBaseRequest),
    Create(NewBaseRequest),
    Delete(Box<MemoryBaseInfo>),
    Regenerate(Box<MemoryBaseInfo>),
    Search {
        generation: u64,
        base: Box<MemoryBaseInfo>,
        query: String,
        top_k: usize,
    },
    CancelJob {
        job_id: String,
    },
}

/// How one session's sync ended, as the screen reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncResult {
    Completed {
        session_id: String,
        job_id: String,
        messages: u64,
    },
    NothingPending {
        session_id: String,
    },
    /// Another sync holds the session: a manual trigger's Conflict.
    Conflict {
        session_id: String,
    },
    Failed {
        /// `None` in a whole base's sync, whose error names the session.
        session_id: Option<String>,
        /// The job's id when the failure was a job's (cancelled or rolled back).
        job_id: Option<String>,
        error: String,
    },
}

impl SyncResult {
    /// The sync outcomes of the syncer, as reported.
    pub fn from_outcome(outcome: SyncOutcome) -> SyncResult {
        match outcome {
            SyncOutcome::Completed(job) => SyncResult::Completed {
                session_id: job.session_id,
                job_id: job.job_id,
                messages: job.messages,
            },
            SyncOutcome::NothingPending { session_id } => SyncResult::NothingPending { session_id },
            // Only automatic triggers skip; a manual one never gets here.
            SyncOutcome::Skipped { session_id } => SyncResult::Conflict { session_id },
        }
    }
}

/// Results of [`MbEffect`]s and reports of running jobs and the watcher.
#[derive(Debug)]
pub enum MbEvent {
    Bases {
        generation: u64,
        result: Result<Vec<BaseStatus>, String>,
    },
    Sessions {
        generation: u64,
        result: Result<Vec<SessionStatus>, String>,
    },
    Jobs {
        generation: u64,
        result: Result<Vec<JobInfo>, String>,
        now: DateTime<Utc>,
    },
    /// A running job's report; `automatic` when the watcher started it.
    Progress {
        progress: JobProgress,
        at: DateTime<Utc>,
        automatic: bool,
    },
    /// A manual sync finished (the whole base's or one session's).
    Synced {
        base_name: String,
        result: Result<Vec<SyncResult>, String>,
    },
    /// A write other than a sync finished: what it did, or why it failed.
    Written { result: Result<String, String> },
    /// What [`MbEffect::CheckCreate`] found.
    CreateChecked {
        request: NewBaseRequest,
        result: Result<(), String>,
    },
    /// A base was created, or why not.
    Created { result: Result<String, String> },
    Hits {
        generation: u64,
        result: Result<Vec<SearchHit>, String>,
    },
    /// One watcher check of one session.
    Watched(WatchEvent),
    /// A watcher pass failed (it tries again at the next interval).
    WatchFailed(String),
    Cancelled {
        job_id: String,
        result: Result<bool, String>,
    },
}

/// Loads every base and the job table, so the status bar counts mismatches and running jobs
/// from the first frame.
pub(super) fn start(state: &mut AppState, effects: &mut Vec<Effect>) {
    reload_bases(state, true, effects);
    reload_jobs(state, effects);
}

/// The tab came to the front: other processes may have changed everything.
pub(super) fn enter(state: &mut AppState, effects: &mut Vec<Effect>) {
    let empty = state.memory_bases.bases.is_empty();
    reload_bases(state, empty, effects);
    reload_jobs(state, effects);
}

/// A polling tick while the tab is in front: bases, sessions and pending counts.
pub(super) fn poll(state: &mut AppState, effects: &mut Vec<Effect>) {
    if state.memory_bases.status == LoadStatus::Loaded && state.memory_bases.dialog.is_none() {
        reload_bases(state, false, effects);
    }
}

/// Every tick: the job table, while the popup is open or a job runs.
pub(super) fn tick(state: &mut AppState, effects: &mut Vec<Effect>) {
    let watched = state.jobs.open || state.jobs.running() > 0;
    if watched && state.ticks % 2 == 0 {
        reload_jobs(state, effects);
    }
}

/// Whether a dialog of the tab is taking typed text: then keys go to [`text_key`].
pub(super) fn takes_text(state: &AppState) -> bool {
    state.screen == Screen::MemoryBases
        && state.overlay == Overlay::None
        && state
            .memory_bases
            .dialog
            .as_ref()
            .is_some_and(Dialog::takes_text)
}

fn reload_bases(state: &mut AppState, show_loading: bool, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let tab = &mut state.memory_bases;
    tab.generation = generation;
    if show_loading {
        tab.status = LoadStatus::Loading;
    }
    effects.push(Effect::MemoryBases(MbEffect::LoadBases { generation }));
}

fn reload_sessions(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let tab = &mut state.memory_bases;
    let Some(base) = tab.selected_base() else {
        tab.sessions.clear();
        tab.sessions_status = LoadStatus::Loaded;
        return;
    };
    let base = Box::new(base.base.clone());
    tab.sessions_generation = generation;
    if tab.sessions.is_empty() {
        tab.sessions_status = LoadStatus::Loading;
    }
    effects.push(Effect::MemoryBases(MbEffect::LoadSessions {
        generation,
        base,
    }));
}

fn reload_jobs(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.jobs.generation = generation;
    effects.push(Effect::MemoryBases(MbEffect::LoadJobs {
        generation,
        limit: JOB_ROWS,
    }));
}

/// Refuses a write on a read-only database, saying so.
fn writable(state: &mut AppState, what: &str) -> bool {
    if state.read_only {
        state.message = Some(format!(
            "read-only database: cannot {what} (open it writable to change memory bases)"
        ));
    }
    !state.read_only
}

fn selected_info(state: &AppState) -> Option<Box<MemoryBaseInfo>> {
    state
        .memory_bases
        .selected_base()
        .map(|b| Box::new(b.base.clone()))
}

/// The tab's actions.
pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    if let Some(Dialog::Confirm(_)) = &state.memory_bases.dialog {
        confirm_action(state, action, effects);
        return;
    }
    let tab = &mut state.memory_bases;
    match action {
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom => move_selection(state, action, effects),
        Action::Open if tab.focus == Focus::Sessions => super::details::open(state),
        Action::Open if !tab.sessions.is_empty() => tab.focus = Focus::Sessions,
        Action::Back => {
            if tab.search.is_some() {
                tab.search = None;
            } else {
                tab.focus = Focus::Bases;
            }
        }
        Action::Refresh => {
            reload_bases(state, false, effects);
            reload_jobs(state, effects);
        }
        Action::SearchKb => match selected_info(state) {
            Some(base) => {
                let text = state
                    .memory_bases
                    .search
                    .as_ref()
                    .map(|s| s.query.clone())
                    .unwrap_or_default();
                state.memory_bases.dialog = Some(Dialog::Search { base, text });
            }
            None => state.message = Some("no memory base to search".to_owned()),
        },
        Action::SyncSession => sync(state, true, effects),
        Action::SyncBase => sync(state, false, effects),
        Action::ToggleAutoCapture => {
            if !writable(state, "change auto-capture") {
                return;
            }
            if let Some(base) = selected_info(state) {
                let update = MemoryBaseUpdate {
                    auto_capture: Some(!base.auto_capture),
                    ..MemoryBaseUpdate::default()
                };
                effects.push(Effect::MemoryBases(MbEffect::Update { base, update }));
            }
        }
        Action::EditThreshold => {
            if !writable(state, "change a threshold") {
                return;
            }
            if let Some(base) = selected_info(state) {
                state.memory_bases.dialog = Some(Dialog::Threshold {
                    form: threshold_form(base.threshold, base.unit().as_str()),
                    base_id: base.id,
                    base_name: base.name,
                    error: None,
                });
            }
        }
        Action::CreateBase => {
            if !writable(state, "create a memory base") {
                return;
            }
            let flow = selected_info(state)
                .map(|b| b.flow_name.unwrap_or(b.flow_id))
                .unwrap_or_default();
            state.memory_bases.dialog = Some(Dialog::Create(CreateForm::new(flow)));
        }
        Action::DeleteBase => {
            if !writable(state, "delete a memory base") {
                return;
            }
            if let Some(base) = selected_info(state) {
                state.memory_bases.dialog = Some(Dialog::Confirm(Confirm::Delete(base)));
            }
        }
        Action::Regenerate => {
            let Some(status) = state.memory_bases.selected_base() else {
                return;
            };
            if status.status != BaseState::Mismatch {
                state.message = Some(format!(
                    "{}: its knowledge base agrees with the database; regenerate is offered on \
                     a mismatch",
                    status.base.name
                ));
                return;
            }
            if !writable(state, "regenerate a memory base") {
                return;
            }
            if let Some(base) = selected_info(state) {
                state.memory_bases.dialog = Some(Dialog::Confirm(Confirm::Regenerate(base)));
            }
        }
        _ => {}
    }
}

fn move_selection(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let tab = &mut state.memory_bases;
    let (current, len) = match tab.focus {
        Focus::Bases => (tab.selected, tab.bases.len()),
        Focus::Sessions => (tab.session_selected, tab.sessions.len()),
    };
    let last = len.saturating_sub(1);
    let target = match action {
        Action::Up => current.saturating_sub(1),
        Action::Down => (current + 1).min(last),
        Action::PageUp => current.saturating_sub(10),
        Action::PageDown => (current + 10).min(last),
        Action::Top => 0,
        _ => last,
    };
    match tab.focus {
        Focus::Sessions => tab.session_selected = target,
        Focus::Bases if target != tab.selected => {
            tab.selected = target;
            tab.sessions.clear();
            tab.session_selected = 0;
            tab.search = None;
            reload_sessions(state, effects);
        }
        Focus::Bases => {}
    }
}

fn sync(state: &mut AppState, one_session: bool, effects: &mut Vec<Effect>) {
    if !writable(state, "sync") {
        return;
    }
    let Some(base) = selected_info(state) else {
        state.message = Some("no memory base to sync".to_owned());
        return;
    };
    let session = if one_session {
        match state.memory_bases.selected_session() {
            Some(s) => Some(s.session.session_id.clone()),
            None => {
                state.message = Some(format!("{}: no tracked session to sync", base.name));
                return;
            }
        }
    } else {
        None
    };
    state.message = Some(match &session {
        Some(s) => format!("syncing {} / {s}…", base.name),
        None => format!("syncing every session of {}…", base.name),
    });
    effects.push(Effect::MemoryBases(MbEffect::Sync { base, session }));
}

fn confirm_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let tab = &mut state.memory_bases;
    match action {
        // "No" to a new base goes back to its form, as typed.
        Action::Back if matches!(tab.dialog, Some(Dialog::Confirm(Confirm::Create(_)))) => {
            tab.dialog = tab.create_draft.take().map(Dialog::Create);
        }
        Action::Confirm => {
            let Some(Dialog::Confirm(confirm)) = state.memory_bases.dialog.take() else {
                return;
            };
            let effect = match confirm {
                Confirm::Create(request) => {
                    state.message = Some(format!("creating memory base {}…", request.name));
                    MbEffect::Create(request)
                }
                Confirm::Delete(base) => {
                    state.message = Some(format!("deleting memory base {}…", base.name));
                    MbEffect::Delete(base)
                }
                Confirm::Regenerate(base) => {
                    state.message = Some(format!("regenerating memory base {}…", base.name));
                    MbEffect::Regenerate(base)
                }
            };
            effects.push(Effect::MemoryBases(effect));
        }
        Action::Back => state.memory_bases.dialog = None,
        _ => {}
    }
}

/// A key while a text dialog is open: typing, moving between fields, enter and esc.
pub(super) fn text_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    let Some(dialog) = state.memory_bases.dialog.as_mut() else {
        return false;
    };
    let text = match dialog {
        Dialog::Search { text, .. } => text,
        Dialog::Threshold { form, error, .. } => {
            form_key(form, error, key.code);
            match key.code {
                KeyCode::Esc => state.memory_bases.dialog = None,
                KeyCode::Enter => submit(state, effects),
                _ => {}
            }
            return true;
        }
        Dialog::Create(create) => {
            if !create.checking {
                form_key(&mut create.form, &mut create.error, key.code);
            }
            let submits = key.code == KeyCode::Enter && !create.checking;
            match key.code {
                KeyCode::Esc => state.memory_bases.dialog = None,
                _ if submits => submit(state, effects),
                _ => {}
            }
            return true;
        }
        Dialog::Confirm(_) => return false,
    };
    match key.code {
        KeyCode::Esc => state.memory_bases.dialog = None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) => text.push(c),
        KeyCode::Enter => submit(state, effects),
        _ => return false,
    }
    true
}

/// A key in a form of the tab: the same moves as every form (up/down or tab choose a field,
/// left/right or space step a choice or toggle, typing edits text and digits).
fn form_key(form: &mut crate::tui::state::form::Form, error: &mut Option<String>, code: KeyCode) {
    match code {
        KeyCode::Tab | KeyCode::Down => form.move_focus(1),
        KeyCode::BackTab | KeyCode::Up => form.move_focus(-1),
        KeyCode::Left | KeyCode::Right => {
            if let Some(value) = form.focused_value() {
                value.step(if code == KeyCode::Left { -1 } else { 1 });
            }
        }
        KeyCode::Char(c) => {
            if let Some(value) = form.focused_value()
                && !value.type_char(c)
                && c == ' '
            {
                value.step(1);
            }
        }
        KeyCode::Backspace => {
            if let Some(value) = form.focused_value() {
                value.backspace();
            }
        }
        _ => return,
    }
    *error = None;
}

fn submit(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(dialog) = state.memory_bases.dialog.take() else {
        return;
    };
    match dialog {
        Dialog::Threshold {
            base_id,
            base_name,
            form,
            ..
        } => match threshold_of(&form) {
            Ok((threshold, unit)) => {
                let Some(base) = state
                    .memory_bases
                    .bases
                    .iter()
                    .find(|b| b.base.id == base_id)
                    .map(|b| Box::new(b.base.clone()))
                else {
                    state.message = Some(format!("memory base {base_name} is gone"));
                    return;
                };
                let update = MemoryBaseUpdate {
                    threshold: Some(threshold),
                    unit: Some(unit).filter(|u| *u != base.unit()),
                    ..MemoryBaseUpdate::default()
                };
                effects.push(Effect::MemoryBases(MbEffect::Update { base, update }));
            }
            Err(error) => {
                state.memory_bases.dialog = Some(Dialog::Threshold {
                    base_id,
                    base_name,
                    form,
                    error: Some(format!("threshold: {error}")),
                });
            }
        },
        Dialog::Search { base, text } => {
            let query = text.trim().to_owned();
            if query.is_empty() {
                return;
            }
            let generation = state.generation();
            state.memory_bases.search = Some(SearchState {
                base_name: base.name.clone(),
                query: query.clone(),
                status: LoadStatus::Loading,
                generation,
                hits: Vec::new(),
            });
            effects.push(Effect::MemoryBases(MbEffect::Search {
                generation,
                base,
                query,
                top_k: crate::tui::state::memory_bases::SEARCH_TOP_K,
            }));
        }
        Dialog::Create(mut form) => {
            match form.request() {
                // The database decides whether the flow exists: a job checks before "yes".
                Ok(request) => {
                    form.checking = true;
                    effects.push(Effect::MemoryBases(MbEffect::CheckCreate(request)));
                }
                Err(error) => form.error = Some(error),
            }
            state.memory_bases.dialog = Some(Dialog::Create(form));
        }
        Dialog::Confirm(confirm) => state.memory_bases.dialog = Some(Dialog::Confirm(confirm)),
    }
}

/// Keys of the jobs popup.
pub(super) fn jobs_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let jobs = &mut state.jobs;
    let last = jobs.lines().len().saturating_sub(1);
    match action {
        Action::ToggleJobs | Action::Back => {
            jobs.open = false;
            state.overlay = Overlay::None;
        }
        Action::Up => jobs.selected = jobs.selected.saturating_sub(1),
        Action::Down => jobs.selected = (jobs.selected + 1).min(last),
        Action::Top => jobs.selected = 0,
        Action::Bottom => jobs.selected = last,
        Action::Refresh => reload_jobs(state, effects),
        Action::CancelJob => {
            let line = jobs.lines().into_iter().nth(jobs.selected);
            match line {
                Some(line) if !line.is_running() => {
                    state.message = Some(format!("job {} is not running", line.job_id));
                }
                Some(line) if line.job_id == super::doctor::JOB_ID => {
                    effects.extend(super::doctor::cancel(state).map(Effect::Doctor));
                }
                Some(line) => cancel_job(state, line.job_id, effects),
                None => {}
            }
        }
        _ => {}
    }
}

fn cancel_job(state: &mut AppState, job_id: String, effects: &mut Vec<Effect>) {
    if !writable(state, "cancel a job") {
        return;
    }
    state.message = Some(format!("cancelling job {job_id}…"));
    effects.push(Effect::MemoryBases(MbEffect::CancelJob { job_id }));
}

/// Opens the jobs popup and asks for the job table.
pub(super) fn open_jobs(state: &mut AppState, effects: &mut Vec<Effect>) {
    state.jobs.open = true;
    state.jobs.selected = 0;
    state.overlay = Overlay::Jobs;
    reload_jobs(state, effects);
}

/// Applies a job result. `false` when it was stale.
pub(super) fn on_job(state: &mut AppState, event: MbEvent, effects: &mut Vec<Effect>) -> bool {
    match event {
        MbEvent::Bases { generation, result } => {
            let tab = &mut state.memory_bases;
            if generation != tab.generation {
                return false;
            }
            match result {
                Ok(bases) => {
                    let selected_id = tab.selected_base().map(|b| b.base.id.clone());
                    let (selected, kept) =
                        reselect(&bases, selected_id, |b| &b.base.id, tab.selected);
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
        }
        MbEvent::Sessions { generation, result } => {
            let tab = &mut state.memory_bases;
            if generation != tab.sessions_generation {
                return false;
            }
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
        MbEvent::Jobs {
            generation,
            result,
            now,
        } => {
            if generation != state.jobs.generation {
                return false;
            }
            advance_clock(state, now);
            match result {
                Ok(jobs) => state.jobs.table = jobs,
                Err(error) => state.message = Some(format!("jobs: {error}")),
            }
            let last = state.jobs.lines().len().saturating_sub(1);
            state.jobs.selected = state.jobs.selected.min(last);
        }
        MbEvent::Progress {
            progress,
            at,
            automatic,
        } => {
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
        MbEvent::Synced { base_name, result } => {
            state.message = Some(match result {
                Ok(results) => describe_syncs(state, &base_name, results),
                Err(error) => format!("sync of {base_name} failed: {error}"),
            });
            reload_bases(state, false, effects);
            reload_jobs(state, effects);
        }
        MbEvent::CreateChecked { request, result } => {
            let tab = &mut state.memory_bases;
            let Some(Dialog::Create(form)) = tab.dialog.as_mut().filter(|d| {
                matches!(d, Dialog::Create(f) if f.checking && f.request().as_ref() == Ok(&request))
            }) else {
                return false;
            };
            form.checking = false;
            match result {
                Ok(()) => {
                    tab.create_draft = Some(form.clone());
                    tab.dialog = Some(Dialog::Confirm(Confirm::Create(request)));
                }
                Err(error) => form.error = Some(error),
            }
        }
        MbEvent::Created { result } => {
            let tab = &mut state.memory_bases;
            match result {
                Ok(done) => {
                    tab.create_draft = None;
                    state.message = Some(done);
                }
                // Refused after all (e.g. another process took the name): the form comes back
                // as it was typed, with the reason.
                Err(error) => {
                    if let Some(mut form) = tab.create_draft.take() {
                        form.error = Some(error.clone());
                        tab.dialog = Some(Dialog::Create(form));
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
        MbEvent::Hits { generation, result } => {
            let Some(search) = state
                .memory_bases
                .search
                .as_mut()
                .filter(|s| s.generation == generation)
            else {
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
    format!("{base_name}: ingested {ingested} message(s)")
}

//! The doctor view's keys and its job's reports. Opening the view starts a scan of the whole
//! database; esc cancels a running scan, then closes the view; r scans again; enter opens the
//! selected finding's conversation. The scan is also a line of the jobs popup.
//!
//! The scan is a load: its reports come stamped with its request, and a cancel or a new scan
//! makes every report still on its way stale.

pub use super::doctor_jobs::{DoctorEvent, DoctorScan};
use super::effect::Effect;
use crate::format::{noun, thousands};
use crate::inspect::doctor::Finding;
use crate::store::memory_bases::job_status;
use crate::sync::{JobProgress, Stage};
use crate::tui::action::Action;
use crate::tui::state::doctor::{DoctorState, ScanStatus};
use crate::tui::state::memory_bases::{JobLine, TrackedJob};
use crate::tui::state::{AppState, Detail, Screen};

/// The scan's id in the jobs popup: one scan at a time, the latest shown.
pub const JOB_ID: &str = "doctor";
/// What the scan reads, in the jobs popup's session column.
const SCOPE: &str = "whole database";

/// Brings the view to the front: the last scan if there is one, else a new scan.
pub fn open(state: &mut AppState) -> Option<Effect> {
    state.screen = Screen::Doctor;
    match state.doctor {
        Some(_) => None,
        None => Some(start(state)),
    }
}

fn start(state: &mut AppState) -> Effect {
    let generation = state.generation();
    state.doctor = Some(DoctorState::new(generation, state.noun, state.scan_unit));
    show_in_jobs(state);
    let scan = DoctorScan {
        counter: state.settings.counter(),
        budget: state.settings.budget,
    };
    Effect::load(generation, scan)
}

/// The view's keys; returns the conversation to open when the key asks for one.
pub fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) -> Option<String> {
    let Some(doctor) = state.doctor.as_mut() else {
        state.screen = Screen::Conversations;
        return None;
    };
    let last = doctor.findings.len().saturating_sub(1);
    let selected = doctor.selected;
    doctor.selected = match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (selected + 1).min(last),
        Action::PageUp => selected.saturating_sub(10),
        Action::PageDown => (selected + 10).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => selected,
    };
    match action {
        Action::Back if doctor.is_running() => effects.extend(cancel(state)),
        Action::Back => {
            state.doctor = None;
            state.screen = Screen::Conversations;
        }
        Action::Refresh => effects.push(start(state)),
        Action::Open => return open_finding(state),
        _ => {}
    }
    None
}

/// The selected finding's conversation, or a message saying why there is none.
fn open_finding(state: &mut AppState) -> Option<String> {
    let finding = state.doctor.as_ref()?.selected_finding();
    let Some(finding) = finding else {
        state.message = Some("no finding selected".to_owned());
        return None;
    };
    let id = finding.conversation_id().map(str::to_owned);
    if id.is_none() {
        state.message = Some(format!(
            "this {} finding is about no conversation: i shows it whole",
            finding.kind()
        ));
    }
    id
}

/// Stops the running scan where it is; `None` when no scan runs.
pub fn cancel(state: &mut AppState) -> Option<Effect> {
    state.doctor.as_ref().filter(|d| d.is_running())?;
    // Reports still on their way are the cancelled scan's: a new generation drops them.
    let generation = state.generation();
    let doctor = state.doctor.as_mut()?;
    doctor.generation = generation;
    doctor.status = ScanStatus::Cancelled;
    show_in_jobs(state);
    Some(Effect::StopDoctor)
}

/// Applies a report of the running scan (of the latest request: `loads.rs` checked). `false`
/// when the scan was stopped meanwhile.
pub(super) fn on_report(state: &mut AppState, event: DoctorEvent) -> bool {
    let Some(doctor) = state.doctor.as_mut().filter(|d| d.is_running()) else {
        return false;
    };
    let at = match event {
        DoctorEvent::Started { total, at } => {
            doctor.total = Some(total);
            doctor.started = Some(at);
            at
        }
        DoctorEvent::Progress { scanned, at } => {
            doctor.scanned = scanned;
            at
        }
        DoctorEvent::Finished { result, at } => {
            match result {
                Ok(report) => doctor.finish(*report),
                Err(error) => doctor.status = ScanStatus::Failed(error),
            }
            at
        }
    };
    doctor.last = Some(at);
    if state.jobs.now.is_none_or(|now| now < at) {
        state.jobs.now = Some(at);
    }
    show_in_jobs(state);
    true
}

/// Keeps the scan's line in the jobs popup as the view shows it.
fn show_in_jobs(state: &mut AppState) {
    state.jobs.doctor = state.doctor.as_ref().and_then(job_line);
}

/// The scan as a line of the jobs popup, once it has started.
fn job_line(doctor: &DoctorState) -> Option<JobLine> {
    let started = doctor.started?;
    let finished = (!doctor.is_running()).then(|| doctor.last.unwrap_or(started));
    let tracked = |stage| TrackedJob {
        progress: JobProgress {
            job_id: JOB_ID.to_owned(),
            memory_base_id: String::new(),
            session_id: SCOPE.to_owned(),
            stage,
            messages_done: doctor.scanned,
            messages_total: doctor.total.unwrap_or(0),
            chunks_written: 0,
        },
        started,
        finished,
        automatic: false,
    };
    let (status, tracked, error) = match &doctor.status {
        ScanStatus::Running => (job_status::IN_PROGRESS, Some(tracked(Stage::Running)), None),
        ScanStatus::Finished => (job_status::COMPLETED, Some(tracked(Stage::Committed)), None),
        ScanStatus::Cancelled => (job_status::CANCELLED, None, Some(cancelled_text(doctor))),
        ScanStatus::Failed(error) => (job_status::FAILED, None, Some(error.clone())),
    };
    Some(JobLine {
        job_id: JOB_ID.to_owned(),
        session_id: SCOPE.to_owned(),
        status: status.to_owned(),
        tracked,
        started,
        finished,
        error,
    })
}

/// What the view and the jobs popup say of a cancelled scan.
pub fn cancelled_text(doctor: &DoctorState) -> String {
    format!(
        "cancelled after {} {}",
        thousands(doctor.scanned),
        noun(doctor.scanned, doctor.unit)
    )
}

/// A finding whole: its line, then every field.
pub fn finding_detail(finding: &Finding) -> Detail {
    let fields = serde_json::to_string_pretty(finding).unwrap_or_default();
    Detail::new(
        format!(" {} ", finding.kind()),
        format!("{}\n\n{fields}", finding.describe()),
    )
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;

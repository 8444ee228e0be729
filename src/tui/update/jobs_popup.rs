//! The jobs popup: the job table of memory-base syncs, refreshed while it is open, and
//! cancelling a running job.

use super::effect::Effect;
use super::memory_base_jobs::MbEffect;
use super::memory_bases::{reload_jobs, writable};
use crate::tui::action::Action;
use crate::tui::state::{AppState, Overlay};

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
                    effects.extend(super::doctor::cancel(state));
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

//! The memory bases tab: its loads and actions. What its forms do is in `memory_base_forms.rs`,
//! its job results in `memory_base_results.rs`, and the jobs popup in `jobs_popup.rs`.
//!
//! Every write is a request to the job runner, refused up front on a read-only database; its
//! result comes back as an [`MbEvent`], after which the tab reloads. A manual sync that loses the
//! race to another sync shows "already syncing"; the watcher's automatic ones stay quiet.

use super::effect::Effect;
use super::memory_base_forms::{base_form, new_base_form};
use super::memory_base_jobs::{MbEffect, MbLoad};
use super::selection::moved;
use crate::inspect::memory_bases::BaseState;
use crate::store::memory_bases::{MemoryBaseInfo, MemoryBaseUpdate};
use crate::tui::action::Action;
use crate::tui::state::confirm::Confirm;
use crate::tui::state::form::{Field, FieldValue, Form};
use crate::tui::state::memory_bases::{
    BaseForm, Focus, JOB_ROWS, MemoryBaseWrite, create_form, threshold_form,
};
use crate::tui::state::{AppState, LoadStatus, Overlay};

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
    let form_open = matches!(state.overlay, Overlay::Form(_));
    if state.memory_bases.status == LoadStatus::Loaded && !form_open {
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

pub(super) fn reload_bases(state: &mut AppState, show_loading: bool, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let tab = &mut state.memory_bases;
    tab.generation = generation;
    if show_loading {
        tab.status = LoadStatus::Loading;
    }
    effects.push(Effect::load(generation, MbLoad::Bases));
}

pub(super) fn reload_sessions(state: &mut AppState, effects: &mut Vec<Effect>) {
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
    effects.push(Effect::load(generation, MbLoad::Sessions { base }));
}

pub(super) fn reload_jobs(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.jobs.generation = generation;
    effects.push(Effect::load(generation, MbLoad::Jobs { limit: JOB_ROWS }));
}

/// Refuses a write on a read-only database, saying so.
pub(super) fn writable(state: &mut AppState, what: &str) -> bool {
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
    let tab = &mut state.memory_bases;
    match action {
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom => move_selection(state, action, effects),
        Action::Open if tab.search.is_some() || tab.focus == Focus::Sessions => {
            super::details::open(state)
        }
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
                let title = format!(" Search the KB of {} ", base.name);
                let form = Form::new(vec![Field::new("query", "query", FieldValue::text(text))]);
                let popup = base_form(title, BaseForm::Search { base }, form)
                    .with_note("the words to look for; enter searches its knowledge base");
                state.overlay = Overlay::Form(popup);
            }
            None => state.message = Some("no memory base to search".to_owned()),
        },
        Action::ShowConversation => super::open_session::open_from_memory_base(state, effects),
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
                let title = format!(" Threshold of {} ", base.name);
                let form = threshold_form(base.threshold, base.unit().as_str());
                let which = BaseForm::Threshold {
                    base_id: base.id,
                    base_name: base.name,
                };
                let popup = base_form(title, which, form)
                    .with_note("a whole number ≥ 1, applied at the next check");
                state.overlay = Overlay::Form(popup);
            }
        }
        Action::CreateBase => {
            if let Some(refused) = &state.memory_bases.refused_changes {
                state.message = Some(refused.create.clone());
                return;
            }
            if !writable(state, "create a memory base") {
                return;
            }
            let flow = selected_info(state)
                .map(|b| b.flow_name.unwrap_or(b.flow_id))
                .unwrap_or_default();
            state.overlay = Overlay::Form(new_base_form(create_form(flow)));
        }
        Action::DeleteBase => {
            if let Some(refused) = &state.memory_bases.refused_changes {
                state.message = Some(refused.delete.clone());
                return;
            }
            if !writable(state, "delete a memory base") {
                return;
            }
            if let Some(base) = selected_info(state) {
                state.overlay =
                    Overlay::Confirm(Confirm::memory_base(MemoryBaseWrite::Delete(base)));
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
                state.overlay =
                    Overlay::Confirm(Confirm::memory_base(MemoryBaseWrite::Regenerate(base)));
            }
        }
        _ => {}
    }
}

fn move_selection(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let tab = &mut state.memory_bases;
    // A search shown in place of the sessions has the moving keys: its hits are the list.
    if let Some(search) = tab.search.as_mut() {
        if let Some(target) = moved(search.selected, search.hits.len(), action) {
            search.selected = target;
        }
        return;
    }
    let (current, len) = match tab.focus {
        Focus::Bases => (tab.selected, tab.bases.len()),
        Focus::Sessions => (tab.session_selected, tab.sessions.len()),
    };
    let Some(target) = moved(current, len, action) else {
        return;
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

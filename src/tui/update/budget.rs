//! The budget: its cut line, the panel's scrolling, and the budget job of the selected thread.

use super::effect::{Effect, Load};
use super::session_effects::SessionLoad;
use crate::memory::budget_view::BudgetView;
use crate::memory::thread::ExtractionMode;
use crate::memory::thread_view::ThreadMode;
use crate::tui::action::Action;
use crate::tui::state::{AppState, BudgetRows, LoadStatus, MAX_BUDGET};

/// `b` gives the budget panel the moving keys (its rows scroll) and takes them back; esc
/// leaves it too. `false`: not the panel's key.
pub(super) fn budget_panel_action(state: &mut AppState, action: Action) -> bool {
    let panel = &mut state.budget_panel;
    if action == Action::FocusBudget {
        panel.focused = !panel.focused;
        return true;
    }
    if !panel.focused {
        return false;
    }
    let delta = match action {
        Action::Back => {
            panel.focused = false;
            return true;
        }
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -10,
        Action::PageDown => 10,
        Action::Top => isize::MIN / 2,
        Action::Bottom => isize::MAX / 2,
        _ => return false,
    };
    let Some(view) = state.shown_budget() else {
        return true;
    };
    let rows = BudgetRows::of(view);
    state.budget_panel.scroll(rows, delta);
    true
}

pub(super) fn set_budget(state: &mut AppState, budget: i64) {
    state.settings.budget = budget.clamp(0, MAX_BUDGET);
    // The cut line moved: show it again.
    state.budget_panel.offset = None;
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let node_budget = conversation
        .nodes
        .as_mut()
        .and_then(|n| n.context.as_mut())
        .map(|view| &mut view.budget);
    for view in conversation.budget.iter_mut().chain(node_budget) {
        view.set_budget(state.settings.budget);
    }
}

pub(super) fn recompute_budget(state: &mut AppState, effects: &mut Vec<Effect>) {
    let next_generation = state.generation();
    state.budget_panel.offset = None;
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(loaded) = conversation.loaded.clone().filter(|l| !l.tree.is_empty()) else {
        return;
    };
    conversation.budget_generation = next_generation;
    conversation.budget_status = LoadStatus::Loading;
    let mut settings = state.settings.budget_settings();
    if conversation.mode == ThreadMode::Fixed {
        settings.options.extraction = ExtractionMode::Fixed;
    }
    let budget = Load::Budget {
        window: state.settings.window(loaded.conversation.windows),
        leaf: conversation.selected,
        mode: conversation.mode,
        settings,
        loaded,
    };
    effects.push(Effect::load(next_generation, budget));
}

/// Asks for the open conversation's budget under the settings in effect.
pub(super) fn recompute_session_budget(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let settings = state.settings.budget_settings();
    let Some(session) = state.session.as_mut() else {
        return;
    };
    let Some(view) = session.view.clone() else {
        return;
    };
    state.budget_panel.offset = None;
    session.budget_generation = generation;
    session.budget_status = LoadStatus::Loading;
    let budget = SessionLoad::Budget {
        view,
        window: session.window,
        settings,
    };
    effects.push(Effect::load(generation, budget));
}

pub(super) fn budget_computed(
    state: &mut AppState,
    result: Result<Box<BudgetView>, String>,
) -> bool {
    let Some(conversation) = state.conversation.as_mut() else {
        return false;
    };
    let result = result.map(|mut view| {
        // The budget may have changed while the job ran.
        view.set_budget(state.settings.budget);
        *view
    });
    conversation
        .budget_status
        .settle(&mut conversation.budget, result);
    true
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;

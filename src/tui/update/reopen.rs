//! Reading the open session or thread again, as its key now names it (a refresh, another
//! view, a write that changed it): a leaf both the session's keys and its writes use.

use super::effect::Effect;
use super::session_effects::SessionLoad;
use crate::tui::state::{AppState, LoadStatus};

/// Reads the open conversation again, as its key now names it.
pub(super) fn reopen(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let Some(session) = state.session.as_mut() else {
        return;
    };
    session.generation = generation;
    session.status = LoadStatus::Loading;
    let key = session.key.clone();
    let settings = state.settings.budget_settings();
    effects.push(Effect::load(
        generation,
        SessionLoad::Open { key, settings },
    ));
}

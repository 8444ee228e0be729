//! The counting settings of the conversation screens (model, counter, encoding): a change
//! recounts what the old ones counted.

use super::budget::recompute_budget;
use super::effect::Effect;
use super::nodes::reload_nodes;
use crate::memory::tokens::{CounterKind, Encoding};
use crate::tui::state::AppState;

/// `m`: the next model of the list.
pub(super) fn next_model(state: &mut AppState, effects: &mut Vec<Effect>) {
    let settings = &mut state.settings;
    settings.model_index = (settings.model_index + 1) % settings.models.len();
    settings_changed(state, effects);
}

/// `:model NAME`: the model of that name, added to the list when it is not there.
pub(super) fn set_model(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    let settings = &mut state.settings;
    settings.model_index = match settings.models.iter().position(|m| m == name) {
        Some(index) => index,
        None => {
            settings.models.push(name.to_owned());
            settings.models.len() - 1
        }
    };
    settings_changed(state, effects);
}

/// The next counter, after the last the first.
pub(super) fn next_counter(state: &mut AppState, effects: &mut Vec<Effect>) {
    let all = CounterKind::ALL;
    let at = all.iter().position(|c| *c == state.settings.counter);
    state.settings.counter = all[at.map_or(0, |i| (i + 1) % all.len())];
    settings_changed(state, effects);
}

/// `:counter NAME`.
pub(super) fn set_counter(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    match name.parse::<CounterKind>() {
        Ok(counter) => {
            state.settings.counter = counter;
            settings_changed(state, effects);
        }
        Err(e) => state.message = Some(e.to_string()),
    }
}

/// The next encoding; after the last, none (the model's own).
pub(super) fn next_encoding(state: &mut AppState, effects: &mut Vec<Effect>) {
    let all = Encoding::ALL;
    state.settings.encoding = match state.settings.encoding {
        None => Some(all[0]),
        Some(current) => {
            let at = all.iter().position(|e| *e == current).unwrap_or(all.len());
            all.get(at + 1).copied()
        }
    };
    settings_changed(state, effects);
}

/// `:encoding NAME`.
pub(super) fn set_encoding(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    match name.parse::<Encoding>() {
        Ok(encoding) => {
            state.settings.encoding = Some(encoding);
            settings_changed(state, effects);
        }
        Err(e) => state.message = Some(e.to_string()),
    }
}

/// The model, counter or encoding changed: counts made with the old ones are stale.
fn settings_changed(state: &mut AppState, effects: &mut Vec<Effect>) {
    state.list.thread_tokens.clear();
    // The pane's token column and the node's budget are counted with them too.
    reload_nodes(state, effects);
    recompute_budget(state, effects);
    super::budget::recompute_session_budget(state, effects);
    super::checkpoint_loads::recount(state, effects);
}

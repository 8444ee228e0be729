//! `E` in an open conversation, session or thread: its bundle as `memscope export` makes it,
//! written as a new file under the data directory; the status line says where.

use super::effect::{Effect, Load};
use crate::tui::state::AppState;

/// Asks for the bundle of the conversation open in front (a thread of checkpoints at its
/// selected checkpoint), as `memscope export` makes it.
pub(super) fn ask(state: &mut AppState, effects: &mut Vec<Effect>) {
    let open = state.unit(state.screen).and_then(|unit| unit.exported());
    let Some((key, leaf)) = open else {
        state.message = Some("E exports an open conversation: open one first".to_owned());
        return;
    };
    let generation = state.generation();
    state.exporting = Some(generation);
    state.message = Some(format!("exporting {}…", key.id));
    let load = Load::Export {
        key,
        leaf,
        budget: state.settings.budget_settings(),
        message_limit: state.settings.message_limit,
    };
    effects.push(Effect::load(generation, load));
}

/// The bundle was written, or could not be.
pub(super) fn exported(state: &mut AppState, result: Result<String, String>) -> bool {
    state.exporting = None;
    state.message = Some(match result {
        Ok(written) => written,
        Err(error) => format!("export failed: {error}"),
    });
    true
}

//! `y`: the id of the selected row goes to the terminal's clipboard (OSC 52, as lazygit does),
//! so it can be pasted into a CLI command or a bug report.

use super::effect::Effect;
use crate::tui::state::{AppState, Overlay};

/// Asks for the selected row's id to be copied and says so, or says there is nothing to copy.
pub(super) fn copy_selected(state: &mut AppState, effects: &mut Vec<Effect>) {
    match selected_id(state) {
        Some((what, id)) => {
            state.say(format!(
                "copied {what} {id} (sent to the terminal's clipboard with OSC 52)"
            ));
            effects.push(Effect::CopyToClipboard(id));
        }
        None => state.say("nothing selected to copy".to_owned()),
    }
}

/// What the selected row is, and its id.
fn selected_id(state: &AppState) -> Option<(&'static str, String)> {
    if state.overlay == Overlay::Jobs {
        let lines = state.jobs.lines();
        return lines
            .get(state.jobs.selected)
            .map(|line| ("job id", line.job_id.clone()));
    }
    state.selected_id()
}

#[cfg(test)]
#[path = "copy_tests.rs"]
mod tests;

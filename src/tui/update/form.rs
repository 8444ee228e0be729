//! Keys while a form is open, whatever it is for: typing into its fields, moving between them,
//! stepping a choice or a number, esc closing it, and enter handing it to the tab it belongs to.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::effect::Effect;
use crate::tui::action::Action;
use crate::tui::state::FormPurpose;
use crate::tui::state::{AppState, Overlay};

/// Typing into the focused field: text fields take every character, number fields digits.
/// `false` when the key types nothing there; it is then one of the form's keys.
pub(super) fn type_key(state: &mut AppState, key: KeyEvent) -> bool {
    let Overlay::Form(popup) = &mut state.overlay else {
        return false;
    };
    if key.modifiers.contains(KeyModifiers::CONTROL) || popup.waiting.is_some() {
        return false;
    }
    let Some(value) = popup.form.focused_value() else {
        return false;
    };
    let typed = match key.code {
        KeyCode::Char(c) => value.type_char(c),
        KeyCode::Backspace => value.backspace(),
        _ => false,
    };
    if typed {
        popup.error = None;
    }
    typed
}

/// The form's keys. While it waits for the database, only esc acts.
pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Overlay::Form(popup) = &mut state.overlay else {
        return;
    };
    if popup.waiting.is_some() && action != Action::Back {
        return;
    }
    match action {
        Action::Back => state.overlay = Overlay::None,
        Action::Up => popup.form.move_focus(-1),
        Action::Down => popup.form.move_focus(1),
        Action::Increase | Action::Decrease => {
            if let Some(value) = popup.form.focused_value() {
                value.step(if action == Action::Increase { 1 } else { -1 });
                popup.error = None;
            }
        }
        Action::Confirm => submit(state, effects),
        _ => {}
    }
}

/// The form goes to its tab, which closes it, opens it again with why it was refused, or keeps
/// it waiting for a check.
fn submit(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Overlay::Form(popup) = std::mem::take(&mut state.overlay) else {
        return;
    };
    match popup.purpose.clone() {
        FormPurpose::ChatMemory(which) => {
            super::chat_memories::submit_form(state, which, popup, effects)
        }
        FormPurpose::MemoryBase(which) => {
            super::memory_base_forms::submit(state, which, popup, effects)
        }
    }
}

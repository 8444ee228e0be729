//! Keys while a confirmation is open, whatever the write: yes starts it and closes the trim
//! preview it was asked from; anything else backs out to that preview, if any (or, for a new
//! memory base, to its form).

use super::effect::Effect;
use crate::tui::action::Action;
use crate::tui::state::confirm::PendingWrite;
use crate::tui::state::memory_bases::MemoryBaseWrite;
use crate::tui::state::{AppState, Overlay};

pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Overlay::Confirm(confirm) = &state.overlay else {
        return;
    };
    match action {
        Action::Confirm => {
            let write = confirm.write.clone();
            state.overlay = Overlay::None;
            state.trim = None;
            match write {
                PendingWrite::ChatMemory(write) => {
                    super::chat_memories::start_write(state, write, effects)
                }
                PendingWrite::Checkpoint(write) => {
                    state.message = Some("writing…".to_owned());
                    effects.push(Effect::Checkpoints(write));
                }
                PendingWrite::StoredTrim(write) => {
                    state.message = Some("writing…".to_owned());
                    effects.push(Effect::SessionTrim(write));
                }
                PendingWrite::MemoryBase(change) => {
                    super::memory_base_forms::start_change(state, change, effects)
                }
            }
        }
        // "No" to a new memory base goes back to its form, as typed.
        Action::Back
            if matches!(
                confirm.write,
                PendingWrite::MemoryBase(MemoryBaseWrite::Create(_))
            ) =>
        {
            state.overlay = match state.memory_bases.create_draft.take() {
                Some(form) => Overlay::Form(super::memory_base_forms::new_base_form(form)),
                None => Overlay::None,
            };
        }
        Action::Back => {
            state.overlay = if state.trim.is_some() {
                Overlay::Trim
            } else {
                Overlay::None
            };
        }
        _ => {}
    }
}

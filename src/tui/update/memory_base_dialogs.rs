//! The memory bases tab's forms that take typed text (search, threshold, new base), and what
//! yes to a change of a base starts (its confirmation is the one popup every write asks in).
//! Submitting one is a request to the job runner.

use crossterm::event::{KeyCode, KeyEvent};

use super::effect::Effect;
use super::memory_base_jobs::{MbEffect, MbLoad};
use crate::memory::memory_base::Mismatch;
use crate::store::memory_bases::MemoryBaseUpdate;
use crate::tui::state::form::Form;
use crate::tui::state::memory_bases::{Dialog, MemoryBaseWrite, SearchState, threshold_of};
use crate::tui::state::{AppState, LoadStatus, Overlay, Screen};

/// Whether a dialog of the tab is taking typed text: then keys go to [`text_key`].
pub(super) fn takes_text(state: &AppState) -> bool {
    state.screen == Screen::MemoryBases
        && state.overlay == Overlay::None
        && state.memory_bases.dialog.is_some()
}

/// Yes to a change of a memory base: its job starts, and the status line says so.
pub(super) fn start_change(
    state: &mut AppState,
    change: MemoryBaseWrite,
    effects: &mut Vec<Effect>,
) {
    let effect = match change {
        MemoryBaseWrite::Create(request) => {
            state.message = Some(format!("creating memory base {}…", request.name));
            MbEffect::Create(request)
        }
        MemoryBaseWrite::Delete(base) => {
            state.message = Some(format!("deleting memory base {}…", base.name));
            MbEffect::Delete(base)
        }
        MemoryBaseWrite::Regenerate(base) => {
            state.message = Some(format!("regenerating memory base {}…", base.name));
            MbEffect::Regenerate(base)
        }
    };
    effects.push(Effect::MemoryBases(effect));
}

/// A key while a text dialog is open: typing, moving between fields, enter and esc.
pub(super) fn text_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    let Some(dialog) = state.memory_bases.dialog.as_mut() else {
        return false;
    };
    let text = match dialog {
        Dialog::Search { text, .. } => text,
        Dialog::Threshold { form, error, .. } => {
            form_key(form, error, key.code);
            match key.code {
                KeyCode::Esc => state.memory_bases.dialog = None,
                KeyCode::Enter => submit(state, effects),
                _ => {}
            }
            return true;
        }
        Dialog::Create(create) => {
            if !create.checking {
                form_key(&mut create.form, &mut create.error, key.code);
            }
            let submits = key.code == KeyCode::Enter && !create.checking;
            match key.code {
                KeyCode::Esc => state.memory_bases.dialog = None,
                _ if submits => submit(state, effects),
                _ => {}
            }
            return true;
        }
    };
    match key.code {
        KeyCode::Esc => state.memory_bases.dialog = None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) => text.push(c),
        KeyCode::Enter => submit(state, effects),
        _ => return false,
    }
    true
}

/// A key in a form of the tab: the same moves as every form (up/down or tab choose a field,
/// left/right or space step a choice or toggle, typing edits text and digits).
fn form_key(form: &mut Form, error: &mut Option<String>, code: KeyCode) {
    match code {
        KeyCode::Tab | KeyCode::Down => form.move_focus(1),
        KeyCode::BackTab | KeyCode::Up => form.move_focus(-1),
        KeyCode::Left | KeyCode::Right => {
            if let Some(value) = form.focused_value() {
                value.step(if code == KeyCode::Left { -1 } else { 1 });
            }
        }
        KeyCode::Char(c) => {
            if let Some(value) = form.focused_value()
                && !value.type_char(c)
                && c == ' '
            {
                value.step(1);
            }
        }
        KeyCode::Backspace => {
            if let Some(value) = form.focused_value() {
                value.backspace();
            }
        }
        _ => return,
    }
    *error = None;
}

fn submit(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(dialog) = state.memory_bases.dialog.take() else {
        return;
    };
    match dialog {
        Dialog::Threshold {
            base_id,
            base_name,
            form,
            ..
        } => match threshold_of(&form) {
            Ok((threshold, unit)) => {
                let Some(base) = state
                    .memory_bases
                    .bases
                    .iter()
                    .find(|b| b.base.id == base_id)
                    .map(|b| Box::new(b.base.clone()))
                else {
                    state.message = Some(format!("memory base {base_name} is gone"));
                    return;
                };
                let update = MemoryBaseUpdate {
                    threshold: Some(threshold),
                    unit: Some(unit).filter(|u| *u != base.unit()),
                    ..MemoryBaseUpdate::default()
                };
                effects.push(Effect::MemoryBases(MbEffect::Update { base, update }));
            }
            Err(error) => {
                state.memory_bases.dialog = Some(Dialog::Threshold {
                    base_id,
                    base_name,
                    form,
                    error: Some(format!("threshold: {error}")),
                });
            }
        },
        Dialog::Search { base, text } => {
            let query = text.trim().to_owned();
            if query.is_empty() {
                return;
            }
            let generation = state.generation();
            let missing_folder = state
                .memory_bases
                .bases
                .iter()
                .find(|status| status.base.id == base.id)
                .filter(|status| status.mismatches.contains(&Mismatch::DirectoryMissing))
                .map(|status| status.kb_path.display().to_string());
            state.memory_bases.search = Some(SearchState {
                base_name: base.name.clone(),
                query: query.clone(),
                status: LoadStatus::Loading,
                generation,
                hits: Vec::new(),
                selected: 0,
                missing_folder,
            });
            let search = MbLoad::Search {
                base,
                query,
                top_k: crate::tui::state::memory_bases::SEARCH_TOP_K,
            };
            effects.push(Effect::load(generation, search));
        }
        Dialog::Create(mut form) => {
            match form.request() {
                // The database decides whether the flow exists: a job checks before "yes".
                Ok(request) => {
                    form.checking = true;
                    effects.push(Effect::MemoryBases(MbEffect::CheckCreate(request)));
                }
                Err(error) => form.error = Some(error),
            }
            state.memory_bases.dialog = Some(Dialog::Create(form));
        }
    }
}

//! Tests of the `:` commands.

use crossterm::event::KeyCode;

use crate::memory::tokens::CounterKind;
use crate::tui::state::AppState;
use crate::tui::update::test_support::*;
use crate::tui::update::{Effect, Load, Stamped, update};

#[test]
fn commands_set_budget_model_counter_and_quit() {
    let mut state = opened();
    let type_command = |state: &mut AppState, text: &str| {
        update(state, key(':'));
        for c in text.chars() {
            update(state, key(c));
        }
        update(state, code(KeyCode::Enter))
    };
    type_command(&mut state, "budget 123");
    assert_eq!(state.settings.budget, 123);
    let effects = type_command(&mut state, "model llama-3-70b");
    assert_eq!(state.settings.model(), "llama-3-70b");
    assert_eq!(budget_effect(&effects).2.model, "llama-3-70b");
    type_command(&mut state, "counter zero");
    assert_eq!(state.settings.counter, CounterKind::Zero);
    type_command(&mut state, "counter nonsense");
    assert!(state.message.as_deref().unwrap().contains("nonsense"));
    type_command(&mut state, "frobnicate");
    assert!(state.message.as_deref().unwrap().contains(":conv ID"));
    let effects = type_command(&mut state, "conv other");
    assert!(
        matches!(&effects[..], [Effect::Load(Stamped { value: Load::Conversation { id, .. }, .. })] if id == "other")
    );
    type_command(&mut state, "q");
    assert!(state.quit);
}

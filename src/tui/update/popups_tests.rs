//! Tests of the help popup.

use crossterm::event::KeyCode;

use crate::tui::state::Overlay;
use crate::tui::update::test_support::*;
use crate::tui::update::update;

#[test]
fn help_opens_scrolls_and_closes_and_owns_the_keyboard() {
    let mut state = state();
    update(&mut state, key('?'));
    assert_eq!(state.overlay, Overlay::Help);
    update(&mut state, key('j'));
    update(&mut state, key('j'));
    assert_eq!(
        state.overlay,
        Overlay::Help,
        "navigation does not close help"
    );
    assert_eq!(state.help_scroll, 2, "j scrolls the help");
    update(&mut state, key('k'));
    assert_eq!(state.help_scroll, 1);
    update(&mut state, key('g'));
    assert_eq!(state.help_scroll, 0);
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.overlay, Overlay::None);
    update(&mut state, key('?'));
    update(&mut state, key('q'));
    assert!(
        !state.quit,
        "the help is a popup: q does not quit behind it"
    );
    assert_eq!(state.overlay, Overlay::Help);
    update(&mut state, key('?'));
    assert_eq!(state.overlay, Overlay::None, "? closes the help");
    update(&mut state, key('q'));
    assert!(state.quit);
}

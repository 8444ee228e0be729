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

#[test]
fn bang_opens_this_sessions_messages_newest_first_and_whole() {
    let mut state = state();
    update(&mut state, key('!'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("! opens a popup: {:?}", state.overlay);
    };
    assert!(detail.text.contains("No messages yet"), "{}", detail.text);
    update(&mut state, code(KeyCode::Esc));
    state.say("trimmed 4 messages of support-ada-0001: undo with u".to_owned());
    // A key that is refused says so in the status line; the log keeps it too.
    update(&mut state, key('i'));
    let refusal = state.message.clone().expect("i on an empty list says why");
    update(&mut state, key('i'));
    update(&mut state, key('!'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("! opens a popup: {:?}", state.overlay);
    };
    let trimmed = detail
        .text
        .find("trimmed 4 messages")
        .expect("the trim is logged");
    let refused = detail.text.find(&refusal).expect("the refusal is logged");
    assert!(refused < trimmed, "newest first:\n{}", detail.text);
    assert_eq!(
        detail.text.matches(&refusal).count(),
        1,
        "a refusal repeated at once is logged once"
    );
}

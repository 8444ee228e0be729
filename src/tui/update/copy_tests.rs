//! Tests of `y`, the copy of the selected id.

use super::*;
use crate::tui::update::test_support::{key, list_loaded, state};
use crate::tui::update::update;

#[test]
fn y_copies_the_selected_conversation_id_and_says_so() {
    let mut state = state();
    let effects = update(&mut state, key('y'));
    assert!(effects.is_empty());
    assert_eq!(state.message.as_deref(), Some("nothing selected to copy"));
    list_loaded(&mut state, &["c1", "c2"]);
    update(&mut state, key('j'));
    let effects = update(&mut state, key('y'));
    assert!(
        matches!(effects.as_slice(), [Effect::CopyToClipboard(id)] if id == "c2"),
        "{effects:?}"
    );
    let said = state.message.clone().unwrap();
    assert!(said.starts_with("copied conversation id c2"), "{said}");
    assert!(
        state.message_log.contains(&said),
        "the log keeps what was copied"
    );
}

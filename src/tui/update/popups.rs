//! The popups that show text: help, a detail and the warnings. They scroll, and help opens
//! over whatever is shown and gives it back when it closes.

use crate::tui::action::Action;
use crate::tui::keymap::KeyContext;
use crate::tui::state::{AppState, Detail, Overlay};

/// The moving keys over a scrolled text (help, a detail popup); the popup clamps the scroll to
/// what its height leaves hidden.
fn scroll_text(scroll: &mut usize, action: Action) {
    match action {
        Action::Up => *scroll = scroll.saturating_sub(1),
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::PageUp => *scroll = scroll.saturating_sub(10),
        Action::PageDown => *scroll = scroll.saturating_add(10),
        Action::Top => *scroll = 0,
        Action::Bottom => *scroll = usize::MAX / 2,
        _ => {}
    }
}

/// This session's messages, newest first, and the warnings in effect, whole in a popup: the
/// status line can only count the warnings and cut a message.
pub(super) fn show_warnings(state: &mut AppState) {
    state.first_run_hint = false;
    let warnings = state.warnings();
    let mut text = String::new();
    if !warnings.is_empty() {
        text.push_str("Warnings in effect:\n");
        for (number, warning) in warnings.iter().enumerate() {
            text.push_str(&format!("{}. {warning}\n", number + 1));
        }
        if state.memory_bases.warnings().next().is_some() {
            text.push_str(&mismatch_fix(state));
        }
        text.push('\n');
    }
    if state.message_log.is_empty() {
        text.push_str("No messages yet: what writes, trims, undos and refusals say stays here.");
    } else {
        text.push_str("Messages, newest first:\n");
        for message in state.message_log.iter().rev() {
            text.push_str(&format!("• {message}\n"));
        }
    }
    let title = match warnings.len() {
        0 => " Messages ".to_owned(),
        1 => " Messages · 1 warning ".to_owned(),
        n => format!(" Messages · {n} warnings "),
    };
    state.overlay = Overlay::Detail(Detail::new(title, text));
}

/// Where a memory base's mismatch is fixed, with the keys the keymap binds.
fn mismatch_fix(state: &AppState) -> String {
    let keymap = &state.keymap;
    let tab = keymap.key_for(KeyContext::Global, Action::ShowMemoryBases);
    let regenerate = keymap.key_for(KeyContext::MemoryBases, Action::Regenerate);
    match (tab, regenerate) {
        (Some(tab), Some(regenerate)) => format!(
            "A memory base's mismatch is fixed on the memory bases tab ({tab}): {regenerate} \
             regenerates its knowledge base.\n"
        ),
        _ => "A memory base's mismatch is fixed by regenerating its knowledge base.\n".to_owned(),
    }
}

/// Opens help over what is shown; closing it gives that back.
pub(super) fn open_help(state: &mut AppState) {
    state.first_run_hint = false;
    state.under_help = std::mem::replace(&mut state.overlay, Overlay::Help);
    state.help_scroll = 0;
}

/// Keys of the help popup: it scrolls, and closes on help or esc.
pub(super) fn help_action(state: &mut AppState, action: Action) {
    if matches!(action, Action::ToggleHelp | Action::Back) {
        state.overlay = std::mem::take(&mut state.under_help);
    } else {
        scroll_text(&mut state.help_scroll, action);
    }
}

/// Keys of a detail popup: it scrolls, closes back to what it opened over, or opens help.
pub(super) fn detail_action(state: &mut AppState, action: Action) {
    let Overlay::Detail(detail) = &mut state.overlay else {
        return;
    };
    match action {
        Action::Back | Action::Open | Action::ShowWarnings | Action::Details => {
            let under = std::mem::take(&mut detail.under);
            state.overlay = *under;
        }
        Action::ToggleHelp => open_help(state),
        _ => scroll_text(&mut detail.scroll, action),
    }
}

#[cfg(test)]
#[path = "popups_tests.rs"]
mod tests;

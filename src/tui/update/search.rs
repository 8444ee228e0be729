//! `/` in an open conversation, session or thread (its messages, or the shown checkpoint's in
//! its checkpoint tree): a search in its messages, typed as it applies. The selection goes to the first message holding the text, `n` and `N` go from
//! match to match, and esc clears the search before it leaves the view.

use super::conversation::{refresh_thread, select_node};
use super::effect::Effect;
use crate::tui::action::Action;
use crate::tui::keymap::KeyContext;
use crate::tui::state::checkpoints::CheckpointPane;
use crate::tui::state::search::MessageSearch;
use crate::tui::state::{AppState, Overlay, Prompt, Screen};

/// The views whose messages a search goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    /// A Dify conversation's tree.
    Conversation,
    /// A Langflow session's or a LangGraph thread's messages.
    Session,
    /// The messages of the checkpoint a LangGraph thread's tree shows.
    Checkpoint,
}

fn shown(state: &AppState) -> Option<View> {
    match state.screen {
        Screen::Conversation => Some(View::Conversation),
        Screen::Session => Some(View::Session),
        Screen::Checkpoints => Some(View::Checkpoint),
        _ => None,
    }
}

/// Whether the search takes `action` here: `/` in an open view, `n`/`N` and esc while a search
/// is on (`n`/`N` step the extraction demo while it runs and nothing is searched).
pub(super) fn takes(state: &AppState, action: Action) -> bool {
    if !matches!(
        state.key_context(),
        KeyContext::Conversation
            | KeyContext::Session
            | KeyContext::FlowSession
            | KeyContext::Thread
            | KeyContext::Checkpoints
    ) {
        return false;
    }
    let Some(view) = shown(state).filter(|&view| texts(state, view).is_some()) else {
        return false;
    };
    let active = search(state, view).is_some();
    let demo = state
        .conversation
        .as_ref()
        .is_some_and(|c| c.demo.is_some())
        && state.screen == Screen::Conversation;
    match action {
        Action::Filter => true,
        Action::SearchNext | Action::SearchPrev => active || !demo,
        Action::Back => active,
        _ => false,
    }
}

/// `/`, `n`, `N` or esc, once [`takes`] said the search takes it.
pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(view) = shown(state) else {
        return;
    };
    match action {
        Action::Filter => {
            let query = search(state, view)
                .map(|s| s.query.clone())
                .unwrap_or_default();
            state.overlay = Overlay::Prompt(Prompt::Search(query));
        }
        Action::SearchNext | Action::SearchPrev => {
            let Some(found) = search(state, view) else {
                state.message =
                    Some("/ searches the messages; n and N then go from match to match".into());
                return;
            };
            let Some((_, selected)) = texts(state, view) else {
                return;
            };
            let forward = action == Action::SearchNext;
            if let Some(position) = found.step(selected, forward) {
                select(state, view, position, effects);
            }
            say(state, view);
        }
        _ => set(state, view, None),
    }
}

/// The search as typed so far: it applies at once, and the selection goes to the first match
/// from the selected message on.
pub(super) fn typed(state: &mut AppState, query: &str, effects: &mut Vec<Effect>) {
    let Some(view) = shown(state) else {
        return;
    };
    let Some((texts, selected)) = texts(state, view) else {
        return;
    };
    if query.is_empty() {
        set(state, view, None);
        return;
    }
    let found = MessageSearch::new(query, texts);
    let target = found.from(selected);
    set(state, view, Some(found));
    if let Some(position) = target.filter(|&p| p != selected) {
        select(state, view, position, effects);
    }
    say(state, view);
}

/// The view's messages were read again: the search finds its matches among them anew.
pub(super) fn reapply(state: &mut AppState, view: View) {
    let Some(query) = search(state, view).map(|s| s.query.clone()) else {
        return;
    };
    if let Some((texts, _)) = texts(state, view) {
        set(state, view, Some(MessageSearch::new(&query, texts)));
    }
}

/// The search of the open view.
fn search(state: &AppState, view: View) -> Option<&MessageSearch> {
    match view {
        View::Conversation => state.conversation.as_ref()?.search.as_ref(),
        View::Session => state.session.as_ref()?.search.as_ref(),
        View::Checkpoint => state.checkpoints.as_ref()?.search.as_ref(),
    }
}

fn set(state: &mut AppState, view: View, found: Option<MessageSearch>) {
    match view {
        View::Conversation => {
            if let Some(conversation) = state.conversation.as_mut() {
                conversation.search = found;
            }
        }
        View::Session => {
            if let Some(session) = state.session.as_mut() {
                session.search = found;
            }
        }
        View::Checkpoint => {
            if let Some(thread) = state.checkpoints.as_mut() {
                thread.search = found;
            }
        }
    }
}

/// How many messages hold the text, and which of them is selected.
fn say(state: &mut AppState, view: View) {
    let said = search(state, view)
        .zip(texts(state, view))
        .map(|(found, (_, at))| found.describe(at));
    state.message = said;
}

/// Each message's text, in the view's order (a conversation's tree with nothing collapsed,
/// question and answer), and the selected message's position in it.
fn texts(state: &AppState, view: View) -> Option<(Vec<String>, usize)> {
    match view {
        View::Conversation => {
            let conversation = state.conversation.as_ref()?;
            let loaded = conversation.loaded.as_ref()?;
            let lines = &loaded.expanded_lines;
            let texts = (0..lines.len())
                .filter_map(|line| lines.get(line))
                .map(|line| {
                    let message = loaded.message(line.node);
                    format!("{}\n{}", message.query, message.answer)
                })
                .collect();
            Some((texts, lines.line_of(conversation.selected).unwrap_or(0)))
        }
        View::Session => {
            let session = state.session.as_ref()?;
            let view = session.view.as_ref()?;
            let texts = view
                .messages
                .iter()
                .map(|m| m.message.message.content.text().into_owned())
                .collect();
            Some((texts, session.selected))
        }
        View::Checkpoint => {
            let thread = state.checkpoints.as_ref()?;
            let budget = thread.shown.as_ref()?.budget.as_ref().ok()?;
            let texts = budget
                .prompt
                .iter()
                .map(|message| message.content.text().into_owned())
                .collect();
            Some((texts, thread.message_at.unwrap_or(0)))
        }
    }
}

/// Selects the message at `position` of the view's order (opening a collapsed branch).
fn select(state: &mut AppState, view: View, position: usize, effects: &mut Vec<Effect>) {
    match view {
        View::Conversation => {
            let Some(conversation) = state.conversation.as_mut() else {
                return;
            };
            let Some(loaded) = conversation.loaded.clone() else {
                return;
            };
            if let Some(line) = loaded.expanded_lines.get(position) {
                select_node(conversation, &loaded, line.node);
                refresh_thread(state, effects);
            }
        }
        View::Session => {
            if let Some(session) = state.session.as_mut() {
                session.selected = position;
            }
        }
        // The messages pane shows that message, even when the node writes were shown.
        View::Checkpoint => {
            if let Some(thread) = state.checkpoints.as_mut() {
                thread.message_at = Some(position);
                thread.pane = CheckpointPane::Messages;
            }
        }
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;

//! `E` in an open conversation, session or thread: its bundle as `memscope export` makes it,
//! written as a new file under the data directory; the status line says where.

use super::effect::{Effect, Load};
use crate::sources::opened::ConversationKey;
use crate::tui::state::{AppState, Screen};

/// Asks for the open conversation's bundle: a LangGraph thread's tree exports it at the
/// selected checkpoint of its root graph, as `export --leaf` does.
pub(super) fn ask(state: &mut AppState, effects: &mut Vec<Effect>) {
    let open = match state.screen {
        Screen::Conversation => state.conversation.as_ref().map(|c| {
            let key = ConversationKey::new(c.id.clone());
            (key, None)
        }),
        Screen::Session => state.session.as_ref().map(|s| (s.key.clone(), None)),
        Screen::Checkpoints => state.checkpoints.as_ref().map(|thread| {
            let key = ConversationKey::new(thread.thread_id.clone());
            let leaf = thread
                .selected()
                .filter(|(namespace, _)| namespace.is_empty())
                .map(|(_, checkpoint)| checkpoint.id.clone());
            (key, leaf)
        }),
        _ => None,
    };
    let Some((key, leaf)) = open else {
        state.message = Some("E exports an open conversation: open one first".to_owned());
        return;
    };
    let generation = state.generation();
    state.exporting = Some(generation);
    state.message = Some(format!("exporting {}…", key.id));
    let load = Load::Export {
        key,
        leaf,
        budget: state.settings.budget_settings(),
        message_limit: state.settings.message_limit,
    };
    effects.push(Effect::load(generation, load));
}

/// The bundle was written, or could not be.
pub(super) fn exported(state: &mut AppState, result: Result<String, String>) -> bool {
    state.exporting = None;
    state.message = Some(match result {
        Ok(written) => written,
        Err(error) => format!("export failed: {error}"),
    });
    true
}

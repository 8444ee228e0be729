//! `y`: the id of the selected row goes to the terminal's clipboard (OSC 52, as lazygit does),
//! so it can be pasted into a CLI command or a bug report.

use super::effect::Effect;
use crate::tui::state::memory_bases::Focus;
use crate::tui::state::{AppState, Overlay, Screen};

/// Asks for the selected row's id to be copied and says so, or says there is nothing to copy.
pub(super) fn copy_selected(state: &mut AppState, effects: &mut Vec<Effect>) {
    match selected_id(state) {
        Some((what, id)) => {
            state.say(format!(
                "copied {what} {id} (sent to the terminal's clipboard with OSC 52)"
            ));
            effects.push(Effect::CopyToClipboard(id));
        }
        None => state.say("nothing selected to copy".to_owned()),
    }
}

/// What the selected row is, and its id.
fn selected_id(state: &AppState) -> Option<(&'static str, String)> {
    if state.overlay == Overlay::Jobs {
        let lines = state.jobs.lines();
        return lines
            .get(state.jobs.selected)
            .map(|line| ("job id", line.job_id.clone()));
    }
    match state.screen {
        Screen::Session => {
            let session = state.session.as_ref()?;
            let message = session.view.as_ref()?.messages.get(session.selected)?;
            Some(("message id", message.message.id.clone()))
        }
        Screen::Conversations => state
            .list
            .selected_row()
            .map(|row| ("conversation id", row.id.clone())),
        Screen::Conversation => {
            let conversation = state.conversation.as_ref()?;
            match &conversation.nodes {
                Some(nodes) => nodes
                    .rows
                    .get(nodes.selected)
                    .map(|row| ("node id", row.summary.node_id.clone())),
                None => {
                    let loaded = conversation.loaded.as_ref()?;
                    (!loaded.tree.is_empty()).then(|| {
                        let id = loaded.tree.id(conversation.selected);
                        ("message id", id.to_owned())
                    })
                }
            }
        }
        Screen::ChatMemories => {
            let memories = &state.chat_memories;
            match &memories.open {
                Some(open) => open
                    .rows
                    .get(open.selected)
                    .map(|row| ("message id", row.id.clone())),
                None => memories
                    .selected_row()
                    .map(|row| ("chat memory id", row.id.clone())),
            }
        }
        Screen::Tree => state
            .tree
            .as_ref()?
            .selected_node()
            .map(|node| ("node id", node.id.clone())),
        Screen::Checkpoints => state
            .checkpoints
            .as_ref()?
            .selected()
            .map(|(_, line)| ("checkpoint id", line.id.clone())),
        Screen::Doctor => state
            .doctor
            .as_ref()?
            .selected_finding()?
            .conversation_id()
            .map(|id| ("conversation id", id.to_owned())),
        Screen::MemoryBases => {
            let tab = &state.memory_bases;
            if let Some(search) = &tab.search {
                let hit = search.hits.get(search.selected)?;
                return Some(("session", hit.session_id.clone()));
            }
            match tab.focus {
                Focus::Bases => tab
                    .selected_base()
                    .map(|status| ("memory base id", status.base.id.clone())),
                Focus::Sessions => tab
                    .selected_session()
                    .map(|status| ("session", status.session.session_id.clone())),
            }
        }
    }
}

#[cfg(test)]
#[path = "copy_tests.rs"]
mod tests;

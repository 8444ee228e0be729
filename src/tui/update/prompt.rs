//! The prompt line: the list's filter, typed as it applies, and `:` commands.

use crossterm::event::{KeyCode, KeyEvent};

use super::budget::set_budget;
use super::effect::Effect;
use super::list_query::filter_list;
use super::{search, settings};
use crate::tui::state::{AppState, COMMANDS, Overlay, Prompt, Tab, parse_budget};

/// A key while the prompt is open: typing, backspace, enter submits and esc closes it.
pub(super) fn prompt_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    let Overlay::Prompt(prompt) = &mut state.overlay else {
        return false;
    };
    let filtering = matches!(prompt, Prompt::Filter(_));
    let searching = matches!(prompt, Prompt::Search(_));
    let text = match prompt {
        Prompt::Filter(text) | Prompt::Command(text) | Prompt::Search(text) => text,
    };
    match key.code {
        // Esc drops a filter typed so far (it applied as it was typed).
        KeyCode::Esc if filtering => {
            state.overlay = Overlay::None;
            if !state.list.filter.is_empty() {
                filter_list(state, String::new(), effects);
            }
        }
        // And a search, likewise.
        KeyCode::Esc if searching => {
            state.overlay = Overlay::None;
            search::typed(state, "", effects);
        }
        KeyCode::Esc => state.overlay = Overlay::None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Enter => {
            let prompt = prompt.clone();
            state.overlay = Overlay::None;
            submit_prompt(state, prompt, effects);
            return true;
        }
        KeyCode::Char(c) => text.push(c),
        _ => return false,
    }
    // The list filters, and a search finds, as the text is typed.
    match &state.overlay {
        Overlay::Prompt(Prompt::Filter(text)) => {
            let text = text.clone();
            filter_list(state, text, effects);
        }
        Overlay::Prompt(Prompt::Search(text)) => {
            let text = text.clone();
            search::typed(state, &text, effects);
        }
        _ => {}
    }
    true
}

fn submit_prompt(state: &mut AppState, prompt: Prompt, effects: &mut Vec<Effect>) {
    match prompt {
        Prompt::Filter(text) => filter_list(state, text, effects),
        Prompt::Command(text) => run_command(state, &text, effects),
        // It applied as it was typed: enter keeps it, and says what it found.
        Prompt::Search(text) => search::typed(state, &text, effects),
    }
}

fn run_command(state: &mut AppState, text: &str, effects: &mut Vec<Effect>) {
    let mut words = text.split_whitespace();
    let (Some(command), argument) = (words.next(), words.next()) else {
        return;
    };
    match (command, argument) {
        ("q" | "quit", _) => state.quit = true,
        ("conv", Some(_)) if state.tab_missing(Tab::Conversations).is_some() => {
            state.message = state.tab_missing(Tab::Conversations).map(str::to_owned);
        }
        ("conv", Some(id)) => {
            super::checkpoints::open_any_conversation(state, id.to_owned(), effects)
        }
        ("doctor", _) if state.tab_missing(Tab::Conversations).is_some() => {
            state.message = state.tab_missing(Tab::Conversations).map(str::to_owned);
        }
        ("doctor", _) => effects.extend(super::doctor::open(state)),
        // The rest of the line: a file path may hold spaces.
        ("open", Some(_)) => {
            let given = text.trim_start()[command.len()..].trim();
            super::database::open(state, given, effects)
        }
        ("budget", Some(n)) => match parse_budget(n) {
            Ok(budget) => {
                set_budget(state, budget);
                super::budget::recompute_session_budget(state, effects);
            }
            Err(e) => state.message = Some(e),
        },
        ("model", Some(name)) => settings::set_model(state, name, effects),
        ("counter", Some(name)) => settings::set_counter(state, name, effects),
        ("encoding", Some(name)) => settings::set_encoding(state, name, effects),
        _ => state.message = Some(format!("unknown command :{text} ({})", COMMANDS.join(", "))),
    }
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;

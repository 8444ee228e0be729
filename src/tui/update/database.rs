//! `:open URL`: another database in place of the open one, without quitting. It is opened as a
//! load, off the frame; a failure says why and keeps the open database, and once it opened every
//! tab starts over on it, as at start-up (read-only unless memscope was started with `--write`).

use super::effect::{Effect, Load};
use super::opened_database::{OpenedDatabase, take};
use super::start::start;
use crate::store::redact_url;
use crate::tui::state::{AppState, Opening};

/// `:open URL`: asks for the database at `given` (a URL, or a file path as `--db` takes it).
pub(super) fn open(state: &mut AppState, given: &str, effects: &mut Vec<Effect>) {
    let url = crate::config::database_url(given);
    let generation = state.generation();
    let shown = redact_url(&url);
    state.message = Some(format!("opening {shown}…"));
    state.opening = Some(Opening {
        generation,
        url: shown,
    });
    effects.push(Effect::load(generation, Load::Database { url }));
}

/// The database asked for opened, or failed to. Success starts every tab over on it.
pub(super) fn opened(
    state: &mut AppState,
    result: Result<Box<OpenedDatabase>, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(opening) = state.opening.take() else {
        return false;
    };
    match result {
        Err(error) => {
            state.message = Some(format!(
                "could not open {}: {error}; still on {}",
                opening.url, state.database
            ))
        }
        Ok(database) => {
            start_over(state, &database);
            effects.push(Effect::SwitchDatabase(database));
            effects.extend(start(state));
            let access = if state.read_only { " (read-only)" } else { "" };
            state.message = Some(format!("opened {}{access}", state.database));
        }
    }
    true
}

/// A state as the app starts with on `database`, keeping what belongs to the session rather
/// than to a database: the keys, settings, warnings about them, the log and the summarizer.
fn start_over(state: &mut AppState, database: &OpenedDatabase) {
    let mut fresh = AppState::new(
        state.keymap.clone(),
        state.settings.clone(),
        database.database.clone(),
        database.read_only,
    );
    fresh.config_warnings = std::mem::take(&mut state.config_warnings);
    fresh.message_log = std::mem::take(&mut state.message_log);
    fresh.summarizer = state.summarizer.clone();
    fresh.ticks = state.ticks;
    // Generations keep counting, so a report the old database still sends is never taken.
    fresh.next_generation = state.next_generation;
    take(&mut fresh, database);
    *state = fresh;
}

#[cfg(test)]
#[path = "database_tests.rs"]
mod tests;

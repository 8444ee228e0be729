//! The pure core: `update(state, event) -> effects`. No IO happens here; effects are requests
//! the job runner carries out, and their results come back as [`JobEvent`]s.
//!
//! This module only routes: each key, action and job result goes to the module of the screen
//! or popup it belongs to, and what they share ([`Effect`] and the events) is in `effect.rs`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod back;
mod budget;
pub mod chat_memories;
mod chat_memory_jobs;
mod checkpoint_detail;
mod checkpoint_jobs;
mod checkpoint_loads;
mod checkpoint_prune;
mod checkpoint_writes;
mod checkpoints;
mod confirm;
mod conversation;
mod copy;
mod database;
mod details;
pub mod doctor;
mod doctor_jobs;
mod effect;
mod export;
mod form;
mod jobs_popup;
mod list;
mod list_query;
mod loads;
mod memory_base_forms;
mod memory_base_jobs;
mod memory_base_results;
mod memory_bases;
mod nodes;
mod open_session;
pub mod opened_database;
mod popups;
mod prompt;
mod reopen;
mod search;
mod selection;
mod session;
mod session_effects;
mod session_trim;
mod settings;
mod start;
mod tabs;
#[cfg(test)]
mod test_support;
mod tree_screen;
pub mod trim;

pub use checkpoint_jobs::{CheckpointLoad, CheckpointLoaded, CheckpointWritten};
pub use effect::{Effect, Event, JobEvent, Load, LoadReport, LoadedNodes, Stamped};
pub use list::KEPT_THREAD_COUNTS;
pub use memory_base_jobs::{MbEffect, MbEvent, MbLoad, MbLoaded, SyncResult};
pub use session_effects::{SessionLoad, SessionLoaded, TrimFigures, TrimWritten};

use super::action::Action;
use super::keymap::KeyChord;
use super::state::{
    AppState, ConversationScreens, LoadStatus, Overlay, POLL_EVERY_TICKS, Screen, Tab,
};
pub use start::start;
use tabs::show_tab;

/// Applies one event. Marks the state dirty when the screen must be redrawn.
pub fn update(state: &mut AppState, event: Event) -> Vec<Effect> {
    let mut effects = Vec::new();
    let said_before = state.message.clone();
    let from_job = matches!(event, Event::Job(_));
    let changed = match event {
        Event::Key(key) => on_key(state, key, &mut effects),
        Event::Action(action) => on_action(state, action, &mut effects),
        Event::Job(job) => on_job(state, job, &mut effects),
        Event::Tick => on_tick(state, &mut effects),
        Event::Resize => true,
    };
    list::ask_snippet(state, &mut effects);
    log_news(state, said_before, from_job);
    state.dirty |= changed;
    effects
}

/// Keeps what this event said in the log `!` opens: a new status message, and after a job the
/// memory-base warnings that were not logged yet (a mismatch found, a failed watcher).
fn log_news(state: &mut AppState, said_before: Option<String>, from_job: bool) {
    if let Some(message) = state
        .message
        .clone()
        .filter(|m| Some(m) != said_before.as_ref())
    {
        state.log(message);
    }
    if from_job {
        let warnings: Vec<String> = state
            .memory_bases
            .warnings()
            .chain(state.jobs.watcher_error.clone())
            .map(|warning| format!("⚠ {warning}"))
            .filter(|entry| !state.message_log.contains(entry))
            .collect();
        for warning in warnings {
            state.log(warning);
        }
    }
}

/// Opens a conversation, session or thread as the database keeps them, by its whole id (the
/// TUI started on one: `memscope open ID`).
pub fn open_conversation(state: &mut AppState, id: String) -> Vec<Effect> {
    let mut effects = Vec::new();
    checkpoints::open_any_conversation(state, id, &mut effects);
    state.dirty = true;
    effects
}

fn on_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        state.quit = true;
        return true;
    }
    if matches!(state.overlay, Overlay::Prompt(_)) {
        return prompt::prompt_key(state, key, effects);
    }
    if form::type_key(state, key) {
        return true;
    }
    if state.overlay == Overlay::Trim
        && !key.modifiers.contains(KeyModifiers::CONTROL)
        && trim::type_key(state, key.code, effects)
    {
        return true;
    }
    if state.overlay == Overlay::Prune
        && !key.modifiers.contains(KeyModifiers::CONTROL)
        && checkpoint_prune::type_key(state, key.code, effects)
    {
        return true;
    }
    let action =
        KeyChord::from_event(&key).and_then(|k| state.keymap.lookup(state.key_context(), k));
    match action {
        Some(action) => on_action(state, action, effects),
        None => false,
    }
}

fn on_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) -> bool {
    state.message = None;
    match state.overlay {
        Overlay::Help => {
            popups::help_action(state, action);
            return true;
        }
        Overlay::Jobs => {
            match action {
                Action::Open | Action::Details => details::open(state),
                Action::CopyId => copy::copy_selected(state, effects),
                _ => jobs_popup::jobs_action(state, action, effects),
            }
            return true;
        }
        Overlay::Detail(_) => {
            popups::detail_action(state, action);
            return true;
        }
        // The trim preview, a confirmation and a form take every key but help: popups own the
        // keyboard, so even a quit bound inside one never acts behind it.
        Overlay::Trim if action != Action::ToggleHelp => {
            trim::action(state, action, effects);
            return true;
        }
        Overlay::Prune if action != Action::ToggleHelp => {
            checkpoint_prune::action(state, action, effects);
            return true;
        }
        Overlay::Confirm(_) if action != Action::ToggleHelp => {
            confirm::action(state, action, effects);
            return true;
        }
        Overlay::Form(_) if action != Action::ToggleHelp => {
            form::action(state, action, effects);
            return true;
        }
        Overlay::None
        | Overlay::Prompt(_)
        | Overlay::Trim
        | Overlay::Confirm(_)
        | Overlay::Prune
        | Overlay::Form(_) => {}
    }
    match action {
        Action::Quit => state.quit = true,
        Action::ToggleHelp => popups::open_help(state),
        Action::ToggleJobs => match state.tab_missing(Tab::MemoryBases) {
            Some(why) => state.message = Some(format!("no sync jobs: {why}")),
            None => jobs_popup::open_jobs(state, effects),
        },
        Action::ShowWarnings => popups::show_warnings(state),
        Action::Details => details::open(state),
        Action::CopyId => copy::copy_selected(state, effects),
        Action::Export => export::ask(state, effects),
        Action::CommandLine => {
            state.overlay = Overlay::Prompt(super::state::Prompt::Command(String::new()))
        }
        Action::NextTab => show_tab(state, state.screen.tab().cycled(1), effects),
        Action::PrevTab => show_tab(state, state.screen.tab().cycled(-1), effects),
        Action::ShowConversations => show_tab(state, Tab::Conversations, effects),
        Action::ShowChatMemories => show_tab(state, Tab::ChatMemories, effects),
        Action::ShowMemoryBases => show_tab(state, Tab::MemoryBases, effects),
        // `/` in an open conversation, session or thread searches its messages; `n` and `N`
        // go from match to match, and esc clears the search before it leaves the view.
        Action::Filter | Action::SearchNext | Action::SearchPrev | Action::Back
            if search::takes(state, action) =>
        {
            search::action(state, action, effects)
        }
        // `1` brings back the screen the conversations tab was left on: a search typed there
        // (or on any screen without its own `/`) goes to the list's filter, and its letters
        // never run as that screen's keys.
        Action::Filter
            if state.screen != Screen::Conversations
                && state.tab_missing(Tab::Conversations).is_none() =>
        {
            show_tab(state, Tab::Conversations, effects);
            state.screen = Screen::Conversations;
            let filter = state.list.filter.clone();
            state.overlay = Overlay::Prompt(super::state::Prompt::Filter(filter));
        }
        // A tab whose part the database lacks shows why, and does nothing else.
        _ if state.tab_missing(state.screen.tab()).is_some() => return false,
        _ => match state.screen {
            Screen::Conversations => list::list_action(state, action, effects),
            Screen::Conversation => conversation::conversation_action(state, action, effects),
            Screen::Session => session::session_action(state, action, effects),
            Screen::ChatMemories => chat_memories::action(state, action, effects),
            Screen::MemoryBases => memory_bases::action(state, action, effects),
            Screen::Doctor => doctor_action(state, action, effects),
            Screen::Checkpoints => checkpoints::action(state, action, effects),
            Screen::Tree => tree_screen::action(state, action, effects),
        },
    }
    true
}

/// The doctor view's keys; enter opens the selected finding's conversation as `:conv` does,
/// except on the session screens, where a finding leads where it says (a finding may lead to a
/// search instead).
fn doctor_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    if let Some(id) = doctor::action(state, action, effects) {
        match state.conversation_screens {
            ConversationScreens::Messages => open_session::open_from_doctor(state, id, effects),
            _ => checkpoints::open_any_conversation(state, id, effects),
        }
    }
}

/// Hands a job's result to the screen it belongs to. `false` when it was stale.
fn on_job(state: &mut AppState, job: JobEvent, effects: &mut Vec<Effect>) -> bool {
    match job {
        JobEvent::Load(report) => loads::on_load(state, report, effects),
        JobEvent::Newest { id, newest } => conversation::newest(state, id, newest, effects),
        JobEvent::MemoryBases(event) => memory_base_results::on_job(state, event, effects),
        JobEvent::ChatMemory(job) => chat_memories::on_job(state, job, effects),
        JobEvent::Checkpoints(written) => checkpoints::written(state, written, effects),
        JobEvent::SessionTrim(written) => session_trim::written(state, written, effects),
    }
}

fn on_tick(state: &mut AppState, effects: &mut Vec<Effect>) -> bool {
    state.ticks += 1;
    let shown = state.tab_missing(state.screen.tab()).is_none();
    if shown && state.ticks % POLL_EVERY_TICKS == 0 && state.overlay == Overlay::None {
        match state.screen {
            Screen::Conversations if state.list.status == LoadStatus::Loaded => {
                effects.push(list_query::reload_list(state, false));
            }
            Screen::Conversation => conversation::poll(state, effects),
            Screen::Checkpoints => checkpoints::poll(state, effects),
            Screen::Conversations | Screen::Session | Screen::Doctor | Screen::Tree => {}
            Screen::ChatMemories => chat_memories::poll(state, effects),
            Screen::MemoryBases => memory_bases::poll(state, effects),
        }
    }
    if state.tab_missing(Tab::MemoryBases).is_none() {
        memory_bases::tick(state, effects);
    }
    // Only the spinner animates.
    state.busy()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

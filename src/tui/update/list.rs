//! The conversation list, one for every source: its pages along the cursors its source gives,
//! its filter and search, what opens a row, and the token counts of the shown page's threads
//! where rows are regeneration trees.

use rustc_hash::FxHashSet;

use super::conversation::open_conversation;
use super::effect::{Effect, Load};
use super::list_query::{filter_list, reload_list};
use super::open_session::open_session;
use super::selection::moved;
use crate::inspect::search_match::matched_field;
use crate::sources::conversation::{ListedConversation, ListedPage};
use crate::sources::opened::ConversationKey;
use crate::tui::action::Action;
use crate::tui::state::{
    AppState, ListState, LoadStatus, MatchSnippet, Overlay, PAGE_SIZE, Prompt, Screen, key_of,
};

/// `]` (+1) or `[` (-1). While a page loads the step waits for it: the next cursor comes from
/// the rows that page brings, not from the rows still on screen.
fn step_page(state: &mut AppState, step: i64, effects: &mut Vec<Effect>) {
    let list = &mut state.list;
    if list.loading_page.is_some() {
        list.queued_steps += step;
        return;
    }
    if let Some(page) = list.step_from_shown(step) {
        list.loading_page = Some(page);
        list.selected = 0;
        effects.push(reload_list(state, true));
    }
}

/// The loaded page becomes the shown one; a step queued meanwhile starts from it.
fn page_arrived(state: &mut AppState, effects: &mut Vec<Effect>) -> bool {
    let list = &mut state.list;
    if let Some(page) = list.loading_page.take() {
        list.previous_pages = page.previous_pages;
        list.page_after = page.after;
        list.selected = 0;
    }
    let step = list.queued_steps.signum();
    if step == 0 {
        return false;
    }
    list.queued_steps -= step;
    match list.step_from_shown(step) {
        Some(page) => {
            list.loading_page = Some(page);
            effects.push(reload_list(state, true));
            true
        }
        None => {
            // The first or last page: the rest of the burst has nowhere to go.
            list.queued_steps = 0;
            false
        }
    }
}

pub(super) fn list_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let list = &mut state.list;
    if let Some(selected) = moved(list.selected, list.rows.len(), action) {
        list.selected = selected;
        return;
    }
    match action {
        Action::Open => match list.selected_key() {
            Some(key) if state.lists_sessions() => {
                open_session(state, key, Screen::Conversations, effects)
            }
            Some(key) => open_conversation(state, key.id, effects),
            None => {}
        },
        Action::Filter => {
            state.overlay = Overlay::Prompt(Prompt::Filter(list.filter.clone()));
        }
        Action::NextPage => step_page(state, 1, effects),
        Action::PrevPage => step_page(state, -1, effects),
        Action::ToggleDeleted => {
            list.include_deleted = !list.include_deleted;
            list.reset_pages();
            list.selected = 0;
            state.message = Some(
                if list.include_deleted {
                    "deleted conversations shown, marked ✗ (Dify hides them)"
                } else {
                    "deleted conversations hidden, as in Dify"
                }
                .to_owned(),
            );
            effects.push(reload_list(state, true));
        }
        Action::Refresh => effects.push(reload_list(state, true)),
        Action::Doctor => effects.extend(super::doctor::open(state)),
        Action::Prune => match list.selected_row() {
            Some(row) => {
                let id = row.id.clone();
                super::checkpoint_prune::ask(state, id, effects);
            }
            None => state.message = Some("no thread selected to prune".to_owned()),
        },
        Action::Undo => match list.selected_row() {
            Some(row) => {
                let id = row.id.clone();
                super::checkpoint_writes::ask_to_undo(state, id, effects);
            }
            None => state.message = Some("no thread selected to undo".to_owned()),
        },
        Action::Back if searching_first_page(list) => stop_search(state, effects),
        Action::Back if !list.filter.is_empty() => filter_list(state, String::new(), effects),
        _ => {}
    }
}

/// Whether a search's first page is loading: what Esc stops (a later page's load is left to
/// finish, since the page it replaces is still on screen).
fn searching_first_page(list: &ListState) -> bool {
    list.status.is_loading() && !list.filter.is_empty() && list.loading_page.is_none()
}

/// Stops the running search; what it found so far becomes the page, and the filter stays.
fn stop_search(state: &mut AppState, effects: &mut Vec<Effect>) {
    effects.push(Effect::StopList);
    // Anything the stopped job still sends is dropped.
    state.list.generation = state.generation();
    let list = &mut state.list;
    list.rows = std::mem::take(&mut list.found_so_far);
    list.selected = 0;
    list.status = LoadStatus::Loaded;
    state.message = Some(format!(
        "search stopped: {} found before it stopped (r searches again, esc clears the filter)",
        list.rows.len()
    ));
}

/// Token counts kept for conversations no longer listed: a few pages' worth, so paging back
/// shows them at once, while paging through a million conversations keeps the map bounded.
pub const KEPT_THREAD_COUNTS: usize = 8 * PAGE_SIZE as usize;

/// Drops the counts of conversations off the shown page once more than
/// [`KEPT_THREAD_COUNTS`] are held; coming back to them recounts from the count cache.
fn forget_unlisted_counts(list: &mut ListState) {
    if list.thread_tokens.len() <= KEPT_THREAD_COUNTS {
        return;
    }
    let listed: FxHashSet<&str> = list.rows.iter().map(|r| r.id.as_str()).collect();
    list.thread_tokens
        .retain(|id, _| listed.contains(id.as_str()));
}

/// One row a scanning search found, before its page is complete.
pub(super) fn found(state: &mut AppState, row: ListedConversation) -> bool {
    let list = &mut state.list;
    if !list.status.is_loading() {
        return false;
    }
    list.found_so_far.push(row);
    true
}

/// A page arrived, or failed.
pub(super) fn listed(
    state: &mut AppState,
    result: Result<ListedPage, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    state.list.found_so_far.clear();
    match result {
        Ok(ListedPage {
            conversations: rows,
            next,
        }) => {
            let paged = state.list.loading_page.is_some();
            if paged {
                state.list.selected = 0;
            }
            let selected_key = state.list.selected_key();
            state.list.selected = selected_key
                .and_then(|key| rows.iter().position(|r| key_of(r) == key))
                .unwrap_or(state.list.selected)
                .min(rows.len().saturating_sub(1));
            // Count only what is new or changed: polls reload the page every few
            // seconds and must not recount it.
            let unchanged: FxHashSet<(&str, Option<u64>)> = state
                .list
                .rows
                .iter()
                .map(|r| (r.id.as_str(), r.messages))
                .collect();
            let to_count: Vec<String> = rows
                .iter()
                .filter(|r| {
                    !state.list.thread_tokens.contains_key(&r.id)
                        || !unchanged.contains(&(r.id.as_str(), r.messages))
                })
                .map(|r| r.id.clone())
                .collect();
            state.list.rows = rows;
            state.list.page_next = next;
            state.list.status = LoadStatus::Loaded;
            forget_unlisted_counts(&mut state.list);
            if paged && page_arrived(state, effects) {
                // Passed through on the way to a later page: nothing to count.
                return true;
            }
            if !to_count.is_empty() && state.list_counts_tokens() {
                let tokens_generation = state.generation();
                state.list.tokens_generation = tokens_generation;
                let count = Load::CountThreads {
                    ids: to_count,
                    settings: state.settings.budget_settings(),
                    message_limit: state.settings.message_limit,
                };
                effects.push(Effect::load(tokens_generation, count));
            }
        }
        Err(error) => {
            // The shown page stays what it was; the burst stops.
            state.list.loading_page = None;
            state.list.queued_steps = 0;
            state.list.status = LoadStatus::Failed(error);
        }
    }
    true
}

pub(super) fn thread_tokens(state: &mut AppState, tokens: Vec<(String, u64)>) -> bool {
    state.list.thread_tokens.extend(tokens);
    true
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;

/// Asks where the filter occurs in the selected row's messages, when it matched their text
/// (not its title, app or id) and that was not read yet: the list says why a row matched, on
/// the conversation list and on the list of sessions or threads alike.
pub(super) fn ask_snippet(state: &mut AppState, effects: &mut Vec<Effect>) {
    let search = state.list.filter.clone();
    if search.trim().is_empty() {
        return;
    }
    let list = &state.list;
    let Some(row) = list
        .selected_row()
        .filter(|_| list.status == LoadStatus::Loaded)
    else {
        return;
    };
    if matched_field(row, &state.list_columns, state.list_search, &search).is_some() {
        return;
    }
    let key = key_of(row);
    let asked = state
        .list
        .snippet
        .as_ref()
        .is_some_and(|s| s.key == key && s.filter == search);
    if asked {
        return;
    }
    let generation = state.generation();
    state.list.snippet_generation = generation;
    state.list.snippet = Some(MatchSnippet {
        key: key.clone(),
        filter: search.clone(),
        text: None,
    });
    let settings = state.settings.budget_settings();
    effects.push(Effect::load(
        generation,
        Load::Snippet {
            key,
            search,
            settings,
        },
    ));
}

/// Where the filter occurs in a row's messages was read.
pub(super) fn snippet_read(
    state: &mut AppState,
    key: ConversationKey,
    result: Result<Option<String>, String>,
) -> bool {
    match state.list.snippet.as_mut() {
        Some(snippet) if snippet.key == key => {
            snippet.text = Some(result);
            true
        }
        _ => false,
    }
}

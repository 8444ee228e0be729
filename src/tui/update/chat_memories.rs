//! The chat memories tab: its actions, its forms and confirmations, and its job results.

pub use super::chat_memory_jobs::{
    MemoryEffect, MemoryJob, MemoryLoad, MemoryLoaded, MemoryPage, READ_ONLY,
};
use super::effect::Effect;
use super::selection::moved;
use super::trim;
use crate::memory::model::Role;
use crate::store::rows::ChatMemoryMessageRow;
use crate::store::{ChatMemorySummary, DeleteScope};
use crate::tui::action::Action;
use crate::tui::state::chat_memories::{FormKind, MESSAGE_PAGE, MemoryForm, MemoryView, Write};
use crate::tui::state::confirm::{Confirm, PendingWrite};
use crate::tui::state::form::{Field, FieldValue, Form};
use crate::tui::state::{AppState, Detail, LoadStatus, Overlay};
use crate::tui::state::{FormPopup, FormPurpose};

/// The tab came to the front.
pub(super) fn enter(state: &mut AppState, effects: &mut Vec<Effect>) {
    reload(state, true, effects);
}

/// A polling tick while the tab is in front: notice changes made by other processes.
pub(super) fn poll(state: &mut AppState, effects: &mut Vec<Effect>) {
    if state.chat_memories.status == LoadStatus::Loaded && !state.chat_memories.writing {
        reload(state, false, effects);
    }
}

/// Reloads the list and the open page.
fn reload(state: &mut AppState, show_loading: bool, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let memories = &mut state.chat_memories;
    memories.generation = generation;
    if show_loading {
        memories.status = LoadStatus::Loading;
    }
    effects.push(Effect::load(generation, MemoryLoad::List));
    if memories.open.is_some() {
        load_page(state, effects);
    }
}

fn load_page(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let counter = state.settings.counter();
    let Some(open) = state.chat_memories.open.as_mut() else {
        return;
    };
    open.generation = generation;
    let page = MemoryLoad::Page {
        id: open.id.clone(),
        limit: MESSAGE_PAGE,
        offset: open.offset,
        counter,
    };
    effects.push(Effect::load(generation, page));
}

pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    if state.chat_memories.open.is_some() {
        memory_action(state, action, effects);
    } else {
        list_action(state, action, effects);
    }
}

fn list_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let memories = &mut state.chat_memories;
    if let Some(selected) = moved(memories.selected, memories.rows.len(), action) {
        memories.selected = selected;
        return;
    }
    match action {
        Action::Refresh => reload(state, true, effects),
        Action::Open => {
            if let Some(id) = memories.selected_row().map(|r| r.id.clone()) {
                let generation = state.generation();
                state.chat_memories.open = Some(MemoryView::new(id, generation));
                load_page(state, effects);
            }
        }
        _ => {
            if let Some(id) = memories.selected_row().map(|r| r.id.clone()) {
                memory_command(state, &id, action, effects);
            }
        }
    }
}

fn memory_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let total = state
        .chat_memories
        .open
        .as_ref()
        .and_then(|open| {
            let rows = &state.chat_memories.rows;
            rows.iter().find(|r| r.id == open.id)
        })
        .map_or(0, |r| r.message_count);
    let Some(open) = state.chat_memories.open.as_mut() else {
        return;
    };
    if let Some(selected) = moved(open.selected, open.rows.len(), action) {
        open.selected = selected;
        return;
    }
    match action {
        Action::Back => state.chat_memories.open = None,
        Action::NextPage if open.offset + MESSAGE_PAGE < total => {
            open.offset += MESSAGE_PAGE;
            open.selected = 0;
            load_page(state, effects);
        }
        Action::PrevPage if open.offset > 0 => {
            open.offset = (open.offset - MESSAGE_PAGE).max(0);
            open.selected = 0;
            load_page(state, effects);
        }
        Action::Refresh => reload(state, true, effects),
        Action::Open => {
            if let Some(row) = open.rows.get(open.selected) {
                let tokens = open.tokens.get(open.selected).copied();
                state.overlay = Overlay::Detail(message_detail(row, tokens));
            }
        }
        _ => {
            let id = open.id.clone();
            memory_command(state, &id, action, effects);
        }
    }
}

/// One stored message whole: what its row in the page had to cut.
pub(super) fn message_detail(row: &ChatMemoryMessageRow, tokens: Option<u64>) -> Detail {
    let message = crate::inspect::trim::row_message(row);
    let role = if row.is_summary { "summary" } else { &row.role };
    let mut text = format!(
        "role      {role}\nseq       {}\ncreated   {}\n",
        row.seq,
        row.created_at.format("%Y-%m-%d %H:%M:%S")
    );
    if let Some(tokens) = tokens {
        text.push_str(&format!("tokens    {tokens}\n"));
    }
    if let Some(request) = &row.workflow_request_id {
        text.push_str(&format!("request   {request}\n"));
    }
    if let Some(call) = &row.tool_call_id {
        text.push_str(&format!("answers   tool call {call}\n"));
    }
    if let Some(calls) = &row.tool_calls {
        text.push_str(&format!("calls     {calls}\n"));
    }
    if let Some(files) = &row.files {
        text.push_str(&format!("files     {files}\n"));
    }
    text.push('\n');
    text.push_str(&message.content.text());
    Detail::new(format!(" Message {} ", row.seq), text)
}

/// The keys that act on one memory, from the list or from its page.
fn memory_command(state: &mut AppState, id: &str, action: Action, effects: &mut Vec<Effect>) {
    let writes = matches!(
        action,
        Action::AddMemory | Action::DeleteMemory | Action::Undo
    );
    if writes && state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    let label = state
        .chat_memories
        .rows
        .iter()
        .find(|r| r.id == id)
        .map_or_else(|| id.to_owned(), |r| format!("{} / {}", r.label, r.chat_id));
    match action {
        Action::TrimPreview => trim::open_for_memory(state, id, &label, effects),
        Action::Undo => {
            // The confirmation opens only once a change to undo is known to exist.
            state.say(format!("looking for a change of {label} to undo…"));
            effects.push(Effect::ChatMemory(MemoryEffect::CountDelete {
                write: Write::Undo {
                    memory_id: id.to_owned(),
                },
            }));
        }
        Action::AddMemory => {
            let form = Form::new(vec![
                Field::new(
                    "role",
                    "role",
                    FieldValue::choice(&["user", "assistant"], "user"),
                ),
                Field::new("content", "content", FieldValue::text("")),
                Field::new("files", "files (JSON)", FieldValue::text("")),
            ]);
            let title = format!(
                " Add a message to {} ",
                memory_label(&state.chat_memories.rows, id)
            );
            state.overlay = memory_form(title, FormKind::Add, id, form);
        }
        Action::DeleteMemory => {
            let form = Form::new(vec![
                Field::new(
                    "scope",
                    "messages of",
                    FieldValue::choice(&["latest request", "all"], "latest request"),
                ),
                Field::new(
                    "roles",
                    "roles",
                    FieldValue::choice(&["user+assistant", "user", "assistant"], "user+assistant"),
                ),
            ]);
            let title = format!(
                " Delete messages from {} ",
                memory_label(&state.chat_memories.rows, id)
            );
            state.overlay = memory_form(title, FormKind::Delete, id, form);
        }
        _ => {}
    }
}

/// A form of the tab over the screen.
fn memory_form(title: String, kind: FormKind, memory_id: &str, form: Form) -> Overlay {
    let which = MemoryForm {
        kind,
        memory_id: memory_id.to_owned(),
    };
    Overlay::Form(FormPopup::new(title, FormPurpose::ChatMemory(which), form))
}

/// A submitted form: an added message is written at once, a delete asks first (naming how many
/// messages go once a job has counted them). A refusal opens the form again with the reason.
pub(super) fn submit_form(
    state: &mut AppState,
    which: MemoryForm,
    popup: FormPopup,
    effects: &mut Vec<Effect>,
) {
    match submit(which, &popup.form) {
        Ok(write @ Write::Add { .. }) => start_write(state, write, effects),
        Ok(write) => {
            let question = describe(&write, &state.chat_memories.rows, None);
            effects.push(Effect::ChatMemory(MemoryEffect::CountDelete {
                write: write.clone(),
            }));
            state.overlay = Overlay::Confirm(Confirm {
                question,
                write: PendingWrite::ChatMemory(write),
            });
        }
        Err(error) => state.overlay = Overlay::Form(popup.refused(error)),
    }
}

/// The write a form asks for, or why it cannot be.
fn submit(which: MemoryForm, form: &Form) -> Result<Write, String> {
    let memory_id = which.memory_id;
    match which.kind {
        FormKind::Add => {
            let content = form.text("content").trim().to_owned();
            if content.is_empty() {
                return Err("content is empty".to_owned());
            }
            let files = form.text("files").trim();
            let files = if files.is_empty() {
                None
            } else {
                Some(
                    serde_json::from_str::<serde_json::Value>(files)
                        .map_err(|e| format!("files is not JSON: {e}"))?,
                )
            };
            let role = match form.choice("role") {
                "assistant" => Role::Assistant,
                _ => Role::User,
            };
            Ok(Write::Add {
                memory_id,
                role,
                content,
                files,
            })
        }
        FormKind::Delete => {
            let scope = match form.choice("scope") {
                "all" => DeleteScope::All,
                _ => DeleteScope::LatestRequest,
            };
            let roles = match form.choice("roles") {
                "user" => vec![Role::User],
                "assistant" => vec![Role::Assistant],
                _ => vec![Role::User, Role::Assistant],
            };
            Ok(Write::Delete {
                memory_id,
                scope,
                roles,
            })
        }
    }
}

/// A memory's label, or its id while the list does not have it.
fn memory_label(rows: &[ChatMemorySummary], id: &str) -> String {
    rows.iter()
        .find(|r| r.id == id)
        .map_or_else(|| id.to_owned(), |r| r.label.clone())
}

/// The confirmation question of a delete, with how many messages go once they are counted.
fn describe(
    write: &Write,
    rows: &[ChatMemorySummary],
    count: Option<&Result<usize, String>>,
) -> String {
    let label = memory_label(rows, write.memory_id());
    match write {
        Write::Delete { scope, roles, .. } => {
            let scope = match scope {
                DeleteScope::All => "every request",
                DeleteScope::LatestRequest => "latest workflow request",
            };
            let roles: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            let what = match count {
                None => "the messages (counting…)".to_owned(),
                Some(Ok(n)) => format!(
                    "{} {}",
                    crate::format::thousands(*n as u64),
                    crate::format::noun(*n as u64, "message")
                ),
                Some(Err(error)) => format!("the messages (not counted: {error})"),
            };
            format!(
                "Delete {what} from {label} ({scope}; {})? They are archived: undo brings them \
                 back.",
                roles.join(" and ")
            )
        }
        _ => format!("Change {label}?"),
    }
}

/// The count of a delete arrived: the question says it, or nothing matched and there is
/// nothing to confirm.
fn on_delete_count(state: &mut AppState, write: Write, result: Result<usize, String>) -> bool {
    if let Write::Undo { .. } = &write {
        return on_undo_count(state, write, result);
    }
    let Overlay::Confirm(confirm) = &mut state.overlay else {
        return false;
    };
    if confirm.write != PendingWrite::ChatMemory(write.clone()) {
        return false;
    }
    if result == Ok(0) {
        let label = memory_label(&state.chat_memories.rows, write.memory_id());
        state.overlay = Overlay::None;
        state.message = Some(format!("no message of {label} matches the delete"));
        return true;
    }
    confirm.question = describe(&write, &state.chat_memories.rows, Some(&result));
    true
}

/// The changes an undo could revert were counted: none says so, else the confirmation opens.
/// An answer arriving after the user moved on to another popup is dropped.
fn on_undo_count(state: &mut AppState, write: Write, result: Result<usize, String>) -> bool {
    if state.overlay != Overlay::None || state.screen != crate::tui::state::Screen::ChatMemories {
        return false;
    }
    let label = memory_label(&state.chat_memories.rows, write.memory_id());
    match result {
        Ok(0) => state.say(format!(
            "nothing to undo in {label}: no change of it is left to revert"
        )),
        Ok(_) => {
            state.overlay = Overlay::Confirm(Confirm {
                question: format!(
                    "Undo the last change of chat memory {label}? Its messages are restored \
                     exactly as they were before it."
                ),
                write: PendingWrite::ChatMemory(write),
            });
        }
        Err(error) => state.say(format!("could not look for a change to undo: {error}")),
    }
    true
}

/// Starts a confirmed write of a chat memory, unless the database is read-only.
pub(super) fn start_write(state: &mut AppState, write: Write, effects: &mut Vec<Effect>) {
    if state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    state.chat_memories.writing = true;
    state.message = Some("writing…".to_owned());
    effects.push(Effect::ChatMemory(MemoryEffect::Write {
        write,
        counter: state.settings.counter(),
    }));
}

/// A load's report (of the latest request: `loads.rs` checked).
pub(super) fn on_load(
    state: &mut AppState,
    report: MemoryLoaded,
    effects: &mut Vec<Effect>,
) -> bool {
    match report {
        MemoryLoaded::List(result) => {
            let memories = &mut state.chat_memories;
            match result {
                Ok(rows) => {
                    let selected_id = memories.selected_row().map(|r| r.id.clone());
                    memories.selected = selected_id
                        .and_then(|id| rows.iter().position(|r| r.id == id))
                        .unwrap_or(memories.selected)
                        .min(rows.len().saturating_sub(1));
                    let changed: Vec<String> =
                        rows.iter()
                            .filter(|row| {
                                !memories.tokens.contains_key(&row.id)
                                    || !memories.rows.iter().any(|old| {
                                        old.id == row.id && old.updated_at == row.updated_at
                                    })
                            })
                            .map(|row| row.id.clone())
                            .collect();
                    memories.rows = rows;
                    memories.status = LoadStatus::Loaded;
                    if !changed.is_empty() {
                        let generation = state.generation();
                        state.chat_memories.tokens_generation = generation;
                        let count = MemoryLoad::Tokens {
                            ids: changed,
                            counter: state.settings.counter(),
                        };
                        effects.push(Effect::load(generation, count));
                    }
                }
                Err(error) => memories.status = LoadStatus::Failed(error),
            }
        }
        MemoryLoaded::Tokens(tokens) => state.chat_memories.tokens.extend(tokens),
        MemoryLoaded::Page(result) => {
            let Some(open) = state.chat_memories.open.as_mut() else {
                return false;
            };
            match result {
                Ok(page) => {
                    open.selected = open.selected.min(page.rows.len().saturating_sub(1));
                    open.memory = Some(page.memory);
                    open.rows = page.rows;
                    open.tokens = page.tokens;
                    open.status = LoadStatus::Loaded;
                }
                Err(error) => open.status = LoadStatus::Failed(error),
            }
        }
        MemoryLoaded::TrimSource(result) => return trim::on_source(state, result, effects),
        MemoryLoaded::Summary(result) => return trim::on_summary(state, result),
    }
    true
}

/// A write's or a delete count's result.
pub(super) fn on_job(state: &mut AppState, job: MemoryJob, effects: &mut Vec<Effect>) -> bool {
    match job {
        MemoryJob::DeleteCount { write, result } => return on_delete_count(state, write, result),
        MemoryJob::Written { memory_id, result } => {
            state.chat_memories.writing = false;
            state.message = Some(match result {
                Ok(done) => done,
                Err(error) => format!("write failed: {error}"),
            });
            // The memory's tokens changed with its messages.
            state.chat_memories.tokens.remove(&memory_id);
            reload(state, false, effects);
        }
    }
    true
}

#[cfg(test)]
#[path = "chat_memories_tests.rs"]
mod tests;

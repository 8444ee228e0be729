//! The chat memories tab: its actions, its forms and confirmations, and its job results.

use super::Effect;
pub use super::chat_memory_jobs::{MemoryEffect, MemoryJob, MemoryPage, READ_ONLY};
use super::trim;
use crate::memory::model::Role;
use crate::store::rows::ChatMemoryMessageRow;
use crate::store::{ChatMemorySummary, DeleteScope};
use crate::tui::action::Action;
use crate::tui::state::chat_memories::{
    Confirm, FormKind, MESSAGE_PAGE, MemoryForm, MemoryView, Write,
};
use crate::tui::state::form::{Field, FieldValue, Form};
use crate::tui::state::{AppState, Detail, LoadStatus, Overlay};

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
    effects.push(Effect::ChatMemory(MemoryEffect::LoadList { generation }));
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
    effects.push(Effect::ChatMemory(MemoryEffect::LoadPage {
        generation,
        id: open.id.clone(),
        limit: MESSAGE_PAGE,
        offset: open.offset,
        counter,
    }));
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
    let last = memories.rows.len().saturating_sub(1);
    match action {
        Action::Up => memories.selected = memories.selected.saturating_sub(1),
        Action::Down => memories.selected = (memories.selected + 1).min(last),
        Action::PageUp => memories.selected = memories.selected.saturating_sub(10),
        Action::PageDown => memories.selected = (memories.selected + 10).min(last),
        Action::Top => memories.selected = 0,
        Action::Bottom => memories.selected = last,
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
    let last = open.rows.len().saturating_sub(1);
    match action {
        Action::Back => state.chat_memories.open = None,
        Action::Up => open.selected = open.selected.saturating_sub(1),
        Action::Down => open.selected = (open.selected + 1).min(last),
        Action::PageUp => open.selected = open.selected.saturating_sub(10),
        Action::PageDown => open.selected = (open.selected + 10).min(last),
        Action::Top => open.selected = 0,
        Action::Bottom => open.selected = last,
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
            state.overlay = Overlay::Confirm(Confirm {
                question: format!(
                    "Undo the last change of chat memory {label}? Its messages are restored \
                     exactly as they were before it."
                ),
                write: Write::Undo {
                    memory_id: id.to_owned(),
                },
            });
        }
        Action::AddMemory => {
            state.overlay = Overlay::Form(MemoryForm {
                kind: FormKind::Add,
                memory_id: id.to_owned(),
                form: Form::new(vec![
                    Field::new(
                        "role",
                        "role",
                        FieldValue::choice(&["user", "assistant"], "user"),
                    ),
                    Field::new("content", "content", FieldValue::text("")),
                    Field::new("files", "files (JSON)", FieldValue::text("")),
                ]),
                error: None,
            });
        }
        Action::DeleteMemory => {
            state.overlay = Overlay::Form(MemoryForm {
                kind: FormKind::Delete,
                memory_id: id.to_owned(),
                form: Form::new(vec![
                    Field::new(
                        "scope",
                        "messages of",
                        FieldValue::choice(&["latest request", "all"], "latest request"),
                    ),
                    Field::new(
                        "roles",
                        "roles",
                        FieldValue::choice(
                            &["user+assistant", "user", "assistant"],
                            "user+assistant",
                        ),
                    ),
                ]),
                error: None,
            });
        }
        _ => {}
    }
}

/// Keys while a chat memory form is open.
pub(super) fn form_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Overlay::Form(memory_form) = &mut state.overlay else {
        return;
    };
    match action {
        Action::Back => state.overlay = Overlay::None,
        Action::Up => memory_form.form.move_focus(-1),
        Action::Down => memory_form.form.move_focus(1),
        Action::Increase | Action::Decrease => {
            if let Some(value) = memory_form.form.focused_value() {
                value.step(if action == Action::Increase { 1 } else { -1 });
            }
        }
        Action::Confirm => match submit(memory_form) {
            Ok(write @ Write::Add { .. }) => {
                state.overlay = Overlay::None;
                start_write(state, write, effects);
            }
            Ok(write) => {
                // The question names the count once the job has counted what would go.
                let question = describe(&write, &state.chat_memories.rows, None);
                effects.push(Effect::ChatMemory(MemoryEffect::CountDelete {
                    write: write.clone(),
                }));
                state.overlay = Overlay::Confirm(Confirm { question, write });
            }
            Err(error) => memory_form.error = Some(error),
        },
        _ => {}
    }
}

/// The write a form asks for, or why it cannot be.
fn submit(memory_form: &MemoryForm) -> Result<Write, String> {
    let form = &memory_form.form;
    let memory_id = memory_form.memory_id.clone();
    match memory_form.kind {
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

/// The label of the memory a write changes, or its id.
fn label_of(write: &Write, rows: &[ChatMemorySummary]) -> String {
    rows.iter()
        .find(|r| r.id == write.memory_id())
        .map_or_else(|| write.memory_id().to_owned(), |r| r.label.clone())
}

/// The confirmation question of a delete, with how many messages go once they are counted.
fn describe(
    write: &Write,
    rows: &[ChatMemorySummary],
    count: Option<&Result<usize, String>>,
) -> String {
    let label = label_of(write, rows);
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
                    crate::inspect::thousands(*n as u64),
                    crate::inspect::noun(*n as u64, "message")
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
    let Overlay::Confirm(confirm) = &mut state.overlay else {
        return false;
    };
    if confirm.write != write {
        return false;
    }
    if result == Ok(0) {
        let label = label_of(&write, &state.chat_memories.rows);
        state.overlay = Overlay::None;
        state.message = Some(format!("no message of {label} matches the delete"));
        return true;
    }
    confirm.question = describe(&write, &state.chat_memories.rows, Some(&result));
    true
}

/// Keys while a confirmation is open: yes starts the write, anything else backs out.
pub(super) fn confirm_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Overlay::Confirm(confirm) = &state.overlay else {
        return;
    };
    match action {
        Action::Confirm => {
            let write = confirm.write.clone();
            state.overlay = Overlay::None;
            state.trim = None;
            start_write(state, write, effects);
        }
        Action::Back => {
            // Back to the preview the apply was asked from, if any.
            state.overlay = if state.trim.is_some() {
                Overlay::Trim
            } else {
                Overlay::None
            };
        }
        _ => {}
    }
}

fn start_write(state: &mut AppState, write: Write, effects: &mut Vec<Effect>) {
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

pub(super) fn on_job(state: &mut AppState, job: MemoryJob, effects: &mut Vec<Effect>) -> bool {
    match job {
        MemoryJob::List { generation, result } => {
            let memories = &mut state.chat_memories;
            if generation != memories.generation {
                return false;
            }
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
                        effects.push(Effect::ChatMemory(MemoryEffect::CountTokens {
                            generation,
                            ids: changed,
                            counter: state.settings.counter(),
                        }));
                    }
                }
                Err(error) => memories.status = LoadStatus::Failed(error),
            }
        }
        MemoryJob::Tokens { generation, tokens } => {
            if generation != state.chat_memories.tokens_generation {
                return false;
            }
            state.chat_memories.tokens.extend(tokens);
        }
        MemoryJob::Page { generation, result } => {
            let Some(open) = state
                .chat_memories
                .open
                .as_mut()
                .filter(|o| o.generation == generation)
            else {
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
        MemoryJob::TrimSource { generation, result } => {
            return trim::on_source(state, generation, result, effects);
        }
        MemoryJob::Summary { generation, result } => {
            return trim::on_summary(state, generation, result);
        }
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
mod tests {
    use super::*;
    use crate::tui::update::tests::{code, key};
    use crate::tui::update::trim::tests::{memories, memory_row};
    use crate::tui::update::{Event, JobEvent, update};
    use crossterm::event::KeyCode;

    fn write(effects: &[Effect]) -> &Write {
        match effects {
            [Effect::ChatMemory(MemoryEffect::Write { write, .. })] => write,
            other => panic!("expected one write, got {other:?}"),
        }
    }

    fn typed(state: &mut AppState, text: &str) {
        for c in text.chars() {
            update(state, key(c));
        }
    }

    #[test]
    fn undo_asks_first_and_only_yes_writes() {
        let mut state = memories("{}", 12);
        let id = memory_row("{}", 0).id;
        assert!(update(&mut state, key('u')).is_empty());
        assert!(matches!(&state.overlay, Overlay::Confirm(c)
            if c.write == Write::Undo { memory_id: id.clone() } && c.question.contains("Support")));
        assert!(update(&mut state, code(KeyCode::Esc)).is_empty());
        assert_eq!(state.overlay, Overlay::None);
        assert_eq!(state.screen, crate::tui::state::Screen::ChatMemories);
        update(&mut state, key('u'));
        let effects = update(&mut state, key('y'));
        assert_eq!(write(&effects), &Write::Undo { memory_id: id });
        assert!(state.chat_memories.writing);
    }

    #[test]
    fn writes_are_refused_on_a_read_only_database() {
        let mut state = memories("{}", 12);
        state.read_only = true;
        for c in ['u', 'a', 'd'] {
            assert!(update(&mut state, key(c)).is_empty());
            assert_eq!(state.overlay, Overlay::None);
            assert_eq!(state.message.as_deref(), Some(READ_ONLY));
        }
    }

    #[test]
    fn the_add_form_takes_every_character_and_checks_files() {
        let mut state = memories("{}", 12);
        update(&mut state, key('a'));
        update(&mut state, code(KeyCode::Right));
        update(&mut state, code(KeyCode::Tab));
        typed(&mut state, "quit? jk 123");
        assert!(!state.quit, "q is typed, not a command");
        update(&mut state, code(KeyCode::Tab));
        typed(&mut state, "[oops");
        assert!(update(&mut state, code(KeyCode::Enter)).is_empty());
        match &state.overlay {
            Overlay::Form(form) => {
                assert!(
                    form.error
                        .as_deref()
                        .unwrap()
                        .starts_with("files is not JSON")
                );
            }
            other => panic!("{other:?}"),
        }
        for _ in 0..5 {
            update(&mut state, code(KeyCode::Backspace));
        }
        typed(
            &mut state,
            r#"[{"url":"https://f.example/a.png","content_type":"image/png"}]"#,
        );
        let effects = update(&mut state, code(KeyCode::Enter));
        match write(&effects) {
            Write::Add {
                role,
                content,
                files,
                ..
            } => {
                assert_eq!(*role, Role::Assistant);
                assert_eq!(content, "quit? jk 123");
                assert_eq!(files.as_ref().unwrap()[0]["content_type"], "image/png");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(state.overlay, Overlay::None);
    }

    #[test]
    fn delete_is_a_form_then_a_confirmation() {
        let mut state = memories("{}", 12);
        update(&mut state, key('d'));
        update(&mut state, code(KeyCode::Right));
        update(&mut state, code(KeyCode::Down));
        update(&mut state, code(KeyCode::Right));
        let expected = Write::Delete {
            memory_id: memory_row("{}", 0).id,
            scope: DeleteScope::All,
            roles: vec![Role::User],
        };
        // The confirmation opens at once and asks how many messages would go.
        match &update(&mut state, code(KeyCode::Enter))[..] {
            [Effect::ChatMemory(MemoryEffect::CountDelete { write })] => {
                assert_eq!(write, &expected)
            }
            other => panic!("expected the count, got {other:?}"),
        }
        let question = |state: &AppState| match &state.overlay {
            Overlay::Confirm(confirm) => {
                assert_eq!(confirm.write, expected);
                confirm.question.clone()
            }
            other => panic!("{other:?}"),
        };
        assert!(
            question(&state).contains("(every request; user)"),
            "{}",
            question(&state)
        );
        assert!(
            question(&state).contains("(counting…)"),
            "{}",
            question(&state)
        );
        let counted = |count| {
            Event::Job(JobEvent::ChatMemory(MemoryJob::DeleteCount {
                write: expected.clone(),
                result: Ok(count),
            }))
        };
        update(&mut state, counted(1));
        assert!(
            question(&state).starts_with("Delete 1 message from"),
            "{}",
            question(&state)
        );
        update(&mut state, counted(1_234));
        assert!(
            question(&state).starts_with("Delete 1,234 messages from"),
            "{}",
            question(&state)
        );
        let effects = update(&mut state, code(KeyCode::Enter));
        assert_eq!(write(&effects), &expected);
    }

    #[test]
    fn a_delete_that_matches_nothing_asks_nothing() {
        let mut state = memories("{}", 12);
        update(&mut state, key('d'));
        let effects = update(&mut state, code(KeyCode::Enter));
        let [Effect::ChatMemory(MemoryEffect::CountDelete { write })] = &effects[..] else {
            panic!("{effects:?}");
        };
        let write = write.clone();
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::DeleteCount {
                write,
                result: Ok(0),
            })),
        );
        assert_eq!(state.overlay, Overlay::None);
        assert!(
            state
                .message
                .as_deref()
                .unwrap_or("")
                .contains("matches the delete")
        );
    }

    #[test]
    fn an_open_memory_pages_with_limit_and_offset() {
        let mut state = memories("{}", 120);
        let effects = update(&mut state, code(KeyCode::Enter));
        let page = |effects: &[Effect]| match effects {
            [Effect::ChatMemory(MemoryEffect::LoadPage { limit, offset, .. })] => (*limit, *offset),
            other => panic!("{other:?}"),
        };
        assert_eq!(page(&effects), (MESSAGE_PAGE, 0));
        assert_eq!(page(&update(&mut state, key(']'))), (MESSAGE_PAGE, 50));
        assert_eq!(page(&update(&mut state, key(']'))), (MESSAGE_PAGE, 100));
        assert!(update(&mut state, key(']')).is_empty(), "no page after 120");
        assert_eq!(page(&update(&mut state, key('['))), (MESSAGE_PAGE, 50));
        let generation = state.chat_memories.open.as_ref().unwrap().generation;
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Page {
                generation: generation - 1,
                result: Err("stale".to_owned()),
            })),
        );
        assert!(
            state
                .chat_memories
                .open
                .as_ref()
                .unwrap()
                .status
                .is_loading()
        );
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Page {
                generation,
                result: Err("database is locked".to_owned()),
            })),
        );
        assert_eq!(
            state.chat_memories.open.as_ref().unwrap().status,
            LoadStatus::Failed("database is locked".to_owned())
        );
        update(&mut state, code(KeyCode::Esc));
        assert!(state.chat_memories.open.is_none());
    }
}

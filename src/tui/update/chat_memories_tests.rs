//! Tests of the chat memories tab: its list, pages, forms and writes.

use super::*;
use crate::tui::update::test_support::{code, key};
use crate::tui::update::test_support::{memories, memory_row};
use crate::tui::update::{Event, JobEvent, Load, Stamped, update};
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

/// `u` on the listed memory, and the count of its changes left to undo delivered.
fn undo_with_changes(state: &mut AppState, changes: usize) {
    let effects = update(state, key('u'));
    let [Effect::ChatMemory(MemoryEffect::CountDelete { write })] = &effects[..] else {
        panic!("u first looks for a change to undo: {effects:?}");
    };
    assert_eq!(
        state.overlay,
        Overlay::None,
        "no question before the answer"
    );
    let job = MemoryJob::DeleteCount {
        write: write.clone(),
        result: Ok(changes),
    };
    update(state, Event::Job(JobEvent::ChatMemory(job)));
}

#[test]
fn undo_asks_first_and_only_yes_writes() {
    let mut state = memories("{}", 12);
    let id = memory_row("{}", 0).id;
    undo_with_changes(&mut state, 1);
    assert!(matches!(&state.overlay, Overlay::Confirm(c)
        if c.write == PendingWrite::ChatMemory(Write::Undo { memory_id: id.clone() })
            && c.question.contains("Support")));
    assert!(update(&mut state, code(KeyCode::Esc)).is_empty());
    assert_eq!(state.overlay, Overlay::None);
    assert_eq!(state.screen, crate::tui::state::Screen::ChatMemories);
    undo_with_changes(&mut state, 2);
    let effects = update(&mut state, key('y'));
    assert_eq!(write(&effects), &Write::Undo { memory_id: id });
    assert!(state.chat_memories.writing);
}

#[test]
fn undo_with_nothing_to_undo_says_so_without_asking() {
    let mut state = memories("{}", 12);
    undo_with_changes(&mut state, 0);
    assert_eq!(state.overlay, Overlay::None);
    let said = state.message.clone().unwrap();
    assert!(said.starts_with("nothing to undo in Support"), "{said}");
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
            assert_eq!(confirm.write, PendingWrite::ChatMemory(expected.clone()));
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
        [
            Effect::Load(Stamped {
                value: Load::ChatMemory(MemoryLoad::Page { limit, offset, .. }),
                ..
            }),
        ] => (*limit, *offset),
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
        Event::Job(JobEvent::load(
            generation - 1,
            MemoryLoaded::Page(Err("stale".to_owned())),
        )),
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
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::Page(Err("database is locked".to_owned())),
        )),
    );
    assert_eq!(
        state.chat_memories.open.as_ref().unwrap().status,
        LoadStatus::Failed("database is locked".to_owned())
    );
    update(&mut state, code(KeyCode::Esc));
    assert!(state.chat_memories.open.is_none());
}

//! The whole app without a terminal: real jobs over a real database, keys in, screens out.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::fixtures;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::store::rows::Batch;
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::doctor::ScanStatus;
use memscope::tui::state::{LoadStatus, Overlay, POLL_EVERY_TICKS, Screen};
use memscope::tui::theme::Theme;
use memscope::tui::update::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Creates the embedded demo database under `root` with the real binary, as a first run does.
fn demo_dirs(root: &Path) -> Dirs {
    let status = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["conversations", "--json"])
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env_remove("MEMSCOPE_DATABASE_URL")
        .output()
        .expect("memscope runs");
    assert!(status.status.success(), "{status:?}");
    Dirs {
        data: root.join("data").join("memscope"),
        config: root.join("config").join("memscope"),
    }
}

async fn app(root: &Path) -> App {
    let resolved = config::resolve(demo_dirs(root), &Overrides::default()).unwrap();
    let store = Store::open(&resolved.database_url, Access::Auto)
        .await
        .unwrap();
    App::new(&resolved, store, None, Theme::monochrome()).unwrap()
}

/// Applies job results until `done` holds.
async fn settle(app: &mut App, done: impl Fn(&App) -> bool) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while !done(app) {
            assert!(app.next_job().await, "the job channel closed");
        }
    })
    .await
    .expect("the jobs finished in time");
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 32)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_drive_the_app_over_the_demo_database() {
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    assert!(screen(&mut app).contains("Loading conversations"));

    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    assert!(
        !app.state.list.rows.is_empty(),
        "the demo has conversations"
    );
    let rows = app.state.list.rows.len();
    settle(&mut app, |a| a.state.list.thread_tokens.len() == rows).await;
    let list = screen(&mut app);
    // A token cell still counting shows a lone … (a cut name ends in one after its text).
    let rows_text: Vec<&str> = list.lines().filter(|l| l.starts_with("\"│")).collect();
    assert!(
        rows_text.iter().all(|row| !row.contains(" … ")),
        "every thread's tokens are filled in:\n{list}"
    );

    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Conversation);
    settle(&mut app, |a| {
        a.state
            .conversation
            .as_ref()
            .is_some_and(|c| c.budget_status == LoadStatus::Loaded)
    })
    .await;
    let conversation = screen(&mut app);
    assert!(
        conversation.contains("thread: Dify's extraction"),
        "{conversation}"
    );
    assert!(conversation.contains("tokens kept"), "{conversation}");

    press(&mut app, KeyCode::Char('t'));
    assert!(screen(&mut app).contains("thread: true tree path"));
    press(&mut app, KeyCode::Char('+'));
    assert!(screen(&mut app).contains("max 2,250"));

    press(&mut app, KeyCode::Char('d'));
    assert!(screen(&mut app).contains("Dify's extraction, step 1 of"));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state.screen, Screen::Conversations);

    press(&mut app, KeyCode::Char('/'));
    for c in "zzzz-no-such-conversation".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    assert!(screen(&mut app).contains("No conversation matches"));

    press(&mut app, KeyCode::Char('q'));
    assert!(app.state.quit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_written_elsewhere_appear_without_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", root.path().join("live.db").display());
    let writer = Store::init(&url).await.unwrap();
    writer.insert_batch(&fixtures::full_batch()).await.unwrap();
    let dirs = Dirs {
        data: root.path().join("data"),
        config: root.path().join("config"),
    };
    let overrides = Overrides {
        database_url: Some(url.clone()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let reader = Store::open(&url, Access::ReadOnly).await.unwrap();
    let mut app = App::new(&resolved, reader, None, Theme::monochrome()).unwrap();
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    press(&mut app, KeyCode::Enter);
    let budget_loaded = |a: &App| {
        a.state
            .conversation
            .as_ref()
            .is_some_and(|c| c.budget_status == LoadStatus::Loaded)
    };
    settle(&mut app, budget_loaded).await;

    // The full batch's conversation: its newest message is fixture 51.
    let fixture_app = fixtures::app(10, "Support bot", "advanced-chat");
    let conversation = fixtures::conversation(20, &fixture_app, "Refund question", 100);
    let mut reply = fixtures::message(52, &conversation, 30);
    reply.message.parent_message_id = Some(fixtures::id(51));
    let batch = Batch {
        messages: vec![reply],
        ..Batch::default()
    };
    writer.insert_batch(&batch).await.unwrap();

    for _ in 0..POLL_EVERY_TICKS {
        app.handle(Event::Tick);
    }
    let new_id = fixtures::id(52);
    settle(&mut app, |a| {
        let c = a.state.conversation.as_ref().unwrap();
        let followed = c
            .loaded
            .as_ref()
            .is_some_and(|l| l.tree.id(c.selected) == new_id);
        followed && c.budget_status == LoadStatus::Loaded
    })
    .await;
    let conversation = app.state.conversation.as_ref().unwrap();
    let budget = conversation.budget.as_ref().unwrap();
    assert!(
        budget.history.thread.contains(&new_id),
        "the budget follows the new message"
    );
}

fn selected_base(app: &App) -> Option<&memscope::inspect::memory_bases::BaseStatus> {
    app.state.memory_bases.selected_base()
}

fn session<'a>(
    app: &'a App,
    id: &str,
) -> Option<&'a memscope::inspect::memory_bases::SessionStatus> {
    app.state
        .memory_bases
        .sessions
        .iter()
        .find(|s| s.session.session_id == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_bases_tab_syncs_toggles_and_deletes_over_the_demo_database() {
    use memscope::sync::Stage;
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    press(&mut app, KeyCode::Char('3'));
    assert_eq!(app.state.screen, Screen::MemoryBases);
    settle(&mut app, |a| {
        a.state.memory_bases.status == LoadStatus::Loaded
            && a.state.memory_bases.sessions_status == LoadStatus::Loaded
            && !a.state.memory_bases.sessions.is_empty()
    })
    .await;
    assert_eq!(
        selected_base(&app).unwrap().base.name,
        "Research notes memory"
    );
    let before = session(&app, "research-ada-0001").unwrap().clone();
    assert!(before.session.cursor_id.is_none());
    assert!(before.pending > 0);
    let tab = screen(&mut app);
    assert!(tab.contains("research-ada-0001"), "{tab}");
    // Only the demo's mismatch story (its KB was never built) shows a mismatch.
    let mismatched: Vec<&str> = tab.lines().filter(|l| l.contains("mismatch")).collect();
    assert!(
        mismatched.iter().all(|l| l.contains("Release history")),
        "the demo's synced bases have a KB that agrees with their records:\n{tab}"
    );

    // Sync the selected session now: the job reports, commits, and the tab reloads.
    press(&mut app, KeyCode::Char('s'));
    settle(&mut app, |a| {
        let committed = a.state.jobs.tracked.iter().any(|t| {
            t.progress.session_id == "research-ada-0001" && t.progress.stage == Stage::Committed
        });
        committed && session(a, "research-ada-0001").is_some_and(|s| s.session.cursor_id.is_some())
    })
    .await;
    let after = session(&app, "research-ada-0001").unwrap();
    assert_eq!(after.pending, 0);
    // Pending counts output messages; the sync ingests the session's user messages too.
    assert!(after.session.total_processed >= before.pending);
    assert!(after.session.last_sync_at.is_some());

    // The jobs popup lists the finished job from the job table.
    press(&mut app, KeyCode::Char('w'));
    settle(&mut app, |a| {
        a.state
            .jobs
            .table
            .iter()
            .any(|j| j.session_id() == Some("research-ada-0001") && j.status == "completed")
    })
    .await;
    let popup = screen(&mut app);
    assert!(popup.contains("completed"), "{popup}");
    press(&mut app, KeyCode::Esc);

    // Auto-capture: Research notes is manual; a toggles it on.
    assert!(!selected_base(&app).unwrap().base.auto_capture);
    press(&mut app, KeyCode::Char('a'));
    settle(&mut app, |a| {
        selected_base(a).is_some_and(|b| b.base.auto_capture)
    })
    .await;

    // Delete the last base, confirming.
    press(&mut app, KeyCode::Char('G'));
    let doomed = selected_base(&app).unwrap().base.name.clone();
    press(&mut app, KeyCode::Char('D'));
    assert!(screen(&mut app).contains("Delete memory base"));
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, |a| {
        a.state.memory_bases.status == LoadStatus::Loaded
            && !a
                .state
                .memory_bases
                .bases
                .iter()
                .any(|b| b.base.name == doomed)
    })
    .await;
    assert!(
        app.state
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("deleted memory base")),
        "{:?}",
        app.state.message
    );
    assert_eq!(app.state.memory_bases.bases.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_syncs_a_session_over_its_threshold_and_stops_on_shutdown() {
    use memscope::sync::Stage;
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    assert!(app.start_watcher(), "the demo database is writable");
    // The demo's Support memory is auto-capture with support-ada-0002 7 runs over its 5.
    settle(&mut app, |a| {
        a.state.jobs.tracked.iter().any(|t| {
            t.automatic
                && t.progress.session_id == "support-ada-0002"
                && t.progress.stage == Stage::Committed
        })
    })
    .await;
    assert_eq!(app.state.message, None, "automatic syncs do not toast");
    app.shutdown().await;
}

/// Selects the demo's 26-message support chat in the chat memories list; returns its id.
fn select_support_chat(app: &mut App) -> String {
    let at = app
        .state
        .chat_memories
        .rows
        .iter()
        .position(|r| r.chat_id == "user-1042-session-7")
        .expect("the demo's support chat");
    for _ in 0..at {
        press(app, KeyCode::Down);
    }
    app.state.chat_memories.rows[at].id.clone()
}

/// A chat memory's messages, read straight from the database.
async fn stored_messages(url: &str, id: &str) -> Vec<(String, i64, String)> {
    let store = Store::open(url, Access::Auto).await.unwrap();
    store
        .chat_memory_messages(id, None, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.seq, m.content))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_memory_is_previewed_trimmed_and_restored_from_the_tui() {
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    let url = app.state.database.clone();
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.state.screen, Screen::ChatMemories);
    settle(&mut app, |a| {
        a.state.chat_memories.status == LoadStatus::Loaded
    })
    .await;
    // The demo's 26-message support chat: over its 20-message policy with 2 predefined.
    let id = select_support_chat(&mut app);
    let before = stored_messages(&url, &id).await;
    assert_eq!(before.len(), 26);

    press(&mut app, KeyCode::Enter);
    settle(&mut app, |a| {
        a.state
            .chat_memories
            .open
            .as_ref()
            .is_some_and(|o| o.status == LoadStatus::Loaded)
    })
    .await;
    assert!(screen(&mut app).contains("messages 1–26 of 26"));

    press(&mut app, KeyCode::Char('T'));
    settle(&mut app, |a| {
        a.state
            .trim
            .as_ref()
            .is_some_and(|t| t.status == LoadStatus::Loaded)
    })
    .await;
    let removed = match &app.state.trim.as_ref().unwrap().plan {
        Some(Ok(plan)) => plan.removed().count(),
        other => panic!("no plan: {other:?}"),
    };
    assert_eq!(removed, 8, "2 predefined + 26 stored, cut to 20");
    let preview = screen(&mut app);
    assert!(preview.contains("Trim preview") && preview.contains("✗ over the limit"));
    assert_eq!(
        stored_messages(&url, &id).await,
        before,
        "a preview writes nothing"
    );

    press(&mut app, KeyCode::Char('A'));
    assert!(screen(&mut app).contains("Apply this trim"));
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, |a| !a.state.chat_memories.writing).await;
    let message = app.state.message.clone().unwrap();
    assert!(message.starts_with("trimmed"), "{message}");
    let after = stored_messages(&url, &id).await;
    assert_eq!(after.len(), 18);
    assert_eq!(
        after[..],
        before[8..],
        "the oldest 8 went, the rest untouched"
    );
    settle(&mut app, |a| {
        a.state
            .chat_memories
            .rows
            .iter()
            .any(|r| r.id == id && r.message_count == 18)
    })
    .await;

    ask_undo(&mut app).await;
    assert!(screen(&mut app).contains("Undo the last change"));
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, |a| !a.state.chat_memories.writing).await;
    let message = app.state.message.clone().unwrap();
    assert!(message.starts_with("undid trim"), "{message}");
    assert_eq!(stored_messages(&url, &id).await, before, "restored exactly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_are_added_and_deleted_through_the_forms() {
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    let url = app.state.database.clone();
    press(&mut app, KeyCode::Char('2'));
    settle(&mut app, |a| {
        a.state.chat_memories.status == LoadStatus::Loaded
    })
    .await;
    let id = select_support_chat(&mut app);
    let wrote = |app: &App| !app.state.chat_memories.writing;

    // Add: role, content (every key is typed), files; the policy then trims, undoably.
    let before = stored_messages(&url, &id).await;
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Tab);
    for c in "Is order 1042 on its way?".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    settle(&mut app, wrote).await;
    let message = app.state.message.clone().unwrap();
    assert!(message.contains("its policy trimmed 9"), "{message}");
    let stored = stored_messages(&url, &id).await;
    assert_eq!(stored.len(), 18, "27 stored + 2 predefined, cut to 20");
    assert!(
        stored
            .last()
            .unwrap()
            .2
            .contains("Is order 1042 on its way?")
    );
    ask_undo(&mut app).await;
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, wrote).await;
    let message = app.state.message.clone().unwrap();
    assert!(message.starts_with("undid add"), "{message}");
    assert_eq!(
        stored_messages(&url, &id).await,
        before,
        "one undo takes the message and the policy's trim back"
    );

    // Delete all messages of both roles, after the form and the confirmation (which counts
    // them); then undo.
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Enter);
    settle(
        &mut app,
        |a| matches!(&a.state.overlay, Overlay::Confirm(c) if !c.question.contains("counting")),
    )
    .await;
    // The 26 messages the memory had before the add (the add was undone).
    let shown = screen(&mut app);
    assert!(shown.contains("Delete 26 messages from"), "{shown}");
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, wrote).await;
    let message = app.state.message.clone().unwrap();
    assert!(message.starts_with("deleted 26 messages"), "{message}");
    assert!(stored_messages(&url, &id).await.is_empty());
    ask_undo(&mut app).await;
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, wrote).await;
    assert_eq!(stored_messages(&url, &id).await, before);
}

/// `u`, and the confirmation that opens once a change to undo is found.
async fn ask_undo(app: &mut App) {
    press(app, KeyCode::Char('u'));
    settle(app, |a| matches!(a.state.overlay, Overlay::Confirm(_))).await;
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_opens_a_conversation_by_its_short_id() {
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    let full = app.state.list.rows[0].id.clone();
    let short = full.split('-').next().unwrap().to_owned();
    assert!(
        screen(&mut app).contains(&short),
        "the list shows the short id"
    );

    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, &format!("conv {short}"));
    press(&mut app, KeyCode::Enter);
    let settled = |a: &App| {
        a.state
            .conversation
            .as_ref()
            .is_some_and(|c| c.status != LoadStatus::Loading)
    };
    settle(&mut app, settled).await;
    let conversation = app.state.conversation.as_ref().unwrap();
    assert_eq!(conversation.status, LoadStatus::Loaded);
    assert_eq!(conversation.id, full, "the prefix resolves to the whole id");

    // A failed lookup says why and stops the spinner.
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "conv zzzz");
    press(&mut app, KeyCode::Enter);
    settle(&mut app, settled).await;
    let conversation = app.state.conversation.as_ref().unwrap();
    assert!(
        matches!(&conversation.status, LoadStatus::Failed(e) if e.contains("no conversation zzzz")),
        "{:?}",
        conversation.status
    );
    settle(&mut app, |a| !a.state.busy()).await;
    assert!(!screen(&mut app).contains("working"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_view_scans_opens_a_finding_and_cancels() {
    let root = tempfile::tempdir().unwrap();
    let mut app = app(root.path()).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;

    press(&mut app, KeyCode::Char('D'));
    assert_eq!(app.state.screen, Screen::Doctor);
    let done = |a: &App| a.state.doctor.as_ref().is_some_and(|d| !d.is_running());
    settle(&mut app, done).await;
    let doctor = app.state.doctor.as_ref().unwrap();
    assert_eq!(doctor.status, ScanStatus::Finished);
    assert!(doctor.scanned > 0 && doctor.total.is_some());
    // The demo's stories hold problems for doctor to find, most about a conversation.
    let (index, conversation) = doctor
        .findings
        .iter()
        .enumerate()
        .find_map(|(i, f)| Some((i, f.conversation_id()?.to_owned())))
        .expect("a finding about a conversation");
    let text = screen(&mut app);
    assert!(text.contains("Scanned "), "{text}");
    for _ in 0..index {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Conversation);
    assert_eq!(app.state.conversation.as_ref().unwrap().id, conversation);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state.screen, Screen::Doctor);

    // r scans again; esc stops that scan at once and says where.
    press(&mut app, KeyCode::Char('r'));
    assert!(app.state.doctor.as_ref().unwrap().is_running());
    press(&mut app, KeyCode::Esc);
    let doctor = app.state.doctor.as_ref().unwrap();
    assert_eq!(doctor.status, ScanStatus::Cancelled);
    assert!(screen(&mut app).contains("Scan cancelled after"));
    press(&mut app, KeyCode::Char('q'));
    assert_eq!(app.state.screen, Screen::Conversations);
    assert!(!app.state.quit && app.state.doctor.is_none());
}

//! `:open URL` in the TUI: another database in place of the open one, without quitting. Real
//! jobs over real databases (memscope's demo and a LangGraph checkpoint file); keys in, state
//! and screens out.

mod app_driver;

use std::path::Path;
use std::process::Command;

use app_driver::{app, press, screen, settle};
use crossterm::event::KeyCode;
use memscope::demo::write_langgraph_demo;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::{ConversationScreens, LoadStatus, Screen};

/// memscope's demo database in `root`, made by the real binary.
fn memscope_demo(root: &Path) -> String {
    let url = format!("sqlite://{}", root.join("memscope.db").display());
    let made = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--db", &url, "demo"])
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env_remove("MEMSCOPE_DATABASE_URL")
        .output()
        .expect("memscope runs");
    assert!(made.status.success(), "{made:?}");
    url
}

fn command(app: &mut App, text: &str) {
    press(app, KeyCode::Char(':'));
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

async fn opened(app: &mut App) {
    settle(app, |a| a.state.opening.is_none()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_switches_database_without_quitting_and_keeps_the_open_one_on_failure() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    write_langgraph_demo(&file, 7).await.unwrap();
    let langgraph = format!("sqlite://{}", file.display());
    let memscope = memscope_demo(root.path());

    let mut app = app(&langgraph, root.path(), Access::Auto).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    assert!(
        app.state.read_only,
        "a database LangGraph wrote opens read-only"
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Session);

    // Another database: every tab starts over on it, as at start-up.
    command(
        &mut app,
        &format!("open {}", root.path().join("memscope.db").display()),
    );
    assert!(app.state.busy(), "it opens off the frame");
    opened(&mut app).await;
    assert_eq!(app.state.database, memscope);
    assert_eq!(
        app.state.conversation_screens,
        ConversationScreens::TurnTree
    );
    assert!(!app.state.read_only, "memscope's own database is writable");
    assert_eq!(app.state.screen, Screen::Conversations);
    assert!(app.state.session.is_none() && app.state.checkpoints.is_none());
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    assert!(
        !app.state.list.rows.is_empty(),
        "its conversations are listed"
    );
    let text = screen(&mut app);
    assert!(text.contains("memscope.db"), "the header names it: {text}");
    assert!(
        app.state
            .message
            .as_deref()
            .unwrap()
            .starts_with("opened sqlite://"),
        "{:?}",
        app.state.message
    );
    // The jobs run on it: a conversation of the new database opens.
    press(&mut app, KeyCode::Enter);
    let loaded = |a: &App| {
        a.state
            .conversation
            .as_ref()
            .is_some_and(|c| c.status != LoadStatus::Loading)
    };
    settle(&mut app, loaded).await;
    assert_eq!(
        app.state.conversation.as_ref().unwrap().status,
        LoadStatus::Loaded
    );

    // A database that cannot be opened: the error, and the open one stays as it was.
    let missing = root.path().join("nowhere").join("x.db");
    command(&mut app, &format!("open {}", missing.display()));
    opened(&mut app).await;
    assert_eq!(app.state.database, memscope);
    assert_eq!(app.state.screen, Screen::Conversation);
    let message = app.state.message.clone().unwrap();
    assert!(
        message.starts_with("could not open") && message.ends_with(&format!("still on {memscope}")),
        "{message}"
    );

    // Back to the LangGraph file: read-only again, as memscope was started without --write.
    command(&mut app, &format!("open {langgraph}"));
    opened(&mut app).await;
    assert_eq!(
        app.state.conversation_screens,
        ConversationScreens::CheckpointThread
    );
    assert!(app.state.read_only);
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    assert!(!app.state.list.rows.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_write_another_database_opens_writable_as_at_start_up() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    write_langgraph_demo(&file, 7).await.unwrap();
    let langgraph = format!("sqlite://{}", file.display());
    let memscope = memscope_demo(root.path());
    let mut app = app(&memscope, root.path(), Access::Write).await;
    app.set_access(Access::Write);
    command(&mut app, &format!("open {langgraph}"));
    opened(&mut app).await;
    assert_eq!(app.state.database, langgraph);
    assert!(!app.state.read_only, "--write opens it writable");
}

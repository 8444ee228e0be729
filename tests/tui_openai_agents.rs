//! The TUI on an OpenAI Agents SDK session file (the demo's, written as the SDK writes it), key
//! by key with its jobs run: the conversations tab lists the sessions with the source's own
//! columns, and a session opens with what the Runner sends the model, under the budget, with
//! no message-window keys (the SDK keeps none).

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::demo::write_openai_agents_demo;
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::{LoadStatus, Screen};
use memscope::tui::theme::Theme;
use memscope::tui::update::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

async fn settle(app: &mut App, done: impl Fn(&App) -> bool) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while !done(app) {
            assert!(app.next_job().await, "the job channel closed");
        }
    })
    .await
    .expect("the jobs finished in time");
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 32)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

#[tokio::test]
async fn the_sessions_list_and_one_opens_with_what_the_runner_sends() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("sessions.db");
    write_openai_agents_demo(&file, 42).await.unwrap();
    let url = format!("sqlite://{}", file.display());
    let dirs = Dirs {
        data: home.path().join("data"),
        config: home.path().join("config"),
    };
    let overrides = Overrides {
        database_url: Some(url.clone()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let store = Store::open(&url, Access::Auto).await.unwrap();
    let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
    settle(&mut app, |a| a.state.sessions.status == LoadStatus::Loaded).await;
    assert!(
        app.state.sessions.rows.len() >= 3,
        "{:?}",
        app.state.sessions.rows
    );
    let text = screen(&mut app);
    assert!(text.contains("1 Sessions"), "{text}");
    assert!(text.contains("Branches"), "the source's own column: {text}");

    let first = app.state.sessions.rows[0].id.clone();
    app.handle(Event::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
    assert_eq!(app.state.screen, Screen::Session);
    settle(&mut app, |a| {
        a.state
            .session
            .as_ref()
            .is_some_and(|s| s.budget_status == LoadStatus::Loaded)
    })
    .await;
    let session = app.state.session.as_ref().unwrap();
    assert_eq!(session.key.id, first);
    let view = session.view.as_ref().unwrap();
    assert!(!view.messages.is_empty());
    let budget = session.budget.as_ref().unwrap();
    // The shown items are the ones the Runner sends, each counted once.
    assert_eq!(budget.view.history.messages.len(), view.messages.len());
    let text = screen(&mut app);
    assert!(
        !text.contains("n_messages"),
        "the SDK keeps no window: {text}"
    );
    assert!(text.contains("Budget"), "{text}");
    app.shutdown().await;
}

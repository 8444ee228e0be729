//! A source that is only its folder and its registry lines (the test source) in the TUI, driven
//! by keys with its jobs run: the conversations tab lists its logs under its own noun and
//! opens one with what its model is fed, as `history` reads it.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::App;
use super::state::{LoadStatus, Screen};
use super::theme::Theme;
use super::update::Event;
use crate::config::{self, Dirs, Overrides};
use crate::sources::fixture::tests::log_store;

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
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

#[tokio::test]
async fn the_test_source_lists_its_logs_and_opens_one_with_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = log_store(dir.path()).await;
    let overrides = Overrides {
        database_url: Some(store.url().to_owned()),
        ..Overrides::default()
    };
    let dirs = Dirs {
        data: dir.path().join("data"),
        config: dir.path().join("config"),
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    let ids: Vec<&str> = app.state.list.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["support", "billing"]);
    let text = screen(&mut app);
    assert!(text.contains("Logs · page 1"), "{text}");
    assert!(
        text.contains("1 Logs"),
        "tab 1 says what the database holds: {text}"
    );

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
    let shown: Vec<&str> = session
        .view
        .as_ref()
        .unwrap()
        .messages
        .iter()
        .map(|m| m.message.id.as_str())
        .collect();
    assert_eq!(shown, ["m1", "m2", "m3"]);
    assert_eq!(session.is_fed("m3"), Some(true));
    let text = screen(&mut app);
    assert!(text.contains("CSV, with 2 million rows"), "{text}");
    assert!(text.contains("log support"), "{text}");
}

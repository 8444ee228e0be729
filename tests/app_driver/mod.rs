//! The whole app without a terminal, for tests that drive it by keys over a real database:
//! opened on a URL, job results applied until a condition holds, screens drawn to text.

// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::LoadStatus;
use memscope::tui::theme::Theme;
use memscope::tui::update::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The app on the database at `url`, with its data and config directories under `root`.
pub async fn app(url: &str, root: &Path, access: Access) -> App {
    let dirs = Dirs {
        data: root.join("data"),
        config: root.join("config"),
    };
    app_in(url, dirs, access).await
}

/// The app on the database at `url` with its data and config directories `dirs`.
pub async fn app_in(url: &str, dirs: Dirs, access: Access) -> App {
    let overrides = Overrides {
        database_url: Some(url.to_owned()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let store = Store::open(&resolved.database_url, access).await.unwrap();
    App::new(&resolved, store, None, Theme::monochrome()).unwrap()
}

/// Applies job results until `done` holds.
pub async fn settle(app: &mut App, done: impl Fn(&App) -> bool) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while !done(app) {
            assert!(app.next_job().await, "the job channel closed");
        }
    })
    .await
    .expect("the jobs finished in time");
}

pub fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Waits until the sessions tab has its list.
pub async fn sessions_listed(app: &mut App) {
    settle(app, |a| a.state.list.status == LoadStatus::Loaded).await;
}

/// Waits until the open session is read and its budget counted.
pub async fn session_opened(app: &mut App) {
    settle(app, |a| {
        a.state.session.as_ref().is_some_and(|s| {
            s.status == LoadStatus::Loaded && s.budget_status == LoadStatus::Loaded
        })
    })
    .await;
}

/// `E`, until the status line says where the bundle went: that file, and the bundle read back
/// from it.
pub async fn exported(app: &mut App) -> (PathBuf, serde_json::Value) {
    press(app, KeyCode::Char('E'));
    settle(app, |a| a.state.exporting.is_none()).await;
    let message = app.state.message.clone().unwrap_or_default();
    let path = message
        .strip_prefix("exported to ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("the conversation exports: {message}"));
    let bundle = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (PathBuf::from(path), bundle)
}

/// The screen as text, drawn at 120×32.
pub fn screen(app: &mut App) -> String {
    screen_sized(app, 120, 32)
}

/// The screen as text, drawn at `width`×`height`.
pub fn screen_sized(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

//! The TUI, key by key, on the database of chat sessions Langflow built: the conversations tab
//! lists one row per (flow, session), a session opens with its messages, and the budget panel's
//! fed messages are, for every `n_messages` the keys reach, the list Langflow's
//! `aget_agent_chat_history` returned; `T` and the doctor view work on it.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::tui::App;
use memscope::tui::state::doctor::ScanStatus;
use memscope::tui::state::{LoadStatus, Overlay, Screen};
use memscope::tui::theme::Theme;
use memscope::tui::update::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;

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

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 32)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

fn oracle_ids(built: &Sessions, name: &str) -> Vec<String> {
    let case = built.oracle["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no oracle case {name}"));
    case["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn fed(app: &App) -> Vec<String> {
    app.state
        .session
        .as_ref()
        .unwrap()
        .budget
        .as_ref()
        .unwrap()
        .view
        .history
        .messages
        .iter()
        .map(|m| m.source_id.clone())
        .collect()
}

fn budget_counted(app: &App) -> bool {
    app.state
        .session
        .as_ref()
        .is_some_and(|s| s.budget_status == LoadStatus::Loaded)
}

async fn open_app(built: &Sessions, home: &Path) -> App {
    let dirs = Dirs {
        data: home.join("data"),
        config: home.join("config"),
    };
    let overrides = Overrides {
        database_url: Some(built.url.clone()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let store = Store::open(&resolved.database_url, Access::Auto)
        .await
        .unwrap();
    App::new(&resolved, store, None, Theme::monochrome()).unwrap()
}

/// Selects the list's row of `session` in `flow`.
fn select_row(app: &mut App, session: &str, flow: &str) {
    let at = app
        .state
        .list
        .rows
        .iter()
        .position(|r| r.id == session && r.title.as_deref() == Some(flow))
        .unwrap_or_else(|| panic!("no row {session} of {flow}"));
    press(app, KeyCode::Char('g'));
    for _ in 0..at {
        press(app, KeyCode::Char('j'));
    }
}

fn tui_feeds_what_langflow_reads(built: &Sessions, _store: &Store) {
    let home = tempfile::tempdir().unwrap();
    block_on(async {
        let mut app = open_app(built, home.path()).await;
        assert_eq!(app.state.screen, Screen::Conversations);
        settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
        let shared: Vec<&str> = app
            .state
            .list
            .rows
            .iter()
            .filter(|r| r.id == "New Session 0")
            .filter_map(|r| r.title.as_deref())
            .collect();
        assert_eq!(shared.len(), 3, "one row per flow: {shared:?}");
        let text = screen(&mut app);
        assert!(text.contains("Sessions · page 1"), "{text}");
        assert!(
            text.contains("Support Chat") && text.contains("history-owner"),
            "{text}"
        );

        // `/` searches message text too.
        press(&mut app, KeyCode::Char('/'));
        typed(&mut app, "TIED 1");
        press(&mut app, KeyCode::Enter);
        settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
        let found: Vec<_> = app
            .state
            .list
            .rows
            .iter()
            .map(|r| r.title.clone())
            .collect();
        assert_eq!(found, vec![Some("Support Chat".to_owned())]);
        press(&mut app, KeyCode::Esc);
        settle(&mut app, |a| {
            a.state.list.status == LoadStatus::Loaded && a.state.list.rows.len() > 1
        })
        .await;

        // The long session: the Agent's default window, then 30 more.
        select_row(&mut app, "long", "Sales Chat");
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.state.screen, Screen::Session);
        settle(&mut app, budget_counted).await;
        assert_eq!(fed(&app), oracle_ids(built, "long default"));
        let text = screen(&mut app);
        assert!(
            text.contains("Langflow keeps no regeneration tree"),
            "{text}"
        );
        assert!(
            text.contains("left out: 30 messages older than the newest n_messages"),
            "{text}"
        );
        for _ in 0..3 {
            press(&mut app, KeyCode::Char('>'));
        }
        settle(&mut app, budget_counted).await;
        assert_eq!(app.state.session.as_ref().unwrap().window, Some(130));
        assert_eq!(fed(&app), oracle_ids(built, "long window 130"));

        // T previews a trim of exactly what is fed.
        press(&mut app, KeyCode::Char('T'));
        assert_eq!(app.state.overlay, Overlay::Trim);
        assert_eq!(app.state.trim.as_ref().unwrap().messages_before(), 130);
        press(&mut app, KeyCode::Esc);
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.state.screen, Screen::Conversations);

        // The shared session of Support Chat: error text fed and flagged, other flows counted.
        select_row(&mut app, "New Session 0", "Support Chat");
        press(&mut app, KeyCode::Enter);
        settle(&mut app, budget_counted).await;
        assert_eq!(fed(&app), oracle_ids(built, "support default"));
        let text = screen(&mut app);
        assert!(
            text.contains("of other flows using this session id"),
            "{text}"
        );
        assert!(
            text.contains("error-category text without the error flag"),
            "{text}"
        );
        for _ in 0..10 {
            press(&mut app, KeyCode::Char('<'));
        }
        settle(&mut app, budget_counted).await;
        assert_eq!(fed(&app), oracle_ids(built, "support memory off"));
        assert!(screen(&mut app).contains("Nothing is fed to the model"));
        press(&mut app, KeyCode::Esc);

        // The doctor view scans the database and opens a finding's session of its flow.
        press(&mut app, KeyCode::Char('D'));
        settle(&mut app, |a| {
            a.state
                .doctor
                .as_ref()
                .is_some_and(|d| d.status == ScanStatus::Finished)
        })
        .await;
        let text = screen(&mut app);
        assert!(
            text.contains("longer_than_window") || text.contains("newest 100"),
            "{text}"
        );
        let long = app
            .state
            .doctor
            .as_ref()
            .unwrap()
            .findings
            .iter()
            .position(|f| f.kind() == "longer_than_window")
            .expect("the long session's finding");
        press(&mut app, KeyCode::Char('g'));
        for _ in 0..long {
            press(&mut app, KeyCode::Char('j'));
        }
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.state.screen, Screen::Session);
        settle(&mut app, budget_counted).await;
        assert_eq!(fed(&app), oracle_ids(built, "long default"));
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.state.screen, Screen::Doctor);
        app.shutdown().await;
    });
}

#[test]
fn langflow_tui_feeds_what_langflow_reads_sqlite() {
    on_sessions("tui_sessions", true, tui_feeds_what_langflow_reads);
}

#[test]
fn langflow_tui_feeds_what_langflow_reads_postgres() {
    on_sessions("tui_sessions", false, tui_feeds_what_langflow_reads);
}

//! The TUI on a Google ADK session file (the demo's, written as SqliteSessionService writes it),
//! key by key with its jobs run: the conversations tab lists the sessions with their app, user
//! and agents, and a session opens with every stored event beside the agent that wrote it, and
//! the budget of the contents ADK sends the continuing agent's model; `a` switches whose view
//! (which agent's model) the budget shows.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::demo::write_adk_demo;
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
    let mut terminal = Terminal::new(TestBackend::new(140, 40)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

#[tokio::test]
async fn the_sessions_list_with_app_and_user_and_one_opens_with_each_events_agent() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("session.db");
    write_adk_demo(&file, 42).await.unwrap();
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
    assert_eq!(
        app.state.sessions.rows.len(),
        3,
        "{:?}",
        app.state.sessions.rows
    );
    let text = screen(&mut app);
    assert!(
        text.contains("memscope-demo") && text.contains("operator"),
        "{text}"
    );

    // The newest session is the long one; the escalation is the second from the top.
    let escalation = app
        .state
        .sessions
        .rows
        .iter()
        .position(|r| r.id == "escalation")
        .unwrap();
    for _ in 0..escalation {
        app.handle(Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
    }
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
    assert_eq!(session.key.id, "escalation");
    let view = session.view.as_ref().unwrap();
    let senders: Vec<&str> = view.messages.iter().map(|m| m.sender.as_str()).collect();
    assert!(
        senders.contains(&"coordinator") && senders.contains(&"specialist"),
        "{senders:?}"
    );
    let budget = session.budget.as_ref().unwrap();
    assert_eq!(
        budget.view.history.messages.len(),
        view.messages.len(),
        "every event reaches the specialist: the coordinator's two quoted"
    );
    assert!(budget.rule.contains("agent specialist"), "{}", budget.rule);
    let text = screen(&mut app);
    assert!(text.contains("specialist"), "{text}");
    assert!(text.contains("Budget"), "{text}");

    // `v`: the coordinator's view, where its own transfer goes as stored and the specialist's
    // work is quoted; again, back to the specialist's.
    app.handle(Event::Key(KeyEvent::new(
        KeyCode::Char('v'),
        KeyModifiers::NONE,
    )));
    settle(&mut app, |a| {
        a.state.session.as_ref().is_some_and(|s| {
            s.status == LoadStatus::Loaded && s.budget_status == LoadStatus::Loaded
        })
    })
    .await;
    let budget = app.state.session.as_ref().unwrap().budget.clone().unwrap();
    assert!(budget.rule.contains("agent coordinator"), "{}", budget.rule);
    let roles: Vec<_> = budget
        .view
        .history
        .messages
        .iter()
        .map(|m| m.message.role)
        .collect();
    assert_eq!(
        roles
            .iter()
            .filter(|r| **r == memscope::memory::model::Role::Tool)
            .count(),
        1,
        "the coordinator's own transfer response; the specialist's lookup is quoted: {roles:?}"
    );
    let text = screen(&mut app);
    assert!(text.contains("agent coordinator (1 of 2)"), "{text}");
    app.handle(Event::Key(KeyEvent::new(
        KeyCode::Char('v'),
        KeyModifiers::NONE,
    )));
    settle(&mut app, |a| {
        a.state.session.as_ref().is_some_and(|s| {
            s.status == LoadStatus::Loaded && s.budget_status == LoadStatus::Loaded
        })
    })
    .await;
    let budget = app.state.session.as_ref().unwrap().budget.as_ref().unwrap();
    assert!(budget.rule.contains("agent specialist"), "{}", budget.rule);
    app.shutdown().await;
}

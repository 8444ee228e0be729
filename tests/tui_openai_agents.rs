//! The TUI on an OpenAI Agents SDK session file (the demo's, written as the SDK writes it), key
//! by key with its jobs run: the conversations tab lists the sessions with the source's own
//! columns, and a session opens with what the Runner sends the model, under the budget, with
//! no message-window keys (the SDK keeps none).

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::demo::write_openai_agents_demo;
use memscope::sources::opened::OpenConversation;
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

/// The TUI on the demo's session file, its list loaded.
async fn demo_app(home: &std::path::Path) -> App {
    let file = home.join("sessions.db");
    write_openai_agents_demo(&file, 42).await.unwrap();
    let url = format!("sqlite://{}", file.display());
    let dirs = Dirs {
        data: home.join("data"),
        config: home.join("config"),
    };
    let overrides = Overrides {
        database_url: Some(url.clone()),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let store = Store::open(&url, Access::Auto).await.unwrap();
    let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
    settle(&mut app, |a| a.state.sessions.status == LoadStatus::Loaded).await;
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Waits until the open session's budget is counted.
async fn opened(app: &mut App) {
    settle(app, |a| {
        a.state.session.as_ref().is_some_and(|s| {
            s.status == LoadStatus::Loaded && s.budget_status == LoadStatus::Loaded
        })
    })
    .await;
}

#[tokio::test]
async fn the_sessions_list_and_one_opens_with_what_the_runner_sends() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app(home.path()).await;
    assert!(
        app.state.sessions.rows.len() >= 3,
        "{:?}",
        app.state.sessions.rows
    );
    let text = screen(&mut app);
    assert!(text.contains("1 Sessions"), "{text}");
    assert!(text.contains("Branches"), "the source's own column: {text}");

    let first = app.state.sessions.rows[0].id.clone();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Session);
    opened(&mut app).await;
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
    // A reasoning item is marked as what it is, not as something the assistant said.
    assert!(
        open_view(&app)
            .messages
            .iter()
            .any(|m| m.sender == "reasoning"),
        "{:?}",
        open_view(&app).messages
    );
    assert!(text.contains("reasoning"), "{text}");
    app.shutdown().await;
}

/// The open session as read.
fn open_view(app: &App) -> &OpenConversation {
    app.state.session.as_ref().unwrap().view.as_ref().unwrap()
}

/// `v` on a session with branches opens its next branch, as the Runner would send it there,
/// and comes back to `main`; a session with one history does not offer the key.
#[tokio::test]
async fn v_switches_a_branched_session_to_its_next_branch() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app(home.path()).await;
    let row = |app: &App, id: &str| app.state.sessions.rows.iter().position(|r| r.id == id);
    let plain = row(&app, "trip-planner").unwrap();
    for _ in 0..plain {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    opened(&mut app).await;
    assert!(open_view(&app).views.is_none());
    assert!(
        !screen(&mut app).contains("next view"),
        "one history, no switch"
    );
    press(&mut app, KeyCode::Esc);
    for _ in 0..plain {
        press(&mut app, KeyCode::Up);
    }
    assert_eq!(row(&app, "branched"), Some(0));

    press(&mut app, KeyCode::Enter);
    opened(&mut app).await;
    let ids = |app: &App| -> Vec<String> {
        open_view(app)
            .messages
            .iter()
            .map(|m| m.message.id.clone())
            .collect()
    };
    let main_items = ids(&app);
    assert!(open_view(&app).heading.contains("branch main"));
    assert!(
        screen(&mut app).contains("v next view"),
        "the hint bar offers it"
    );
    let views = open_view(&app).views.clone().unwrap();
    assert_eq!(views.names.len(), 2);
    assert_eq!(views.names[0], "main");
    let other = views.names[1].clone();

    press(&mut app, KeyCode::Char('v'));
    opened(&mut app).await;
    let session = app.state.session.as_ref().unwrap();
    assert_eq!(session.key.view.as_deref(), Some(other.as_str()));
    assert_ne!(ids(&app), main_items, "the branch feeds its own items");
    let heading = &open_view(&app).heading;
    assert!(heading.contains(&format!("branch {other}")), "{heading}");
    let text = screen(&mut app);
    assert!(text.contains(&format!("branch {other} (2 of 2)")), "{text}");

    press(&mut app, KeyCode::Char('v'));
    opened(&mut app).await;
    let session = app.state.session.as_ref().unwrap();
    assert_eq!(session.key.view.as_deref(), Some("main"));
    assert_eq!(ids(&app), main_items);
    app.shutdown().await;
}

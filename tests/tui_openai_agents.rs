//! The TUI on an OpenAI Agents SDK session file (the demo's, written as the SDK writes it), key
//! by key with its jobs run: the conversations tab lists the sessions with the source's own
//! columns, and a session opens with what the Runner sends the model, under the budget, with
//! no message-window keys (the SDK keeps none).

mod app_driver;

use app_driver::{exported, press, screen, session_opened, sessions_listed, settle};
use crossterm::event::KeyCode;
use memscope::demo::write_openai_agents_demo;
use memscope::sources::opened::OpenConversation;
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::action::Action;
use memscope::tui::state::{LoadStatus, Overlay, Screen};

/// The TUI on the demo's session file, its list loaded.
async fn demo_app(home: &std::path::Path) -> App {
    demo_app_with(home, Access::Auto).await
}

/// The TUI on the demo's session file opened with `access`, its list loaded.
async fn demo_app_with(home: &std::path::Path, access: Access) -> App {
    let file = home.join("sessions.db");
    write_openai_agents_demo(&file, 42).await.unwrap();
    let url = format!("sqlite://{}", file.display());
    let mut app = app_driver::app(&url, home, access).await;
    sessions_listed(&mut app).await;
    app
}

#[tokio::test]
async fn the_sessions_list_and_one_opens_with_what_the_runner_sends() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app(home.path()).await;
    assert!(app.state.list.rows.len() >= 3, "{:?}", app.state.list.rows);
    let text = screen(&mut app);
    assert!(text.contains("1 Sessions"), "{text}");
    assert!(text.contains("Branches"), "the source's own column: {text}");

    let first = app.state.list.rows[0].id.clone();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Session);
    session_opened(&mut app).await;
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
    let row = |app: &App, id: &str| app.state.list.rows.iter().position(|r| r.id == id);
    let plain = row(&app, "trip-planner").unwrap();
    for _ in 0..plain {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    session_opened(&mut app).await;
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
    session_opened(&mut app).await;
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
    session_opened(&mut app).await;
    let session = app.state.session.as_ref().unwrap();
    assert_eq!(session.key.view.as_deref(), Some(other.as_str()));
    assert_ne!(ids(&app), main_items, "the branch feeds its own items");
    let heading = &open_view(&app).heading;
    assert!(heading.contains(&format!("branch {other}")), "{heading}");
    let text = screen(&mut app);
    assert!(text.contains(&format!("branch {other} (2 of 2)")), "{text}");

    press(&mut app, KeyCode::Char('v'));
    session_opened(&mut app).await;
    let session = app.state.session.as_ref().unwrap();
    assert_eq!(session.key.view.as_deref(), Some("main"));
    assert_eq!(ids(&app), main_items);
    app.shutdown().await;
}

/// Stored rows of `session` in the demo file under `home`.
async fn rows_of(home: &std::path::Path, session: &str) -> usize {
    let url = format!("sqlite://{}", home.join("sessions.db").display());
    let store = Store::open(&url, Access::ReadOnly).await.unwrap();
    let query = memscope::sources::conversation::ListQuery {
        search: None,
        after: None,
        limit: 50,
        options: Default::default(),
    };
    let listed = memscope::inspect::listing::list_conversations(&store, &query, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .await
    .unwrap();
    let row = listed.conversations.into_iter().find(|c| c.id == session);
    store.close().await;
    row.and_then(|r| r.messages).unwrap() as usize
}

/// `A` in a session's trim preview reads what the trim would delete and asks with it; yes
/// deletes the older rows (archived), and `u` puts them back, each asked first.
#[tokio::test]
async fn a_session_trim_is_applied_and_undone_from_the_tui() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app_with(home.path(), Access::Write).await;
    let before = rows_of(home.path(), "trip-planner").await;
    let at = app
        .state
        .list
        .rows
        .iter()
        .position(|r| r.id == "trip-planner")
        .unwrap();
    for _ in 0..at {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    session_opened(&mut app).await;
    app.state.settings.budget = 60;
    press(&mut app, KeyCode::Char('T'));
    assert_eq!(app.state.overlay, Overlay::Trim);
    press(&mut app, KeyCode::Char('A'));
    settle(&mut app, |a| matches!(a.state.overlay, Overlay::Confirm(_))).await;
    let Overlay::Confirm(confirm) = &app.state.overlay else {
        unreachable!()
    };
    assert!(
        confirm
            .question
            .contains("Trim session trip-planner to the newest items within 60 tokens"),
        "{}",
        confirm.question
    );
    assert!(
        confirm.question.contains("undo (u)"),
        "{}",
        confirm.question
    );
    press(&mut app, KeyCode::Char('y'));
    let said = |a: &App, what: &str| a.state.message.as_deref().is_some_and(|m| m.contains(what));
    settle(&mut app, |a| said(a, "deleted")).await;
    let after = rows_of(home.path(), "trip-planner").await;
    assert!(after < before, "{after} of {before} rows left");
    let archives = home.path().join("data").join("trim-archives");
    assert_eq!(std::fs::read_dir(&archives).unwrap().count(), 1);

    session_opened(&mut app).await;
    assert!(
        app.state.offers(Action::Undo),
        "an open session offers its undo"
    );
    press(&mut app, KeyCode::Char('u'));
    assert!(matches!(app.state.overlay, Overlay::Confirm(_)));
    press(&mut app, KeyCode::Char('y'));
    settle(&mut app, |a| said(a, "put back")).await;
    assert_eq!(rows_of(home.path(), "trip-planner").await, before);
    app.shutdown().await;
}

/// Read-only, neither the trim nor its undo is asked for: each says how to write.
#[tokio::test]
async fn a_read_only_session_is_never_trimmed() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app(home.path()).await;
    press(&mut app, KeyCode::Enter);
    session_opened(&mut app).await;
    press(&mut app, KeyCode::Char('T'));
    press(&mut app, KeyCode::Char('A'));
    assert_eq!(app.state.overlay, Overlay::Trim);
    assert!(app.state.message.as_deref().unwrap().contains("--write"));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('u'));
    assert_eq!(app.state.overlay, Overlay::None);
    assert!(app.state.message.as_deref().unwrap().contains("--write"));
    app.shutdown().await;
}

/// `t` on an advanced session opened on its second branch: the tree `thread --branch` draws, that
/// branch's turns marked (its shared first turn too) and main's own turns not; `E` back in the
/// session exports that branch.
#[tokio::test]
async fn t_draws_the_branch_that_is_open_and_e_exports_it() {
    let home = tempfile::tempdir().unwrap();
    let mut app = demo_app(home.path()).await;
    assert_eq!(app.state.list.rows[0].id, "branched");
    press(&mut app, KeyCode::Enter);
    session_opened(&mut app).await;
    press(&mut app, KeyCode::Char('v'));
    session_opened(&mut app).await;
    let branch = app
        .state
        .session
        .as_ref()
        .unwrap()
        .key
        .view
        .clone()
        .unwrap();
    assert_ne!(branch, "main");

    press(&mut app, KeyCode::Char('t'));
    settle(&mut app, |a| {
        a.state
            .tree
            .as_ref()
            .is_some_and(|t| t.status == LoadStatus::Loaded)
    })
    .await;
    let tree = app.state.tree.as_ref().unwrap().document.clone().unwrap();
    let marked = |id: &str| tree.nodes.iter().find(|n| n.id == id).unwrap().on_thread;
    assert!(marked("main:1"), "the turn both branches share");
    assert!(!marked("main:2") && !marked("main:3"), "{:?}", tree.thread);
    assert!(marked(&format!("{branch}:2")), "{:?}", tree.thread);
    let said = format!("the path of {branch} marked");
    assert!(
        tree.header.iter().any(|l| l.contains(&said)),
        "{:?}",
        tree.header
    );
    let text = screen(&mut app);
    assert!(text.contains(&format!("[{branch}]")), "{text}");

    press(&mut app, KeyCode::Esc);
    let (_, bundle) = exported(&mut app).await;
    assert_eq!(bundle["thread"]["thread"], serde_json::json!(tree.thread));
    assert_eq!(bundle["history"]["extra"]["branch"], branch.as_str());
    app.shutdown().await;
}

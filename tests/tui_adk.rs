//! The TUI on a Google ADK session file (the demo's, written as SqliteSessionService writes it),
//! key by key with its jobs run: the conversations tab lists the sessions with their app, user
//! and agents, and a session opens with every stored event beside the agent that wrote it, and
//! the budget of the contents ADK sends the continuing agent's model; `a` switches whose view
//! (which agent's model) the budget shows.

mod app_driver;

use app_driver::{exported, press, session_opened, sessions_listed, settle};
use crossterm::event::KeyCode;
use memscope::demo::write_adk_demo;
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::{LoadStatus, Screen};

/// The screen as text, wide enough for the sessions' app, user and agents columns.
fn screen(app: &mut App) -> String {
    app_driver::screen_sized(app, 140, 40)
}

/// The TUI on a new demo session file in `home`, its list loaded; and the file's URL.
async fn demo_app(home: &std::path::Path) -> (App, String) {
    let file = home.join("session.db");
    write_adk_demo(&file, 42).await.unwrap();
    let url = format!("sqlite://{}", file.display());
    let mut app = app_driver::app(&url, home, Access::Auto).await;
    sessions_listed(&mut app).await;
    (app, url)
}

/// Opens session `id` of the list and waits for its budget.
async fn open_session(app: &mut App, id: &str) {
    let at = app.state.list.rows.iter().position(|r| r.id == id);
    for _ in 0..at.expect("the session is listed") {
        press(app, KeyCode::Down);
    }
    press(app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Session);
    session_opened(app).await;
}

#[tokio::test]
async fn the_sessions_list_with_app_and_user_and_one_opens_with_each_events_agent() {
    let home = tempfile::tempdir().unwrap();
    let (mut app, _) = demo_app(home.path()).await;
    assert_eq!(app.state.list.rows.len(), 3, "{:?}", app.state.list.rows);
    let text = screen(&mut app);
    assert!(
        text.contains("memscope-demo") && text.contains("operator"),
        "{text}"
    );

    // The newest session is the long one; the escalation is the second from the top.
    open_session(&mut app, "escalation").await;
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
    press(&mut app, KeyCode::Char('v'));
    session_opened(&mut app).await;
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
    press(&mut app, KeyCode::Char('v'));
    session_opened(&mut app).await;
    let budget = app.state.session.as_ref().unwrap().budget.as_ref().unwrap();
    assert!(budget.rule.contains("agent specialist"), "{}", budget.rule);
    app.shutdown().await;
}

/// `t` in the coordinator's view of the escalation: the tree `thread --agent coordinator` draws
/// (the specialist's events quoted, not the continuing specialist's view), each invocation with its agents and events; `L`, enter and esc
/// move in it, and `E` back in the session exports that same view.
#[tokio::test]
async fn t_opens_the_tree_of_the_view_that_is_open_and_e_exports_that_view() {
    use memscope::inspect::tree::thread;
    use memscope::sources::conversation::{SourceOptions, TreeRequest};
    use memscope::tui::state::Overlay;

    let home = tempfile::tempdir().unwrap();
    let (mut app, url) = demo_app(home.path()).await;
    open_session(&mut app, "escalation").await;
    press(&mut app, KeyCode::Char('v'));
    session_opened(&mut app).await;
    assert_eq!(
        app.state.session.as_ref().unwrap().key.view.as_deref(),
        Some("coordinator")
    );

    press(&mut app, KeyCode::Char('t'));
    assert_eq!(app.state.screen, Screen::Tree);
    settle(&mut app, |a| {
        a.state
            .tree
            .as_ref()
            .is_some_and(|t| t.status == LoadStatus::Loaded)
    })
    .await;
    let shown = app.state.tree.as_ref().unwrap().document.clone().unwrap();
    let store = Store::open(&url, Access::ReadOnly).await.unwrap();
    let asked = |agent: Option<&str>| TreeRequest {
        id: "escalation".to_owned(),
        options: SourceOptions::default().with("agent", agent),
        defaults: SourceOptions::default(),
        details: true,
    };
    let coordinator = thread(&store, &asked(Some("coordinator"))).await.unwrap();
    let continuing = thread(&store, &asked(None)).await.unwrap();
    assert_eq!(shown.nodes, coordinator.nodes, "the open view is drawn");
    assert_ne!(
        coordinator.nodes, continuing.nodes,
        "the coordinator is sent the specialist's events quoted, the specialist its own as stored"
    );
    assert!(
        shown
            .header
            .iter()
            .any(|l| l.contains("agent coordinator's model")),
        "{:?}",
        shown.header
    );
    // One invocation, its six events under it.
    let invocations = shown.nodes.iter().filter(|n| n.parent.is_none()).count();
    assert_eq!(invocations, 1, "{:?}", shown.nodes);
    assert_eq!(shown.nodes.len(), 7, "{:?}", shown.nodes);
    let text = screen(&mut app);
    assert!(text.contains("invocation"), "{text}");
    assert!(text.contains("[coordinator]"), "{text}");
    assert!(text.contains("(quoted)"), "{text}");
    assert!(
        text.contains("Of the whole session"),
        "the session's state is drawn: {text}"
    );
    assert!(text.contains("app:region"), "{text}");

    press(&mut app, KeyCode::Char('L'));
    let tree = app.state.tree.as_ref().unwrap();
    let newest_sent = shown.nodes.iter().rposition(|n| n.on_thread).unwrap();
    assert_eq!(tree.selected, newest_sent);
    press(&mut app, KeyCode::Enter);
    match &app.state.overlay {
        Overlay::Detail(detail) => {
            assert!(
                detail.text.contains("on the path the model is sent"),
                "{}",
                detail.text
            );
            assert!(
                detail.text.contains(&shown.nodes[newest_sent].id),
                "{}",
                detail.text
            );
        }
        other => panic!("enter shows the node whole, not {other:?}"),
    }
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state.screen, Screen::Session);

    let (_, bundle) = exported(&mut app).await;
    assert_eq!(bundle["thread"]["extra"]["continuing_agent"], "coordinator");
    assert_eq!(
        bundle["thread"]["thread"],
        serde_json::json!(coordinator.thread)
    );
    app.shutdown().await;
}

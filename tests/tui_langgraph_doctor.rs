//! The doctor view on a LangGraph checkpoint database, as a user reaches it: the whole app
//! without a terminal over the LangGraph demo file (SqliteSaver's layout, which LangGraph's own
//! reader accepts: `tests/langgraph_cli/demo.rs`), `D`, the scan's findings, enter on one.

mod app_driver;

use app_driver::{app, press, screen, settle};
use crossterm::event::KeyCode;
use memscope::demo::write_langgraph_demo;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::doctor::ScanStatus;
use memscope::tui::state::{LoadStatus, Screen};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_view_lists_a_langgraph_databases_findings_and_opens_their_thread() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    let demo = write_langgraph_demo(&file, 7).await.unwrap();
    let url = format!("sqlite://{}", file.display());
    let mut app = app(&url, root.path(), Access::Auto).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;

    press(&mut app, KeyCode::Char('D'));
    assert_eq!(app.state.screen, Screen::Doctor);
    let done = |a: &App| a.state.doctor.as_ref().is_some_and(|d| !d.is_running());
    settle(&mut app, done).await;
    let doctor = app.state.doctor.clone().unwrap();
    assert_eq!(doctor.status, ScanStatus::Finished);
    // The scan measures every checkpoint, and the header counts threads and checkpoints.
    assert_eq!(doctor.scanned, demo.checkpoints as u64);
    let text = screen(&mut app);
    let header = format!(
        "Scanned {} threads, {} checkpoints",
        demo.threads, demo.checkpoints
    );
    assert!(text.contains(&header), "{text}");
    assert!(text.contains("every thread and checkpoint"), "{text}");
    // The demo's long thread stores its messages again at every step: doctor names it, with
    // what keeping the newest checkpoints frees.
    let growth = doctor
        .findings
        .iter()
        .position(|f| f.kind() == "thread_growth")
        .expect("a thread_growth finding");
    let thread = doctor.findings[growth]
        .conversation_id()
        .unwrap()
        .to_owned();
    assert!(text.contains("thread_growth"), "{text}");
    assert!(text.contains(&format!("thread {thread} stores")), "{text}");
    // The id column names threads, each id whole or cut with an ellipsis, never at its first
    // hyphen (`long-chat` is not a thread `long`).
    assert!(
        text.lines()
            .any(|l| l.contains("Kind") && l.contains("Thread") && l.contains("Description")),
        "{text}"
    );
    assert!(
        thread.chars().count() <= 12,
        "the demo's ids fit the column: {thread}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("thread_growth") && l.contains(&format!(" {thread} "))),
        "{thread}: {text}"
    );

    // Enter on it opens that thread on its checkpoint tree.
    for _ in 0..growth {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.state.screen, Screen::Checkpoints);
    assert_eq!(app.state.checkpoints.as_ref().unwrap().thread_id, thread);
    let tree_loaded = |a: &App| {
        a.state
            .checkpoints
            .as_ref()
            .is_some_and(|c| c.status == LoadStatus::Loaded)
    };
    settle(&mut app, tree_loaded).await;
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.state.screen, Screen::Doctor);
}

//! The doctor view on a LangGraph checkpoint database, as a user reaches it: the whole app
//! without a terminal over the LangGraph demo file (SqliteSaver's layout, which LangGraph's own
//! reader accepts: `tests/langgraph_cli/demo.rs`), `D`, the scan's findings, enter on one.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::demo::write_langgraph_demo;
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::doctor::ScanStatus;
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

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(160, 40)).unwrap();
    app.state.dirty = true;
    app.draw_if_dirty(&mut terminal).unwrap();
    terminal.backend().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_view_lists_a_langgraph_databases_findings_and_opens_their_thread() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    let demo = write_langgraph_demo(&file, 7).await.unwrap();
    let dirs = Dirs {
        data: root.path().join("data"),
        config: root.path().join("config"),
    };
    let overrides = Overrides {
        database_url: Some(format!("sqlite://{}", file.display())),
        ..Overrides::default()
    };
    let resolved = config::resolve(dirs, &overrides).unwrap();
    let store = Store::open(&resolved.database_url, Access::Auto)
        .await
        .unwrap();
    let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
    settle(&mut app, |a| a.state.sessions.status == LoadStatus::Loaded).await;

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

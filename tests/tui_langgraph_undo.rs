//! `u` on a pruned LangGraph thread, as a user reaches it: the whole app without a terminal over
//! the LangGraph demo file, `P` and yes prune a thread from its checkpoint tree, then `u` asks
//! to put the prune's archive back and yes restores it. A read-only open says what `u` would put
//! back and that `--write` is needed; a second undo and another database are refused, and the
//! TUI says why.

mod app_driver;

use app_driver::{app, press, screen, settle};
use crossterm::event::KeyCode;
use memscope::demo::write_langgraph_demo;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::confirm::{Confirm, PendingWrite};
use memscope::tui::state::{LoadStatus, Overlay};

const THREAD: &str = "long-chat";

/// The thread's checkpoints, once its tree has been read again.
fn checkpoints(app: &App) -> Option<usize> {
    let thread = app.state.checkpoints.as_ref()?;
    (thread.status == LoadStatus::Loaded).then(|| thread.tree.as_ref().map(|t| t.nodes.len()))?
}

fn open(app: &mut App) {
    press(app, KeyCode::Char(':'));
    for c in format!("conv {THREAD}").chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

/// A message that is not a "working" one has arrived.
fn said(app: &App) -> bool {
    app.state
        .message
        .as_deref()
        .is_some_and(|m| !m.ends_with('…'))
}

/// `u`, until its confirmation opens or a message says why not.
async fn undo(app: &mut App) -> String {
    press(app, KeyCode::Char('u'));
    let asked = |a: &App| {
        matches!(
            &a.state.overlay,
            Overlay::Confirm(Confirm {
                write: PendingWrite::Checkpoint(_),
                ..
            })
        ) || said(a)
    };
    settle(app, asked).await;
    match &app.state.overlay {
        Overlay::Confirm(confirm) => confirm.question.clone(),
        _ => app.state.message.clone().unwrap(),
    }
}

async fn yes(app: &mut App) -> String {
    press(app, KeyCode::Char('y'));
    settle(app, said).await;
    app.state.message.clone().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u_undoes_a_threads_last_prune_once_and_only_into_its_database() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    write_langgraph_demo(&file, 7).await.unwrap();
    let url = format!("sqlite://{}", file.display());

    let mut app = app(&url, root.path(), Access::Write).await;
    open(&mut app);
    settle(&mut app, |a| checkpoints(a).is_some()).await;
    let before = checkpoints(&app).unwrap();
    assert!(before > 2, "{THREAD} has checkpoints to prune");
    // Nothing pruned yet: nothing to undo.
    let nothing = undo(&mut app).await;
    assert!(
        nothing.starts_with("nothing to undo on thread long-chat"),
        "{nothing}"
    );
    assert_eq!(app.state.overlay, Overlay::None);

    press(&mut app, KeyCode::Char('P'));
    settle(&mut app, |a| {
        a.state.prune.as_ref().is_some_and(|p| p.planned.is_some())
    })
    .await;
    let pruned = yes(&mut app).await;
    assert!(pruned.starts_with("pruned"), "{pruned}");
    settle(&mut app, |a| checkpoints(a) == Some(1)).await;

    // Read-only: what would be put back, and that --write is needed.
    let mut read_only = app_driver::app(&url, root.path(), Access::Auto).await;
    open(&mut read_only);
    settle(&mut read_only, |a| checkpoints(a).is_some()).await;
    let would = undo(&mut read_only).await;
    let put_back = format!("{} checkpoints", before - 1);
    assert!(would.contains("would put back"), "{would}");
    assert!(would.contains(&put_back), "{would}");
    assert!(would.contains("--write"), "{would}");
    assert_eq!(read_only.state.overlay, Overlay::None);
    drop(read_only);

    // The confirmation names what goes back and from where; yes restores it.
    let question = undo(&mut app).await;
    assert!(
        question.starts_with("Undo the last prune of thread long-chat?"),
        "{question}"
    );
    assert!(question.contains(&put_back), "{question}");
    assert!(question.contains("langgraph-archives"), "{question}");
    let drawn = screen(&mut app);
    assert!(drawn.contains("Undo the last prune"), "{drawn}");
    let undone = yes(&mut app).await;
    assert!(
        undone.starts_with("undid thread long-chat's last prune: restored"),
        "{undone}"
    );
    settle(&mut app, |a| checkpoints(a) == Some(before)).await;

    // A second undo of the same prune is refused, nothing written.
    undo(&mut app).await;
    let again = yes(&mut app).await;
    assert!(again.contains("restored before"), "{again}");
    settle(&mut app, |a| checkpoints(a).is_some()).await;
    assert_eq!(checkpoints(&app), Some(before));
    drop(app);

    // Another database with a thread of that name: the archive is not its, nothing written.
    let other_file = root.path().join("other.sqlite");
    write_langgraph_demo(&other_file, 8).await.unwrap();
    let other_url = format!("sqlite://{}", other_file.display());
    let mut other = app_driver::app(&other_url, root.path(), Access::Write).await;
    open(&mut other);
    settle(&mut other, |a| checkpoints(a).is_some()).await;
    let other_before = checkpoints(&other).unwrap();
    undo(&mut other).await;
    let refused = yes(&mut other).await;
    assert!(refused.contains("not from this database"), "{refused}");
    settle(&mut other, |a| checkpoints(a).is_some()).await;
    assert_eq!(checkpoints(&other), Some(other_before));
}

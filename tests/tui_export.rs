//! `E` in the TUI: the open conversation's bundle, the very one `memscope export` prints (one
//! function makes both), written as a new file under the data directory. Real jobs over
//! memscope's demo database and the LangGraph demo file, with the binary's own data and config
//! directories; keys in, files out.

mod app_driver;
mod cli_support;

use std::path::Path;

use app_driver::{app_in, press, settle};
use cli_support::{memscope, memscope_on, run};
use crossterm::event::KeyCode;
use memscope::config::Dirs;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::LoadStatus;
use serde_json::Value;

/// The regenerated conversation of the demo's first story.
const DIVERGENT: &str = "d4090eeb-069f-44cf-ab71-2cb403fd5269";

/// The directories the binary uses under `home` (as `cli_support` sets them).
fn dirs(home: &Path) -> Dirs {
    Dirs {
        data: home.join("data/memscope"),
        config: home.join("config/memscope"),
    }
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn command(app: &mut App, text: &str) {
    press(app, KeyCode::Char(':'));
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

/// `E`, the bundle read back from where the status line says it went: the exports directory.
async fn exported(app: &mut App, home: &Path) -> Value {
    let (path, bundle) = app_driver::exported(app).await;
    assert!(
        path.starts_with(home.join("data/memscope/exports")),
        "{}",
        path.display()
    );
    bundle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_exports_the_open_conversation_as_memscope_export_prints_it() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path();

    // A Dify conversation of memscope's demo, with its nodes and their contexts.
    let db = format!("sqlite://{}", home.join("m.db").display());
    run(memscope(home).args(["demo", "--db", &db]), 0);
    let (cli, _) = run(memscope_on(home, &db).args(["export", DIVERGENT]), 0);
    let mut app = app_in(&db, dirs(home), Access::Auto).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    command(&mut app, &format!("conv {DIVERGENT}"));
    let loaded = |a: &App| {
        a.state
            .conversation
            .as_ref()
            .is_some_and(|c| c.status == LoadStatus::Loaded)
    };
    settle(&mut app, loaded).await;
    assert_eq!(exported(&mut app, home).await, json(&cli));

    // A LangGraph thread's tree exports it at the selected checkpoint, as --leaf does.
    let file = home.join("checkpoints.sqlite");
    run(memscope(home).args(["demo", "--langgraph"]).arg(&file), 0);
    let url = format!("sqlite://{}", file.display());
    let mut app = app_in(&url, dirs(home), Access::Auto).await;
    settle(&mut app, |a| a.state.list.status == LoadStatus::Loaded).await;
    command(&mut app, "conv long-chat");
    let tree = |a: &App| {
        a.state
            .checkpoints
            .as_ref()
            .is_some_and(|t| t.status == LoadStatus::Loaded)
    };
    settle(&mut app, tree).await;
    press(&mut app, KeyCode::Char('k'));
    let (_, checkpoint) = app.state.checkpoints.as_ref().unwrap().selected().unwrap();
    let leaf = checkpoint.id.clone();
    assert!(!checkpoint.latest, "a checkpoint before the latest");
    let bundle = exported(&mut app, home).await;
    let (cli, _) = run(
        memscope_on(home, &url).args(["export", "long-chat", "--leaf", &leaf]),
        0,
    );
    assert_eq!(bundle, json(&cli));
    assert_eq!(bundle["thread"]["extra"]["leaf"], leaf.as_str());
}

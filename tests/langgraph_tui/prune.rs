//! `P` on a thread LangGraph wrote, judged by LangGraph's own code (`tests/langgraph/judge.py`):
//! a read-only open shows the plan and refuses yes; a writable one shows the plan, `+` keeps one
//! more, yes prunes, and then `get_state` is unchanged, `get_state_history` lists the kept
//! checkpoints, and the archive the popup named puts every row back through `checkpoints
//! restore`.

use std::path::Path;
use std::process::Command;

use crossterm::event::KeyCode;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::Overlay;
use serde_json::Value;

use super::{app, open, press, screen, settle, shown_selected};

/// Checkpoints the prune keeps: one more than the default, through `+`.
const KEEP: usize = 2;

/// What LangGraph reads of `thread` in the database `target` names (`--sqlite FILE` or
/// `--postgres URL`).
fn judge(python: &str, target: [&str; 2], thread: &str) -> Value {
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/langgraph/judge.py"))
        .args(target)
        .args(["--thread", thread])
        .output()
        .expect("LangGraph's python runs");
    assert!(
        output.status.success(),
        "judge.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn history(judged: &Value) -> usize {
    judged["history"].as_array().unwrap().len()
}

/// The prune popup's latest plan has arrived.
fn planned(app: &App) -> bool {
    app.state
        .prune
        .as_ref()
        .is_some_and(|p| p.planned.is_some() && !p.status.is_loading())
}

/// Prunes `thread_id` to its [`KEEP`] newest checkpoints from its checkpoint tree, then
/// restores the archive with the CLI.
pub fn prune_and_restore(url: &str, python: &str, target: [&str; 2], thread_id: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let root = tempfile::tempdir().unwrap();
        let before = judge(python, target, thread_id);
        assert!(
            history(&before) > KEEP + 1,
            "{thread_id} has checkpoints to prune"
        );

        let mut read_only = app(url, root.path(), Access::Auto).await;
        open(&mut read_only, thread_id);
        settle(&mut read_only, shown_selected).await;
        // Read-only: the plan shows, and yes says --write is needed.
        press(&mut read_only, KeyCode::Char('P'));
        assert_eq!(read_only.state.overlay, Overlay::Prune);
        settle(&mut read_only, planned).await;
        press(&mut read_only, KeyCode::Char('y'));
        let said = read_only.state.message.clone().unwrap_or_default();
        assert!(said.contains("without --write"), "{said}");
        assert_eq!(read_only.state.overlay, Overlay::Prune);
        drop(read_only);

        let mut app = app(url, root.path(), Access::Write).await;
        open(&mut app, thread_id);
        settle(&mut app, shown_selected).await;
        press(&mut app, KeyCode::Char('P'));
        assert_eq!(app.state.overlay, Overlay::Prune);
        settle(&mut app, planned).await;
        press(&mut app, KeyCode::Char('+'));
        settle(&mut app, planned).await;
        let prune = app.state.prune.clone().unwrap();
        let planned = prune.planned.unwrap();
        assert_eq!(planned.plan.keep_last, KEEP);
        assert_eq!(planned.plan.threads.len(), 1);
        assert_eq!(planned.plan.threads[0].thread_id, thread_id);
        assert_eq!(planned.plan.checkpoints, history(&before) - KEEP);
        let archive = planned.archive.clone();
        assert!(archive.is_absolute() && archive.starts_with(root.path().join("data")));
        let shown = screen(&mut app);
        assert!(
            shown.contains("keeping its 2 newest checkpoints"),
            "{shown}"
        );
        assert!(!archive.exists(), "nothing is written before yes");

        press(&mut app, KeyCode::Char('y'));
        let written = |a: &App| {
            a.state
                .message
                .as_deref()
                .is_some_and(|m| !m.starts_with("pruning"))
        };
        settle(&mut app, written).await;
        let said = app.state.message.clone().unwrap();
        assert!(said.starts_with("pruned"), "{said}");
        assert!(said.contains(archive.to_str().unwrap()), "{said}");
        settle(&mut app, shown_selected).await;
        let tree = app
            .state
            .checkpoints
            .as_ref()
            .unwrap()
            .tree
            .clone()
            .unwrap();
        assert_eq!(
            tree.nodes.len(),
            KEEP,
            "the thread reloads with what is kept"
        );
        drop(app);

        let after = judge(python, target, thread_id);
        for part in ["checkpoint_id", "messages", "next"] {
            assert_eq!(
                after["state"][part], before["state"][part],
                "get_state's {part}"
            );
        }
        assert_eq!(history(&after), KEEP);

        let restored = Command::new(env!("CARGO_BIN_EXE_memscope"))
            .env("XDG_DATA_HOME", root.path().join("data"))
            .env("XDG_CONFIG_HOME", root.path().join("config"))
            .args(["--db", url, "--write", "checkpoints", "restore"])
            .arg(&archive)
            .arg("--yes")
            .output()
            .unwrap();
        assert!(
            restored.status.success(),
            "{}",
            String::from_utf8_lossy(&restored.stderr)
        );
        let back = judge(python, target, thread_id);
        assert_eq!(history(&back), history(&before), "the archive restores");
        assert_eq!(back["state"], before["state"]);
    });
}

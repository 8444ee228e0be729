//! The TUI on a database LangGraph wrote: `:conv THREAD` opens the thread on its latest
//! checkpoint, and moving in the tree shows each checkpoint's messages and node writes as
//! LangGraph's `get_state_history` and `list` read them. Real jobs over the real database;
//! keys in, state and screens out. `prune.rs` prunes a thread from its tree.

pub mod prune;

use crossterm::event::KeyCode;
use memscope::sources::checkpoint_history::CheckpointMessage;
use memscope::store::Access;
use memscope::tui::App;
use memscope::tui::state::checkpoints::CheckpointPane;
use memscope::tui::state::{LoadStatus, Screen};
use serde_json::Value;

use crate::app_driver::{app, press, screen, settle};

/// The shown checkpoint has arrived for the selected one.
fn shown_selected(app: &App) -> bool {
    let Some(thread) = app.state.checkpoints.as_ref() else {
        return false;
    };
    let Some((_, selected)) = thread.selected() else {
        return false;
    };
    !thread.shown_status.is_loading()
        && thread
            .shown
            .as_ref()
            .is_some_and(|s| s.state.checkpoint_id == selected.id)
}

fn message_ids(messages: &Value) -> Vec<Value> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| serde_json::json!([m["type"], m["id"], m["content"]]))
        .collect()
}

/// A shown message as [`message_ids`] gives LangGraph's: its label starts with its `type`.
fn shown_message(m: &CheckpointMessage) -> Value {
    let kind = m
        .label
        .split_once(' ')
        .map_or(m.label.as_str(), |(kind, _)| kind);
    serde_json::json!([kind, m.id, m.content])
}

fn open(app: &mut App, thread_id: &str) {
    press(app, KeyCode::Char(':'));
    for c in format!("conv {thread_id}").chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

fn shown_ids(app: &App) -> Vec<String> {
    let thread = app.state.checkpoints.as_ref().unwrap();
    let shown = &thread.shown.as_ref().unwrap().state;
    shown
        .messages
        .iter()
        .map(|m| m.id.clone().unwrap())
        .collect()
}

/// `T`, `A`, `y` on the latest checkpoint of `thread_id` writes the preview's removals as a new
/// latest checkpoint holding exactly the messages the preview keeps; `u`, `y` deletes it again.
/// `T` opens on the cut the messages pane shows, the system prompt kept. A read-only open
/// refuses the undo and says why.
pub fn trim_and_undo(url: &str, thread_id: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let root = tempfile::tempdir().unwrap();
        let mut app = app(url, root.path(), Access::Write).await;
        // A budget that keeps only the newest messages.
        app.state.settings.budget = 12;
        open(&mut app, thread_id);
        settle(&mut app, shown_selected).await;
        let before = shown_ids(&app);
        let latest = app
            .state
            .checkpoints
            .as_ref()
            .unwrap()
            .tree
            .as_ref()
            .unwrap()
            .latest
            .clone();
        press(&mut app, KeyCode::Char('T'));
        let plan = app
            .state
            .trim
            .as_ref()
            .unwrap()
            .plan
            .clone()
            .unwrap()
            .unwrap();
        let kept: Vec<String> = plan
            .steps
            .iter()
            .filter_map(|step| match step {
                memscope::memory::trim::Step::Keep { index } => Some(before[*index].clone()),
                _ => None,
            })
            .collect();
        assert!(
            kept.len() < before.len(),
            "the budget removes messages: {plan:?}"
        );
        let thread = app.state.checkpoints.as_ref().unwrap();
        let cut = thread.shown.as_ref().unwrap().budget.as_ref().unwrap();
        let kept_by_cut: Vec<String> = before
            .iter()
            .zip(&cut.kept)
            .filter(|(_, kept)| **kept)
            .map(|(id, _)| id.clone())
            .collect();
        assert_eq!(kept, kept_by_cut, "T starts from the cut shown");
        assert_eq!(kept.first(), before.first(), "the system prompt stays");
        press(&mut app, KeyCode::Char('A'));
        assert!(
            matches!(
                app.state.overlay,
                memscope::tui::state::Overlay::Confirm(memscope::tui::state::confirm::Confirm {
                    write: memscope::tui::state::confirm::PendingWrite::Checkpoint(_),
                    ..
                })
            ),
            "apply asks first: {:?} {:?}",
            app.state.overlay,
            app.state.message
        );
        press(&mut app, KeyCode::Char('y'));
        let written = |a: &App| {
            a.state
                .message
                .as_deref()
                .is_some_and(|m| !m.starts_with("writing"))
        };
        settle(&mut app, written).await;
        let said = app.state.message.clone().unwrap();
        assert!(said.starts_with("wrote checkpoint"), "{said}");
        settle(&mut app, shown_selected).await;
        let thread = app.state.checkpoints.as_ref().unwrap();
        let new_latest = thread.tree.as_ref().unwrap().latest.clone();
        assert_ne!(new_latest, latest);
        assert_eq!(
            thread.selected().unwrap().1.source.as_deref(),
            Some("update")
        );
        assert_eq!(
            shown_ids(&app),
            kept,
            "the new latest holds what the preview kept"
        );

        // A read-only open finds the trim to undo, and refuses it saying why.
        let mut read_only = crate::app_driver::app(url, root.path(), Access::Auto).await;
        open(&mut read_only, thread_id);
        settle(&mut read_only, shown_selected).await;
        press(&mut read_only, KeyCode::Char('u'));
        settle(&mut read_only, |a| {
            a.state
                .message
                .as_deref()
                .is_some_and(|m| !m.ends_with('…'))
        })
        .await;
        let said = read_only.state.message.clone().unwrap_or_default();
        assert!(said.contains("without --write"), "{said}");
        drop(read_only);

        // `u` finds memscope's trim is the latest checkpoint, and asks to undo it.
        press(&mut app, KeyCode::Char('u'));
        let asked = |a: &App| {
            matches!(
                a.state.overlay,
                memscope::tui::state::Overlay::Confirm(memscope::tui::state::confirm::Confirm {
                    write: memscope::tui::state::confirm::PendingWrite::Checkpoint(_),
                    ..
                })
            )
        };
        settle(&mut app, asked).await;
        press(&mut app, KeyCode::Char('y'));
        settle(&mut app, written).await;
        let said = app.state.message.clone().unwrap();
        assert!(said.starts_with("deleted trim checkpoint"), "{said}");
        settle(&mut app, shown_selected).await;
        let thread = app.state.checkpoints.as_ref().unwrap();
        assert_eq!(thread.tree.as_ref().unwrap().latest, latest);
        assert_eq!(shown_ids(&app), before);
    });
}

/// Opens `thread_id` with `:conv` and walks its whole tree, comparing each root checkpoint's
/// messages with `get_state_history` and its writes with `list`'s pending writes.
pub fn compare_tui(url: &str, oracle: &Value, thread_id: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let root = tempfile::tempdir().unwrap();
        let mut app = app(url, root.path(), Access::Auto).await;
        assert!(
            app.state
                .tab_missing(memscope::tui::state::Tab::Conversations)
                .is_none(),
            "a LangGraph database has conversations: its threads"
        );
        open(&mut app, thread_id);
        assert_eq!(app.state.screen, Screen::Checkpoints);
        settle(&mut app, shown_selected).await;

        let expected = &oracle["threads"][thread_id];
        let state = &expected["state"];
        let thread = app.state.checkpoints.as_ref().unwrap();
        assert_eq!(thread.status, LoadStatus::Loaded);
        let tree = thread.tree.clone().unwrap();
        let history = expected["history"].as_array().unwrap();
        assert_eq!(
            tree.nodes.len(),
            history.len(),
            "{thread_id}: the root tree"
        );
        let subgraph_checkpoints = expected["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["checkpoint_ns"] != "")
            .count();
        assert_eq!(thread.rows.len(), history.len() + subgraph_checkpoints);
        // It opens on the latest checkpoint, get_state's.
        let (_, selected) = thread.selected().unwrap();
        assert_eq!(selected.id, state["checkpoint_id"].as_str().unwrap());
        assert!(selected.latest);
        let shown = thread.shown.as_ref().unwrap();
        let shown_ids: Vec<Value> = shown.state.messages.iter().map(shown_message).collect();
        assert_eq!(shown_ids, message_ids(&state["messages"]));
        let text = screen(&mut app);
        assert!(text.contains("★ latest"), "{text}");

        // Every line of the tree, from the top: each checkpoint read is LangGraph's.
        press(&mut app, KeyCode::Char('g'));
        let rows = app.state.checkpoints.as_ref().unwrap().rows.len();
        for line in 0..rows {
            if line > 0 {
                press(&mut app, KeyCode::Char('j'));
            }
            settle(&mut app, shown_selected).await;
            let thread = app.state.checkpoints.as_ref().unwrap();
            let (namespace, selected) = thread.selected().unwrap();
            let shown = &thread.shown.as_ref().unwrap().state;
            let listed = expected["checkpoints"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["checkpoint_id"] == selected.id.as_str())
                .unwrap();
            assert_eq!(listed["checkpoint_ns"], namespace);
            assert_eq!(shown.ts, listed["ts"].as_str().unwrap());
            assert_eq!(
                shown.writes.len(),
                listed["pending_writes"].as_array().unwrap().len(),
                "{thread_id} {}: the writes of its tasks",
                selected.id
            );
            if namespace.is_empty() {
                let snapshot = history
                    .iter()
                    .find(|s| s["checkpoint_id"] == selected.id.as_str())
                    .unwrap();
                let shown_ids: Vec<Value> = shown.messages.iter().map(shown_message).collect();
                assert_eq!(
                    shown_ids,
                    message_ids(&snapshot["messages"]),
                    "{}",
                    selected.id
                );
            }
        }

        // The writes pane names each write's channel.
        press(&mut app, KeyCode::Char('o'));
        assert_eq!(
            app.state.checkpoints.as_ref().unwrap().pane,
            CheckpointPane::Writes
        );
        let text = screen(&mut app);
        assert!(text.contains("Node writes from"), "{text}");
        // As the TUI does when it quits: its read leaves no `-wal` or `-shm` behind.
        app.shutdown().await;
    });
}

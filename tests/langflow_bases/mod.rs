//! Memory bases on Langflow's own databases, as an operator meets them: a vector store emptied
//! behind Langflow's back, the TUI from the conversations tab into a base's session, and the
//! messages a base has pending, each compared with what Langflow's own functions say.

use super::*;

/// An emptied vector store is a mismatch for Langflow and for memscope alike.
#[test]
fn langflow_an_emptied_vector_store_is_a_mismatch_for_both() {
    on_langflow("emptied_store", Backend::Sqlite, |built| {
        let copy = sqlite_copy(built);
        let base = oracle_bases(built)
            .iter()
            .find(|b| b["name"] == "Support Memory")
            .unwrap();
        let store = base["vectors_path"].as_str().unwrap().replace(
            &built.kb_dir.display().to_string(),
            &copy.kb_dir.display().to_string(),
        );
        let emptied = Process::new(python().unwrap())
            .args([
                "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM chunks'); c.commit(); c.close()",
                &store,
            ])
            .status()
            .unwrap();
        assert!(emptied.success());
        let home = tempfile::tempdir().unwrap();
        let output = memscope(&copy, home.path())
            .args(["mb", "check", "Support Memory"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&output.stdout).contains("MISMATCH"));
        let said = langflow_says(&copy);
        let verdict = said["memory_bases"]
            .as_array()
            .and_then(|bases| bases.iter().find(|b| b["id"] == base["id"]))
            .map(|b| b["check_mismatch"].clone());
        assert_eq!(verdict, Some(Value::Bool(true)), "{said}");
    });
}

/// The TUI on a database Langflow made opens on every flow's sessions; its memory bases tab
/// lists the bases with Langflow's verdicts, and `c` on a base's session opens its
/// conversation of the base's flow.
#[test]
fn langflow_the_tui_lists_sessions_and_opens_a_bases_session() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use memscope::config::{self, Dirs, Overrides};
    use memscope::store::{Access, Store};
    use memscope::tui::App;
    use memscope::tui::state::{LoadStatus, Overlay, Screen};
    use memscope::tui::theme::Theme;
    use memscope::tui::update::Event;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    on_langflow("tui_sessions_and_bases", Backend::Sqlite, |built| {
        let home = tempfile::tempdir().unwrap();
        let config_file = home.path().join("config.toml");
        std::fs::write(
            &config_file,
            format!(
                "[storage]\nkb_root = {:?}\n",
                built.kb_dir.display().to_string()
            ),
        )
        .unwrap();
        let dirs = Dirs {
            data: home.path().join("data"),
            config: home.path().join("config"),
        };
        let overrides = Overrides {
            config_file: Some(config_file),
            database_url: Some(built.url.clone()),
            ..Overrides::default()
        };
        let resolved = config::resolve(dirs, &overrides).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let store = Store::open(&resolved.database_url, Access::Auto)
                .await
                .unwrap();
            let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
            assert_eq!(app.state.screen, Screen::Conversations);
            let press = |app: &mut App, code: KeyCode| {
                app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
            };
            tokio::time::timeout(std::time::Duration::from_secs(60), async {
                while app.state.list.status != LoadStatus::Loaded
                    || app.state.memory_bases.status != LoadStatus::Loaded
                {
                    assert!(app.next_job().await, "the job channel closed");
                }
            })
            .await
            .expect("the sessions and the bases loaded in time");
            press(&mut app, KeyCode::Char('3'));
            let names: Vec<&str> = app
                .state
                .memory_bases
                .bases
                .iter()
                .map(|b| b.base.name.as_str())
                .collect();
            assert_eq!(names.len(), oracle_bases(built).len(), "{names:?}");
            let draw = |app: &mut App| {
                let mut terminal = Terminal::new(TestBackend::new(120, 32)).unwrap();
                app.state.dirty = true;
                app.draw_if_dirty(&mut terminal).unwrap();
                terminal.backend().to_string()
            };
            let tab = draw(&mut app);
            assert!(tab.contains("Support Memory"));
            // Creating and deleting a base are Langflow's: not offered, and refused with its
            // endpoint when typed anyway.
            // Wide enough for every key of the tab on the hint bar.
            let mut wide = Terminal::new(TestBackend::new(300, 32)).unwrap();
            app.state.dirty = true;
            app.draw_if_dirty(&mut wide).unwrap();
            let wide = wide.backend().to_string();
            let hints = wide.lines().last().unwrap_or_default().to_owned();
            assert!(hints.contains("sync every session"), "{hints}");
            assert!(
                !hints.contains("new base") && !hints.contains("delete base"),
                "{hints}"
            );
            for (key, endpoint) in [
                ('n', "POST /api/v1/memories"),
                ('D', "DELETE /api/v1/memories/{memory_base_id}"),
            ] {
                press(&mut app, KeyCode::Char(key));
                let said = app.state.message.clone().unwrap_or_default();
                assert!(said.contains(endpoint), "{key}: {said}");
                assert_eq!(app.state.overlay, Overlay::None, "{key}");
            }
            // From a session of a base straight into its conversation, of the base's flow.
            tokio::time::timeout(std::time::Duration::from_secs(60), async {
                while app.state.memory_bases.sessions_status != LoadStatus::Loaded
                    || app.state.memory_bases.sessions.is_empty()
                {
                    assert!(app.next_job().await, "the job channel closed");
                }
            })
            .await
            .expect("the sessions loaded in time");
            press(&mut app, KeyCode::Enter);
            let base_flow = app
                .state
                .memory_bases
                .selected_base()
                .unwrap()
                .base
                .flow_id
                .clone();
            let session_id = app
                .state
                .memory_bases
                .selected_session()
                .unwrap()
                .session
                .session_id
                .clone();
            press(&mut app, KeyCode::Char('c'));
            assert_eq!(app.state.screen, Screen::Session);
            let opened = &app.state.session.as_ref().unwrap().key;
            assert_eq!(opened.id, session_id);
            assert_eq!(opened.scope.as_deref(), Some(base_flow.as_str()));
            tokio::time::timeout(std::time::Duration::from_secs(60), async {
                while app.state.session.as_ref().unwrap().budget_status != LoadStatus::Loaded {
                    assert!(app.next_job().await, "the job channel closed");
                }
            })
            .await
            .expect("the session loaded in time");
            let view = app.state.session.as_ref().unwrap().view.clone().unwrap();
            assert!(!view.messages.is_empty());
            let session = draw(&mut app);
            assert!(
                session.contains("Langflow keeps no regeneration tree"),
                "{session}"
            );
            press(&mut app, KeyCode::Esc);
            assert_eq!(app.state.screen, Screen::MemoryBases);

            // The conversations tab lists every flow's sessions.
            press(&mut app, KeyCode::Char('1'));
            assert_eq!(app.state.screen, Screen::Conversations);
            let conversations = draw(&mut app);
            assert!(
                conversations.contains("Sessions · page 1") && conversations.contains(&session_id),
                "{conversations}"
            );
            app.shutdown().await;
        });
    });
}

/// The messages memscope would ingest next are the ones Langflow's own
/// `_fetch_pending_messages` returns, in the same order, for every session of every base.
fn pending_messages_are_langflows_in_order(built: &Built) {
    use memscope::store::{Access, Store};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open(&built.url, Access::ReadOnly).await.unwrap();
        for base in oracle_bases(built) {
            let flow_id = base["flow_id"].as_str().unwrap();
            let id = base["id"].as_str().unwrap();
            for want in base["sessions"].as_array().unwrap() {
                let session_id = want["session_id"].as_str().unwrap();
                let session = store
                    .memory_base_session(id, session_id)
                    .await
                    .unwrap()
                    .expect("the session is tracked");
                let timeline = store.session_timeline(flow_id, session_id).await.unwrap();
                let cursor = store.cursor_position(&session, &timeline).await.unwrap();
                let pending: Vec<&str> = timeline
                    .pending(cursor.as_ref())
                    .map(|p| p.id.as_str())
                    .collect();
                let expected: Vec<&str> = want["pending_message_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                assert_eq!(pending, expected, "pending messages of {id}/{session_id}");
            }
        }
        store.close().await;
    });
}

#[test]
fn langflow_pending_messages_are_langflows_in_order_sqlite() {
    on_langflow(
        "pending_messages",
        Backend::Sqlite,
        pending_messages_are_langflows_in_order,
    );
}

#[test]
fn langflow_pending_messages_are_langflows_in_order_postgres() {
    on_langflow(
        "pending_messages",
        Backend::Postgres,
        pending_messages_are_langflows_in_order,
    );
}

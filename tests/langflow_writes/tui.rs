//! The TUI with writes enabled on a database Langflow made: a session synced from the memory
//! bases tab, then Langflow's own functions take the database as their own. The watcher stays
//! off there: Langflow runs its own.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::config::{self, Dirs, Overrides};
use memscope::store::{Access, Store};
use memscope::tui::App;
use memscope::tui::state::{AppState, LoadStatus};
use memscope::tui::theme::Theme;
use memscope::tui::update::Event;

use super::*;

const BASE: &str = "Manual Archive";
const SESSION: &str = "support-failed";

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Runs the app's jobs until `done` holds.
async fn pump(app: &mut App, what: &str, done: impl Fn(&AppState) -> bool) {
    tokio::time::timeout(Duration::from_secs(180), async {
        while !done(&app.state) {
            assert!(app.next_job().await, "the job channel closed");
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} did not happen in time"));
}

fn sessions_of_selected_loaded(state: &AppState) -> bool {
    let tab = &state.memory_bases;
    tab.sessions_status == LoadStatus::Loaded
        && tab.selected_base().is_some_and(|selected| {
            tab.sessions
                .iter()
                .all(|s| s.session.memory_base_id == selected.base.id)
        })
}

#[test]
fn langflow_a_session_synced_from_the_tui_is_accepted_by_langflow() {
    on_langflow("tui_sync_accepted", Backend::Sqlite, |built| {
        let copy = sqlite_copy(built);
        let home = tempfile::tempdir().unwrap();
        let embed = EmbedServer::start(&[]);
        let config_file = home.path().join("config.toml");
        std::fs::write(
            &config_file,
            format!(
                "[storage]\nkb_root = {:?}\n\n[memory_bases]\nembeddings_url = {:?}\n\
                 embeddings_dimension = 16\n",
                copy.kb_dir.display().to_string(),
                embed.url
            ),
        )
        .unwrap();
        let dirs = Dirs {
            data: home.path().join("data"),
            config: home.path().join("config"),
        };
        let overrides = Overrides {
            config_file: Some(config_file),
            database_url: Some(copy.url.clone()),
            ..Overrides::default()
        };
        let resolved = config::resolve(dirs, &overrides).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let store = Store::open(&resolved.database_url, Access::Write)
                .await
                .unwrap();
            let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
            assert!(!app.start_watcher(), "Langflow runs its own watcher");
            // A Langflow database opens on its sessions; the bases are the third tab.
            press(&mut app, KeyCode::Char('3'));
            pump(&mut app, "loading the bases", |s| {
                s.memory_bases.status == LoadStatus::Loaded
            })
            .await;
            let position = app
                .state
                .memory_bases
                .bases
                .iter()
                .position(|b| b.base.name == BASE)
                .expect("the base is listed");
            for _ in 0..position {
                press(&mut app, KeyCode::Char('j'));
            }
            pump(
                &mut app,
                "loading its sessions",
                sessions_of_selected_loaded,
            )
            .await;
            press(&mut app, KeyCode::Enter);
            let index = app
                .state
                .memory_bases
                .sessions
                .iter()
                .position(|s| s.session.session_id == SESSION)
                .expect("the session is listed");
            for _ in 0..index {
                press(&mut app, KeyCode::Char('j'));
            }
            let selected = app.state.memory_bases.selected_session().unwrap();
            assert_eq!(selected.session.session_id, SESSION);
            press(&mut app, KeyCode::Char('s'));
            pump(&mut app, "the sync", |s| {
                s.message
                    .as_deref()
                    .is_some_and(|m| m.starts_with(&format!("{BASE}:")) || m.starts_with("sync of"))
            })
            .await;
            let message = app.state.message.clone().unwrap();
            assert!(message.contains("ingested 2 messages"), "{message}");
            app.shutdown().await;
        });
        let said = langflow_says_probing(&copy, true);
        langflow_accepts(&said);
        let session = session_of(base_named(&said, BASE), SESSION);
        assert_eq!(session["pending_message_ids"], serde_json::json!([]));
        assert_eq!(session["total_processed"], 2);
    });
}

//! The same eras' rows in MySQL (MariaDB) beside PostgreSQL: every read and the TUI's frames
//! are the same on both, and the MySQL session writes nothing.

use super::*;

/// Every read of `args` (with `--json`) on the same rows in PostgreSQL and in MySQL: the same
/// documents but for the database URL. The session writes nothing: `mysqldump` before and
/// after is the same.
async fn same_as_postgres(era: Era, test: &'static str) {
    common::mysql::run_mysql(test, move |mysql| async move {
        let compared = common::in_postgres_schema(test, move |postgres| async move {
            build(&postgres, era, &rows(era)).await;
            build(&mysql, era, &rows(era)).await;
            let dump_before = common::mysql::dump(mysql.url());
            compare_reads(era, postgres.url(), mysql.url());
            assert_eq!(
                dump_before,
                common::mysql::dump(mysql.url()),
                "the session wrote"
            );
        })
        .await;
        assert!(
            compared,
            "MySQL's reads are compared with PostgreSQL's: set MEMSCOPE_TEST_PG_URL"
        );
    })
    .await;
}

/// The document with every database URL in it replaced by `<database>`, and the backend
/// `info` names by `<backend>`.
fn without_urls(value: Value) -> Value {
    match value {
        Value::String(s) if s.starts_with("postgres://") || s.starts_with("mysql://") => {
            Value::String("<database>".into())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(without_urls).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| match key.as_str() {
                    "backend" => (key, Value::String("<backend>".into())),
                    _ => (key, without_urls(value)),
                })
                .collect(),
        ),
        other => other,
    }
}

/// Puts the chatflow's offloaded outputs where memscope, run with `home`, reads uploads.
fn write_offloaded_outputs(home: &Path, url: &str) {
    let info = json(home, url, &["info"], 0);
    let file = Path::new(info["storage_settings"]["root"].as_str().unwrap()).join(OFFLOAD_KEY);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, full_outputs()).unwrap();
}

fn compare_reads(era: Era, postgres: &str, mysql: &str) {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    if era.has_offload() {
        write_offloaded_outputs(home, postgres);
    }
    let first_page = json(home, postgres, &["conversations", "--limit", "1"], 0);
    let cursor = first_page["next"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let (live, deleted, flow) = (uid(LIVE), uid(DELETED), uid(CHATFLOW));
    let reads: Vec<Vec<&str>> = vec![
        vec![],
        vec!["info"],
        vec!["conversations"],
        vec!["conversations", "--include-deleted"],
        vec!["conversations", "--limit", "1"],
        vec!["conversations", "--limit", "1", "--after", &cursor],
        vec!["conversations", "--search", "FLOW"],
        vec!["conversations", "--search", "answer", "--include-deleted"],
        vec![
            "conversations",
            "--search",
            "00000000-0000-0000-0000-0000000000",
        ],
        vec!["thread", &live],
        vec!["thread", &live, "--mode", "fixed"],
        vec!["thread", &live, "--mode", "tree"],
        vec!["thread", &deleted],
        vec!["history", &live],
        vec!["history", &live, "--message-limit", "1"],
        vec!["nodes", &flow],
        vec!["agent-sessions", &live],
        vec!["agent-sessions", &flow],
        vec!["node-context", &flow, "llm1"],
        vec!["node-context", &flow, "llm1", "--source", "prompts"],
        vec!["doctor"],
    ];
    for args in reads {
        let code =
            if args.first() == Some(&"thread") && args[1] == deleted && !era.has_deleted_flag() {
                3
            } else {
                0
            };
        let read = |url: &str| {
            let (stdout, _) = run(memscope_on(home, url).args(&args).arg("--json"), code);
            if code != 0 {
                return Value::Null;
            }
            without_urls(
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}\n{stdout}")),
            )
        };
        assert_eq!(read(postgres), read(mysql), "{era:?} {args:?}");
    }
    // A write is refused, --write or not.
    for write in [&["init"][..], &["--write", "init"]] {
        let (_, stderr) = run(memscope_on(home, mysql).args(write), 3);
        assert!(stderr.contains("is open read-only"), "{stderr}");
    }
}

mod same_reads_as_postgres {
    use super::*;

    #[tokio::test]
    async fn mysql() {
        for era in Era::ALL {
            same_as_postgres(era, module_path!()).await;
        }
    }
}

/// The TUI on the newest era's rows in PostgreSQL and in MySQL: the conversation list, the
/// chatflow with its budget panel and its nodes pane, the live chat with its pause, and the
/// doctor view draw the same frames. The session writes nothing: `mysqldump` before and after
/// is the same.
mod same_tui_as_postgres {
    use std::time::Duration;

    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use memscope::config::{self, Dirs, Overrides};
    use memscope::store::{Access, Store};
    use memscope::tui::App;
    use memscope::tui::state::LoadStatus;
    use memscope::tui::theme::Theme;
    use memscope::tui::update::Event;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    async fn settle(app: &mut App, done: impl Fn(&App) -> bool) {
        tokio::time::timeout(Duration::from_secs(60), async {
            while !done(app) {
                assert!(app.next_job().await, "the job channel closed");
            }
        })
        .await
        .expect("the jobs finished in time");
    }

    fn idle(app: &App) -> bool {
        !app.state.busy()
    }

    fn press(app: &mut App, code: KeyCode) {
        app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn screen(app: &mut App) -> String {
        let mut terminal = Terminal::new(TestBackend::new(140, 40)).unwrap();
        app.state.dirty = true;
        app.draw_if_dirty(&mut terminal).unwrap();
        terminal.backend().to_string()
    }

    /// The frames of one session over `url`, run with `home` as the CLI runs.
    async fn frames(home: &Path, url: &str) -> Vec<String> {
        let dirs = Dirs {
            data: home.join("data").join("memscope"),
            config: home.join("config").join("memscope"),
        };
        let overrides = Overrides {
            database_url: Some(url.to_owned()),
            ..Overrides::default()
        };
        let resolved = config::resolve(dirs, &overrides).unwrap();
        let store = Store::open(&resolved.database_url, Access::Auto)
            .await
            .unwrap();
        let mut app = App::new(&resolved, store, None, Theme::monochrome()).unwrap();
        // The status line names the database: the one thing that differs by design.
        app.state.database = "<database>".to_owned();
        let mut frames = Vec::new();
        settle(&mut app, |a| {
            a.state.list.status == LoadStatus::Loaded
                && a.state.list.thread_tokens.len() == a.state.list.rows.len()
        })
        .await;
        frames.push(screen(&mut app));
        // The chatflow (newest first): its tree and budget panel, then its nodes pane.
        press(&mut app, KeyCode::Enter);
        settle(&mut app, idle).await;
        frames.push(screen(&mut app));
        press(&mut app, KeyCode::Char('o'));
        settle(&mut app, idle).await;
        frames.push(screen(&mut app));
        press(&mut app, KeyCode::Char('o'));
        press(&mut app, KeyCode::Esc);
        // The live chat: its failed turn, its pause marked, the budget's warnings.
        press(&mut app, KeyCode::Down);
        press(&mut app, KeyCode::Enter);
        settle(&mut app, idle).await;
        frames.push(screen(&mut app));
        press(&mut app, KeyCode::Char('!'));
        frames.push(screen(&mut app));
        press(&mut app, KeyCode::Esc);
        press(&mut app, KeyCode::Esc);
        press(&mut app, KeyCode::Char('D'));
        settle(&mut app, |a| {
            a.state.doctor.as_ref().is_some_and(|d| !d.is_running())
        })
        .await;
        // The scan's rate and duration are the clock's, not the database's.
        let doctor = app.state.doctor.as_mut().unwrap();
        doctor.last = doctor.started;
        frames.push(screen(&mut app));
        app.shutdown().await;
        frames
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mysql() {
        let test = module_path!();
        common::mysql::run_mysql(test, move |mysql| async move {
            let compared = common::in_postgres_schema(test, move |postgres| async move {
                let era = Era::Archive;
                build(&postgres, era, &rows(era)).await;
                build(&mysql, era, &rows(era)).await;
                let dump_before = common::mysql::dump(mysql.url());
                let home = tempfile::tempdir().unwrap();
                write_offloaded_outputs(home.path(), postgres.url());
                let on_postgres = frames(home.path(), postgres.url()).await;
                let on_mysql = frames(home.path(), mysql.url()).await;
                assert_eq!(on_postgres.len(), on_mysql.len());
                for (postgres, mysql) in on_postgres.iter().zip(&on_mysql) {
                    assert_eq!(postgres, mysql, "PostgreSQL:\n{postgres}\nMySQL:\n{mysql}");
                }
                // What the frames show is what the reads say, not two empty screens alike.
                let [list, chatflow, nodes, live, warnings, doctor] = &on_mysql[..] else {
                    panic!("six frames");
                };
                assert!(
                    list.contains("Flow chat") && list.contains("Live chat"),
                    "{list}"
                );
                assert!(chatflow.contains("flow question"), "{chatflow}");
                assert!(nodes.contains("llm1") || nodes.contains("LLM"), "{nodes}");
                assert!(live.contains("[paused] question"), "{live}");
                assert!(live.contains("(empty: paused for human input)"), "{live}");
                assert!(
                    warnings.contains("is paused for human input with nothing answered yet"),
                    "{warnings}"
                );
                assert!(doctor.contains("Scanned "), "{doctor}");
                assert_eq!(
                    dump_before,
                    common::mysql::dump(mysql.url()),
                    "the session wrote"
                );
            })
            .await;
            assert!(
                compared,
                "MySQL's TUI is compared with PostgreSQL's: set MEMSCOPE_TEST_PG_URL"
            );
        })
        .await;
    }
}

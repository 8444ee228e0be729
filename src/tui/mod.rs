//! The interactive inspector: `memscope` with no subcommand.
//!
//! A pure core ([`update::update`]) turns events into state changes and effects; a job runner
//! ([`jobs::JobRunner`]) carries effects out on tokio tasks and reports on one channel;
//! components ([`ui`]) draw from the state. Frames are drawn only when something changed, and
//! never wait on the database: the first frame shows the loading state.

pub mod action;
pub mod jobs;
pub mod keymap;
pub mod state;
pub mod theme;
pub mod ui;
pub mod update;

use std::path::Path;
use std::time::Duration;

use color_eyre::eyre::WrapErr;
use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event as TerminalEvent, KeyEventKind, MouseEventKind,
};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{self, UnboundedReceiver};

use crate::config::Resolved;
use crate::store::{Access, Store};
use action::Action;
use jobs::JobRunner;
use keymap::Keymap;

use state::{AppState, Settings};
use theme::Theme;
use update::opened_database::OpenedDatabase;
use update::{Event, JobEvent, start, update};

/// The spinner and polling clock.
pub const TICK: Duration = Duration::from_millis(250);
/// The log file, in the data directory: nothing is ever printed over the screen.
pub const LOG_FILE: &str = "memscope-tui.log";
/// Environment variable turning mouse wheel scrolling on (`1`).
pub const MOUSE_ENV: &str = "MEMSCOPE_MOUSE";
/// Environment variable with the log filter (`info` when unset).
pub const LOG_ENV: &str = "MEMSCOPE_LOG";

/// The state, its job runner and the channel results come back on.
pub struct App {
    pub state: AppState,
    pub theme: Theme,
    runner: JobRunner,
    jobs: UnboundedReceiver<JobEvent>,
}

impl App {
    /// Builds the app and sends its first requests. `keys` overlays the built-in keymap: the
    /// contents of a user's `[keys]` table.
    pub fn new(
        resolved: &Resolved,
        store: Store,
        keys: Option<&toml::Table>,
        theme: Theme,
    ) -> color_eyre::Result<App> {
        let keymap = Keymap::from_toml(keymap::DEFAULT_KEYS, keys)?;
        let (settings, warnings) = Settings::from_config(resolved);
        let database = OpenedDatabase::of(store.clone());
        let mut state = AppState::new(keymap, settings, String::new(), false);
        update::opened_database::take(&mut state, &database);
        state.config_warnings = warnings;
        let (sender, jobs) = mpsc::unbounded_channel();
        let syncers = crate::sync::MbSettings::from_config(resolved);
        let storage = crate::storage::ObjectStore::open(&resolved.storage)?;
        let data_dir = resolved.dirs.data.clone();
        // Configured storage serves every database; memscope's own directory only its own.
        let storage_configured = resolved.files_storage(false).is_some();
        let mut runner = JobRunner::new(
            store,
            storage,
            storage_configured,
            syncers,
            data_dir,
            sender,
        );
        let configured = &resolved.config.summarizer;
        match crate::summarize::Summarizer::from_config(configured) {
            Ok(summarizer) => {
                state.summarizer = state::trim::SummarizerInfo {
                    label: summarizer.label(),
                    offline: summarizer.is_offline(),
                    default_prompt: configured.default_prompt().map(str::to_owned),
                };
                runner.set_summarizer(summarizer);
            }
            Err(error) => state.config_warnings.push(format!(
                "[summarizer]: {error}; using the extractive summarizer"
            )),
        }
        runner.preload(state.settings.counter().encoding());
        for effect in start(&mut state) {
            runner.run(effect);
        }
        Ok(App {
            state,
            theme,
            runner,
            jobs,
        })
    }

    /// Starts the memory-base watcher, as `memscope watch` runs it, unless the database is
    /// read-only or one whose syncs memscope leaves to Langflow: auto-capture bases sync when a session reaches its threshold.
    pub fn start_watcher(&mut self) -> bool {
        self.runner.start_watcher()
    }

    /// Stops the watcher and running syncs (each rolls back at its next check).
    pub async fn shutdown(&mut self) {
        self.runner.shutdown().await;
    }

    /// How `:open` opens another database: as the first was (`--write` or not).
    pub fn set_access(&mut self, access: Access) {
        self.runner.set_access(access);
    }

    /// Opens a conversation, session or thread by its whole id, as `:conv ID` does.
    pub fn open_conversation(&mut self, id: String) {
        for effect in update::open_conversation(&mut self.state, id) {
            self.runner.run(effect);
        }
    }

    /// Applies an event and starts the jobs it asks for.
    pub fn handle(&mut self, event: Event) {
        for effect in update(&mut self.state, event) {
            self.runner.run(effect);
        }
    }

    /// Waits for the next job result and applies it; `false` once no job can report any more.
    pub async fn next_job(&mut self) -> bool {
        match self.jobs.recv().await {
            Some(job) => {
                self.handle(Event::Job(job));
                true
            }
            None => false,
        }
    }

    /// Draws a frame if the state changed since the last one.
    pub fn draw_if_dirty<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
    ) -> color_eyre::Result<()>
    where
        B::Error: Send + Sync + 'static,
    {
        if self.state.dirty {
            terminal.draw(|frame| ui::draw(&self.state, &self.theme, frame))?;
            self.state.dirty = false;
        }
        Ok(())
    }
}

/// What `memscope` asked the TUI for, besides its database.
#[derive(Debug, Default)]
pub struct StartWith {
    /// The first run's: it stands in the status line until the first key, and a footer line
    /// explains the demo's warning until `!` or `?` is pressed.
    pub notice: Option<String>,
    /// The conversation, session or thread to open first (`memscope open ID`), by its whole id.
    pub conversation: Option<String>,
    /// How `:open` opens another database: as this one was (`--write` or not).
    pub access: Access,
}

/// Runs the TUI on `store` until the user quits. The terminal is restored on exit, on error and
/// on panic.
pub async fn run(resolved: Resolved, store: Store, with: StartWith) -> color_eyre::Result<()> {
    let _log_guard = init_logging(&resolved.dirs.data);
    // main may have installed it already; either way panics get its report.
    let _ = color_eyre::install();
    let theme = Theme::from_env(&resolved.config.ui.theme);
    let mut app = App::new(&resolved, store, Some(&resolved.config.keys), theme)?;
    app.set_access(with.access);
    if let Some(notice) = with.notice {
        app.state.say(notice);
        app.state.first_run_hint = true;
    }
    if let Some(id) = with.conversation {
        app.open_conversation(id);
    }
    tracing::info!(database = %app.state.database, "TUI started");
    // ratatui's init chains a panic hook that restores the terminal first.
    let mut terminal = ratatui::try_init().wrap_err("could not set up the terminal")?;
    let mouse = mouse_wanted(resolved.config.ui.mouse);
    let mut result = Ok(());
    if mouse {
        result = capture_mouse().wrap_err("could not capture the mouse");
    }
    if result.is_ok() {
        if app.start_watcher() {
            tracing::info!("memory-base watcher started");
        }
        result = event_loop(&mut app, &mut terminal).await;
    }
    if mouse {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    // The screen is given back first: stopping may wait a moment for a job to roll back.
    app.shutdown().await;
    tracing::info!("TUI stopped");
    result
}

async fn event_loop(
    app: &mut App,
    terminal: &mut ratatui::DefaultTerminal,
) -> color_eyre::Result<()> {
    let mut input = spawn_input_reader();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        app.draw_if_dirty(terminal)?;
        if app.state.quit {
            return Ok(());
        }
        let event = tokio::select! {
            Some(event) = input.recv() => match terminal_event(event) {
                Some(event) => event,
                None => continue,
            },
            Some(job) = app.jobs.recv() => Event::Job(job),
            _ = tick.tick() => Event::Tick,
        };
        app.handle(event);
        // Coalesce whatever else is already waiting into the same frame.
        while let Ok(job) = app.jobs.try_recv() {
            app.handle(Event::Job(job));
        }
    }
}

fn terminal_event(event: TerminalEvent) -> Option<Event> {
    match event {
        TerminalEvent::Key(key) if key.kind == KeyEventKind::Press => Some(Event::Key(key)),
        TerminalEvent::Resize(..) => Some(Event::Resize),
        TerminalEvent::Mouse(mouse) => match mouse.kind {
            MouseEventKind::ScrollUp => Some(Event::Action(Action::Up)),
            MouseEventKind::ScrollDown => Some(Event::Action(Action::Down)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether to capture the mouse for the wheel: `MEMSCOPE_MOUSE` for one run, else `ui.mouse`.
/// Off by default: capturing the mouse takes the terminal's own text selection away.
fn mouse_wanted(configured: bool) -> bool {
    match std::env::var(MOUSE_ENV) {
        Ok(v) => matches!(v.as_str(), "1" | "true" | "on"),
        Err(_) => configured,
    }
}

/// Captures the mouse, and releases it again on panic before the terminal is restored.
fn capture_mouse() -> std::io::Result<()> {
    crossterm::execute!(std::io::stdout(), EnableMouseCapture)?;
    let restore_and_report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        restore_and_report(info);
    }));
    Ok(())
}

/// Terminal input is read on its own thread: crossterm's read blocks.
fn spawn_input_reader() -> UnboundedReceiver<TerminalEvent> {
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(event) = crossterm::event::read() {
            if sender.send(event).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Tracing to `<data dir>/memscope-tui.log`; `None` (and no logging) if the file cannot be
/// opened or a subscriber is already installed.
fn init_logging(data_dir: &Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::EnvFilter;
    std::fs::create_dir_all(data_dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(data_dir.join(LOG_FILE))
        .ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent};

    fn mouse(kind: MouseEventKind) -> TerminalEvent {
        TerminalEvent::Mouse(MouseEvent {
            kind,
            column: 3,
            row: 4,
            modifiers: KeyModifiers::NONE,
        })
    }

    #[test]
    fn terminal_events_become_core_events() {
        let press = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE);
        assert!(matches!(
            terminal_event(TerminalEvent::Key(press)),
            Some(Event::Key(k)) if k == press
        ));
        let mut release = press;
        release.kind = KeyEventKind::Release;
        assert!(terminal_event(TerminalEvent::Key(release)).is_none());
        assert!(matches!(
            terminal_event(TerminalEvent::Resize(80, 24)),
            Some(Event::Resize)
        ));
        assert!(matches!(
            terminal_event(mouse(MouseEventKind::ScrollDown)),
            Some(Event::Action(Action::Down))
        ));
        assert!(matches!(
            terminal_event(mouse(MouseEventKind::ScrollUp)),
            Some(Event::Action(Action::Up))
        ));
        assert!(terminal_event(mouse(MouseEventKind::Moved)).is_none());
    }
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod source_tests;

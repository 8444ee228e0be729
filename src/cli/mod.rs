//! The headless command line: every command prints text for people or JSON for scripts.

pub mod args;
mod commands;
mod demo_database;
pub mod output;

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::config::{self, Dirs, Overrides, Resolved, UrlSource};
use crate::store::{Access, Part, Store};
use args::{Cli, Command, GlobalArgs};
use output::{CliError, CliResult};

/// Everything a command needs: the resolved configuration and how to open the database.
pub struct Context {
    pub resolved: Resolved,
    pub global: GlobalArgs,
    /// Every database a command opened, closed when it is done: SQLite removes a WAL-mode
    /// file's `-wal` and `-shm` only when its last connection closes.
    opened: std::sync::Mutex<Vec<Store>>,
}

impl Context {
    pub fn new(global: GlobalArgs) -> CliResult<Context> {
        let overrides = Overrides {
            config_file: global.config.clone(),
            database_url: global.db.clone(),
            dify_env: global.dify_env.clone(),
            ..Overrides::default()
        }
        .with_env();
        let resolved = config::resolve(Dirs::from_env()?, &overrides)?;
        Ok(Context {
            resolved,
            global,
            opened: Default::default(),
        })
    }

    /// The embedded default database's file, when that is the database in use.
    pub fn default_database_file(&self) -> Option<PathBuf> {
        (self.resolved.url_source == UrlSource::EmbeddedDefault)
            .then(|| self.resolved.dirs.default_database_file())
    }

    /// Opens the configured database. The embedded default is created and filled with the small
    /// demo on first use, so memscope has something to show on a fresh machine.
    pub async fn open(&self) -> CliResult<Store> {
        if let Some(file) = self.default_database_file()
            && !file.exists()
        {
            demo_database::create_default_database(&self.resolved, &file).await?;
        }
        let access = if self.global.write {
            Access::Write
        } else {
            Access::Auto
        };
        let store = match Store::open(&self.resolved.database_url, access).await {
            Ok(store) => store,
            Err(error) => return Err(self.with_dify_hint(error.into())),
        };
        self.opened
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(store.clone());
        Ok(store)
    }

    /// A database error with the note Dify's settings left about the host, when the URL came
    /// from them (`DB_HOST=db_postgres` resolves only inside Dify's Docker network).
    pub(crate) fn with_dify_hint(&self, error: CliError) -> CliError {
        let note = self
            .resolved
            .dify
            .as_ref()
            .filter(|_| self.resolved.url_source == UrlSource::DifyEnv)
            .and_then(|dify| dify.notes.iter().find(|n| n.starts_with("DB_HOST")));
        match note {
            Some(note) => error.with_hint(note.clone()),
            None => error,
        }
    }

    /// Dify's object storage as configured (`[storage]`, or Dify's settings).
    pub fn storage(&self) -> CliResult<crate::storage::ObjectStore> {
        crate::storage::ObjectStore::open(&self.resolved.storage)
            .map_err(|e| config::ConfigError::Storage(e.to_string()).into())
    }

    /// Closes the databases the command opened.
    async fn close(&self) {
        let opened = std::mem::take(
            &mut *self
                .opened
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for store in opened {
            store.close().await;
        }
    }

    /// Opens the database for a command that reads `part` of it: a database without that part
    /// (chat memories on Dify, conversations on Langflow) fails with one line saying what it is.
    pub async fn open_for(&self, part: Part) -> CliResult<Store> {
        let store = self.open().await?;
        store.require(part)?;
        Ok(store)
    }
}

/// The process entry point: parses arguments, runs the command, maps failures to exit codes.
/// Every error goes to standard error (one JSON object under `--json`), nothing to standard
/// output.
pub fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return command_line_error(error),
    };
    let json = cli.global.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(CliError::from(e), json),
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => std::process::ExitCode::from(code as u8),
        Err(error) => fail(error, json),
    }
}

fn fail(error: CliError, json: bool) -> std::process::ExitCode {
    error.print(json);
    std::process::ExitCode::from(error.code as u8)
}

/// clap's own errors exit 2; `--help` and `--version` print to standard output and exit 0.
/// Under `--json` a wrong command line is a JSON error object too.
fn command_line_error(error: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    let json = std::env::args_os().any(|arg| arg == "--json");
    if json
        && !matches!(
            error.kind(),
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
        )
    {
        let message = error.render().to_string();
        let first = message
            .lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("wrong command line")
            .trim_start_matches("error: ")
            .to_owned();
        return fail(
            CliError::usage(first).with_hint("`memscope help` lists the commands and flags"),
            true,
        );
    }
    error.exit()
}

async fn dispatch(cli: Cli) -> CliResult {
    // Generated from the command line alone: a broken configuration does not stop them.
    match cli.command {
        Some(Command::Completions(args)) => return commands::shell::completions(args.shell),
        Some(Command::Man(args)) => return commands::shell::man(args.dir.as_deref()),
        _ => {}
    }
    let context = Context::new(cli.global)?;
    let result = run(&context, cli.command).await;
    context.close().await;
    result
}

async fn run(context: &Context, command: Option<Command>) -> CliResult {
    match command {
        // The TUI when a person is at the terminal; the summary when piped.
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => tui(context).await,
        None => commands::summary::run(context).await,
        Some(Command::Info) => commands::info::run(context).await,
        Some(Command::Init) => commands::demo::init(context).await,
        Some(Command::Demo(args)) => commands::demo::run(context, &args).await,
        Some(Command::Conversations(args)) => commands::conversations::run(context, &args).await,
        Some(Command::Thread(args)) => commands::thread::run(context, &args).await,
        Some(Command::History(args)) => commands::history::run(context, &args).await,
        Some(Command::Tokens(args)) => commands::tokens::run(context, &args),
        Some(Command::Doctor(args)) => commands::doctor::run(context, &args).await,
        Some(Command::ChatMemory(command)) => commands::chat_memory::run(context, command).await,
        Some(Command::Trim(command)) => commands::trim::run(context, command).await,
        Some(Command::Nodes(args)) => commands::nodes::list(context, &args).await,
        Some(Command::NodeContext(args)) => commands::nodes::context(context, &args).await,
        Some(Command::Mb(args)) => commands::mb::run(context, &args).await,
        Some(Command::Kbs) => commands::mb::kbs(context).await,
        Some(Command::Capture(args)) => commands::mb::capture(context, &args).await,
        Some(Command::Watch(args)) => commands::mb::watch(context, &args).await,
        Some(Command::Completions(_) | Command::Man(_)) => {
            unreachable!("dispatch answers them before reading the configuration")
        }
    }
}

async fn tui(context: &Context) -> CliResult {
    // The first run's notice goes to the status line: the TUI's screen hides standard error.
    // The status line names the database file first; the notice only has to say what it is.
    let notice = context
        .default_database_file()
        .filter(|file| !file.exists())
        .map(|_| "first run: demo database created".to_owned());
    let store = context.open().await?;
    crate::tui::run(context.resolved.clone(), store, notice)
        .await
        .map_err(|e| CliError::failure(format!("{e:#}")))?;
    Ok(output::ExitCode::Ok)
}

/// The token counter the flags ask for, defaulting to the configuration.
pub fn counter_from(
    context: &Context,
    args: &args::TokenArgs,
) -> CliResult<(crate::memory::tokens::TokenCounter, String)> {
    let tokens = &context.resolved.config.tokens;
    let model = args.model.clone().unwrap_or_else(|| tokens.model.clone());
    let counter = args.counter.as_deref().unwrap_or(&tokens.counter);
    let encoding = args.encoding.as_deref().unwrap_or(&tokens.encoding);
    let counter = crate::inspect::token_counter(&model, counter, Some(encoding))?;
    Ok((counter, model))
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &Path) -> CliResult<String> {
    if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::failure(format!("cannot read standard input: {e}")))
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::failure(format!("cannot read {}: {e}", path.display())))
    }
}

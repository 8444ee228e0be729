//! The headless command line: every command prints text for people or JSON for scripts.

pub mod args;
mod commands;
mod context;
mod demo_database;
pub mod output;

use clap::Parser;

use args::{Cli, Command};
use context::Context;
use output::{CliError, CliResult};

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
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => tui(context, None).await,
        Some(Command::Open(args)) => tui(context, Some(&args.conversation)).await,
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
        Some(Command::Checkpoints(command)) => {
            commands::checkpoint_prune::run(context, command).await
        }
        Some(Command::Nodes(args)) => commands::nodes::list(context, &args).await,
        Some(Command::NodeContext(args)) => commands::nodes::context(context, &args).await,
        Some(Command::AgentSessions(args)) => commands::agent_sessions::run(context, &args).await,
        Some(Command::Export(args)) => commands::export::run(context, &args).await,
        Some(Command::Mb(args)) => commands::mb::run(context, &args).await,
        Some(Command::Kbs) => commands::mb::kbs(context).await,
        Some(Command::Capture(args)) => commands::mb::capture(context, &args).await,
        Some(Command::Watch(args)) => commands::mb::watch(context, &args).await,
        Some(Command::Completions(_) | Command::Man(_)) => {
            unreachable!("dispatch answers them before reading the configuration")
        }
    }
}

/// The TUI, on `conversation` when one is given (`memscope open ID`): an unknown id fails as
/// `thread` does, before the screen is taken.
async fn tui(context: &Context, conversation: Option<&str>) -> CliResult {
    // The first run's notice goes to the status line: the TUI's screen hides standard error.
    // The status line names the database file first; the notice only has to say what it is.
    let notice = context
        .default_database_file()
        .filter(|file| !file.exists())
        .map(|_| "first run: demo database created".to_owned());
    let store = context.open().await?;
    let conversation = match conversation {
        Some(given) => Some(commands::open::resolve(&store, given).await?),
        None => None,
    };
    if conversation.is_some() && !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(
            CliError::usage("open draws the terminal UI: run it in a terminal")
                .with_hint("`memscope thread ID` and `memscope history ID` print it instead"),
        );
    }
    let with = crate::tui::StartWith {
        notice,
        conversation,
        access: context.access(),
    };
    crate::tui::run(context.resolved.clone(), store, with)
        .await
        .map_err(|e| CliError::failure(format!("{e:#}")))?;
    Ok(output::ExitCode::Ok)
}

//! `completions` and `man`: a shell completion script and the manual pages, both generated from
//! the command line clap parses, so they never fall behind a new command or flag.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::args::Cli;
use crate::cli::output::{CliError, CliResult, ExitCode};

/// Prints the completion script of `shell` on standard output.
pub fn completions(shell: clap_complete::Shell) -> CliResult {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "memscope", &mut script);
    write_out(&script)
}

/// Prints memscope(1) on standard output, or writes it and one page per command
/// (`memscope-mb-sync.1`, …) into `dir`.
pub fn man(dir: Option<&Path>) -> CliResult {
    let command = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|()| clap_mangen::generate_to(command, dir))
                .map_err(|e| {
                    CliError::failure(format!(
                        "cannot write the manual pages to {}: {e}",
                        dir.display()
                    ))
                })?;
            println!("manual pages written to {}", dir.display());
            Ok(ExitCode::Ok)
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .map_err(|e| CliError::failure(format!("cannot render the manual page: {e}")))?;
            write_out(&page)
        }
    }
}

fn write_out(bytes: &[u8]) -> CliResult {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        // A closed pipe (`memscope completions bash | head`) is not an error worth a message.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::failure(format!(
            "cannot write to standard output: {e}"
        ))),
        _ => Ok(ExitCode::Ok),
    }
}

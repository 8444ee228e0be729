//! `checkpoints prune|restore`: a LangGraph database's older checkpoints.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum CheckpointsCommand {
    /// Delete a LangGraph thread's older checkpoints with their writes (and blobs nothing
    /// references any more), archived to a file first; without --yes print the plan
    Prune(PruneArgs),
    /// Put every row of a prune's archive back, byte for byte
    Restore {
        /// The archive a prune printed
        #[arg(value_name = "ARCHIVE")]
        archive: PathBuf,
        /// Confirm the restore
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// A thread to prune (repeat for several; default: every thread)
    #[arg(long = "thread", value_name = "THREAD")]
    pub threads: Vec<String>,
    /// Checkpoints each thread keeps, newest first (the latest always stays)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_last: u64,
    /// Delete only checkpoints saved before this date (YYYY-MM-DD, UTC, or RFC 3339)
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
    /// The archive file to write (default: a new file in memscope's data directory)
    #[arg(long, value_name = "FILE")]
    pub archive: Option<PathBuf>,
    /// Then give the freed space back to the file system (VACUUM)
    #[arg(long)]
    pub vacuum: bool,
    /// Confirm the prune
    #[arg(long)]
    pub yes: bool,
}

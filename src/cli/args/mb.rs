//! `mb`'s subcommands, `capture` and `watch`, and the sync flags they share.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `--threshold`: 1 to Langflow's 32-bit maximum, checked where the TUI form checks it.
fn threshold_arg(text: &str) -> Result<i64, String> {
    crate::inspect::memory_bases::parse_threshold(text)
}

/// A count that must be at least 1 (sizes, batch lengths, result counts).
fn positive_usize(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?} is not a whole number of at least 1")),
    }
}

/// How syncs embed and lock: overrides of `[memory_bases]` in the configuration.
#[derive(Debug, Args, Clone)]
pub struct SyncArgs {
    /// OpenAI-compatible embeddings server (http://host:port) for bases whose model is not hashing-lexical [config: memory_bases.embeddings_url]
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_URL", value_name = "URL")]
    pub embeddings_url: Option<String>,
    /// Dimension of that server's vectors [config: memory_bases.embeddings_dimension]
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_DIMENSION", value_parser = positive_usize)]
    pub embeddings_dimension: Option<usize>,
    /// Texts per embeddings request [config: memory_bases.embeddings_batch]
    #[arg(long, value_parser = positive_usize)]
    pub embeddings_batch: Option<usize>,
    /// Seconds before an embeddings request times out [config: memory_bases.embeddings_timeout_secs]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub embeddings_timeout: Option<u64>,
    /// SQLite sync lease in seconds: how long a killed sync blocks its session [config: memory_bases.lease_secs]
    #[arg(long, env = "MEMSCOPE_SYNC_LEASE_SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_secs: Option<u64>,
}

impl SyncArgs {
    /// The flags as overrides of `[memory_bases]`.
    pub fn overrides(&self) -> crate::sync::MbOverrides {
        crate::sync::MbOverrides {
            embeddings_url: self.embeddings_url.clone(),
            embeddings_dimension: self.embeddings_dimension,
            embeddings_batch: self.embeddings_batch,
            embeddings_timeout_secs: self.embeddings_timeout,
            lease_secs: self.lease_secs,
            watch_interval_secs: None,
        }
    }
}

#[derive(Debug, Args)]
pub struct MbArgs {
    #[command(subcommand)]
    pub command: MbCommand,
    #[command(flatten)]
    pub sync: SyncArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    /// Output messages after the sync cursor
    Messages,
    /// Completed flow runs not yet ingested (Langflow's own unit)
    Runs,
}

#[derive(Debug, Subcommand)]
pub enum MbCommand {
    /// List memory bases with their status and mismatches
    List,
    /// Create a memory base on a flow
    Create {
        /// Name of the new base (unique for the flow's owner)
        name: String,
        /// Flow id or name
        #[arg(long)]
        flow: String,
        /// Pending messages or runs that start an automatic sync: 1 to 2147483647
        #[arg(long, default_value_t = 50, allow_negative_numbers = true, value_parser = threshold_arg)]
        threshold: i64,
        /// What the threshold counts
        #[arg(long, value_enum, default_value_t = UnitArg::Runs)]
        unit: UnitArg,
        /// Sync automatically when a session reaches the threshold
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        auto_capture: bool,
        /// hashing-lexical (offline) or a model of the embeddings server [config: memory_bases.embedding_model]
        #[arg(long)]
        embedding_model: Option<String>,
    },
    /// Show one memory base, its sessions and recent jobs
    Show {
        /// Memory base id or name
        base: String,
    },
    /// Change a memory base's name, threshold, unit or auto-capture
    Update {
        /// Memory base id or name
        base: String,
        /// New name
        #[arg(long)]
        name: Option<String>,
        /// New threshold: 1 to 2147483647
        #[arg(long, allow_negative_numbers = true, value_parser = threshold_arg)]
        threshold: Option<i64>,
        /// What the threshold counts
        #[arg(long, value_enum)]
        unit: Option<UnitArg>,
        /// Sync automatically when a session reaches the threshold (true or false)
        #[arg(long, action = clap::ArgAction::Set)]
        auto_capture: Option<bool>,
    },
    /// Delete a memory base, its sessions and records and its knowledge base
    Delete {
        /// Memory base id or name
        base: String,
        /// Really delete
        #[arg(long)]
        yes: bool,
    },
    /// List a memory base's sessions: cursor, pending against threshold, last sync
    Sessions {
        /// Memory base id or name
        base: String,
    },
    /// Sync now: ingest every pending message of one session or of all
    Sync {
        /// Memory base id or name
        base: String,
        /// Only this session (default: every session of the base)
        #[arg(long)]
        session: Option<String>,
        /// Wait up to this many seconds for a running sync instead of failing at once
        #[arg(long, default_value_t = 0)]
        wait: u64,
    },
    /// Rebuild the knowledge base from scratch (after a mismatch)
    Regenerate {
        /// Memory base id or name
        base: String,
        /// Really clear the cursors and the knowledge base
        #[arg(long)]
        yes: bool,
    },
    /// Check knowledge bases against the database; exits 1 on any mismatch
    Check {
        /// Memory base id or name (default: every base)
        base: Option<String>,
    },
    /// Search a memory base's knowledge base
    Search {
        /// Memory base id or name
        base: String,
        /// What to look for
        query: String,
        /// Only this session's chunks
        #[arg(long)]
        session: Option<String>,
        /// How many chunks to return
        #[arg(long, default_value_t = 5, value_parser = positive_usize)]
        top_k: usize,
    },
    /// Running and recent ingestion jobs
    Jobs {
        /// Memory base id or name (default: every base)
        base: Option<String>,
        /// At most this many jobs
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i64).range(1..))]
        limit: i64,
    },
    /// Cancel a queued or running ingestion job (any process)
    Cancel {
        /// Job id, as `mb jobs` lists it
        job: String,
    },
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Flow id or name
    #[arg(long)]
    pub flow: String,
    /// The session (chat) the run belongs to
    #[arg(long)]
    pub session: String,
    /// The run's id (default: a new one)
    #[arg(long)]
    pub run: Option<String>,
    /// JSON list of {sender, text, sender_name?, is_output?, content_blocks?, timestamp?}; - for stdin
    #[arg(long, value_name = "FILE", default_value = "-")]
    pub input: PathBuf,
    #[command(flatten)]
    pub sync: SyncArgs,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Seconds between checks [config: memory_bases.watch_interval_secs]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: Option<u64>,
    /// Check once and exit
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub sync: SyncArgs,
}

//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "memscope",
    version,
    about = "Inspect and administer the memory of LLM applications",
    long_about = "Inspect and administer the memory of LLM applications: conversations and their \
regeneration threads, what Dify's TokenBufferMemory sends to the model, token budgets and more.\n\n\
With no command, memscope opens its embedded demo database (created on first run) or the \
configured one."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Database URL (sqlite:///path.db or postgres://…); overrides MEMSCOPE_DATABASE_URL and the config
    #[arg(long, global = true, value_name = "URL")]
    pub db: Option<String>,
    /// Config file to use instead of the user's config.toml
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Allow writes to a database memscope did not create (opened read-only otherwise)
    #[arg(long, global = true)]
    pub write: bool,
    /// Print machine-readable JSON instead of text
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the configuration, paths and database in use
    Info,
    /// Create an empty memory database (or bring one up to this binary's schema)
    Init,
    /// Fill a database with deterministic demo data
    Demo(DemoArgs),
    /// List conversations, most recently active first
    Conversations(ConversationsArgs),
    /// Show a conversation's message tree with a thread marked
    Thread(ThreadArgs),
    /// Show exactly what TokenBufferMemory would send for a conversation
    History(HistoryArgs),
    /// Count tokens of a JSON list of chat messages
    Tokens(TokensArgs),
    /// Scan a database for memory problems; exits 1 when it finds any
    Doctor(DoctorArgs),
    /// List the nodes that ran in a chatflow conversation, with their latest context size
    Nodes(NodesArgs),
    /// Show what one node of a chatflow remembers and sent, with its token budget and timeline
    NodeContext(NodeContextArgs),
    /// Memory bases: list, create, sync into their knowledge base, check, regenerate, search
    Mb(MbArgs),
    /// Record one flow run's messages (a JSON list) and run the memory-base threshold check
    Capture(CaptureArgs),
    /// Sync auto-capture memory bases whenever a session reaches its threshold
    Watch(WatchArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scale {
    Small,
    Large,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// How much data: the story only, or the story plus >= 1,000,000 messages
    #[arg(long, value_enum, default_value_t = Scale::Small)]
    pub scale: Scale,
    /// Random seed: the same seed gives the same data
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct ConversationsArgs {
    /// Only conversations of this app
    #[arg(long, value_name = "ID")]
    pub app: Option<String>,
    /// Match conversation name, id, app name or message text
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// At most this many rows
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Continue after this cursor (printed as `next` by the previous page)
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThreadMode {
    /// Dify's extraction, as main does it (bug #39031 included)
    Dify,
    /// Dify's extraction with the fix of PR #39032
    Fixed,
    /// The true tree path from the leaf up to its root
    Tree,
}

#[derive(Debug, Args)]
pub struct ThreadArgs {
    /// Conversation id
    pub conversation: String,
    /// The leaf to follow (default: the newest message)
    #[arg(long, value_name = "MSG")]
    pub leaf: Option<String>,
    /// Which thread to mark
    #[arg(long, value_enum, default_value_t = ThreadMode::Dify)]
    pub mode: ThreadMode,
}

#[derive(Debug, Args, Clone)]
pub struct TokenArgs {
    /// Model: picks the encoding and the formula's constants (default from config)
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Token counter: openai, plugin, raw or zero (default from config)
    #[arg(long, value_name = "NAME")]
    pub counter: Option<String>,
    /// Encoding override: cl100k_base, o200k_base, p50k_base, r50k_base
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Conversation id
    pub conversation: String,
    /// max_token_limit (default from config: Dify's 2000)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    /// message_limit, the memory window (default: the app's window, else 500)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub message_limit: Option<i64>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// Render as get_history_prompt_text does
    #[arg(long)]
    pub text: bool,
    #[arg(long, default_value = "Human", requires = "text")]
    pub human_prefix: String,
    #[arg(long, default_value = "Assistant", requires = "text")]
    pub ai_prefix: String,
}

#[derive(Debug, Args)]
pub struct TokensArgs {
    /// JSON file: a list of {role, content (string or parts), name?, tool_calls?, tool_call_id?}; - for stdin
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    #[command(flatten)]
    pub tokens: TokenArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Report histories over this many tokens (default from config)
    #[arg(long, value_name = "N")]
    pub budget: Option<i64>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// Show at most this many findings of each kind (all are counted)
    #[arg(long, default_value_t = 20)]
    pub max_per_kind: usize,
}

#[derive(Debug, Args)]
pub struct NodesArgs {
    /// Conversation id
    pub conversation: String,
    /// The leaf whose thread counts as "on thread" (default: the newest message)
    #[arg(long, value_name = "MSG")]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub tokens: TokenArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NodeSource {
    /// Design A: the node memory file in object storage
    Files,
    /// Design B: outputs["context"] of the thread's last run
    Outputs,
    /// What the node actually sent: process_data["prompts"], system prompt included
    Prompts,
}

#[derive(Debug, Args)]
pub struct NodeContextArgs {
    /// Conversation id
    pub conversation: String,
    /// Node id (as `nodes` lists it)
    pub node: String,
    /// The leaf to see the context at (default: the newest message)
    #[arg(long, value_name = "MSG")]
    pub leaf: Option<String>,
    /// Which source to show
    #[arg(long, value_enum, default_value_t = NodeSource::Outputs)]
    pub source: NodeSource,
    /// max_token_limit (default from config: Dify's 2000)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    #[command(flatten)]
    pub tokens: TokenArgs,
}

/// How syncs embed and lock; defaults in code until the config file has them.
#[derive(Debug, Args, Clone)]
pub struct SyncArgs {
    /// OpenAI-compatible embeddings server (http://host:port) for bases whose model is not hashing-lexical
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_URL", value_name = "URL")]
    pub embeddings_url: Option<String>,
    /// Dimension of that server's vectors
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_DIMENSION", default_value_t = 384)]
    pub embeddings_dimension: usize,
    /// Texts per embeddings request
    #[arg(long, default_value_t = 64)]
    pub embeddings_batch: usize,
    /// Seconds before an embeddings request times out
    #[arg(long, default_value_t = 60)]
    pub embeddings_timeout: u64,
    /// SQLite sync lease in seconds: how long a killed sync blocks its session
    #[arg(long, env = "MEMSCOPE_SYNC_LEASE_SECS", default_value_t = 30)]
    pub lease_secs: u64,
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
    /// Output messages after the cursor (the seed)
    Messages,
    /// Completed flow runs not yet ingested (Langflow as shipped)
    Runs,
}

#[derive(Debug, Subcommand)]
pub enum MbCommand {
    /// List memory bases with their status and mismatches
    List,
    /// Create a memory base on a flow
    Create {
        name: String,
        /// Flow id or name
        #[arg(long)]
        flow: String,
        #[arg(long, default_value_t = 50)]
        threshold: i64,
        #[arg(long, value_enum, default_value_t = UnitArg::Runs)]
        unit: UnitArg,
        /// Sync automatically when a session reaches the threshold
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        auto_capture: bool,
        /// hashing-lexical (offline) or a model of the embeddings server
        #[arg(long, default_value = "hashing-lexical")]
        embedding_model: String,
    },
    /// Show one memory base, its sessions and recent jobs
    Show { base: String },
    /// Change a memory base's name, threshold, unit or auto-capture
    Update {
        base: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        threshold: Option<i64>,
        #[arg(long, value_enum)]
        unit: Option<UnitArg>,
        #[arg(long, action = clap::ArgAction::Set)]
        auto_capture: Option<bool>,
    },
    /// Delete a memory base, its sessions and records and its knowledge base
    Delete {
        base: String,
        /// Really delete
        #[arg(long)]
        yes: bool,
    },
    /// List a memory base's sessions: cursor, pending against threshold, last sync
    Sessions { base: String },
    /// Sync now: ingest every pending message of one session or of all
    Sync {
        base: String,
        #[arg(long)]
        session: Option<String>,
        /// Wait up to this many seconds for a running sync instead of failing at once
        #[arg(long, default_value_t = 0)]
        wait: u64,
    },
    /// Rebuild the knowledge base from scratch (after a mismatch)
    Regenerate {
        base: String,
        /// Really clear the cursors and the knowledge base
        #[arg(long)]
        yes: bool,
    },
    /// Check knowledge bases against the database; exits 1 on any mismatch
    Check { base: Option<String> },
    /// Search a memory base's knowledge base
    Search {
        base: String,
        query: String,
        #[arg(long)]
        session: Option<String>,
        #[arg(long, default_value_t = 5)]
        top_k: usize,
    },
    /// Running and recent ingestion jobs
    Jobs {
        base: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: i64,
    },
    /// Cancel a queued or running ingestion job (any process)
    Cancel { job: String },
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Flow id or name
    #[arg(long)]
    pub flow: String,
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
    /// Seconds between checks
    #[arg(long, default_value_t = 2)]
    pub interval: u64,
    /// Check once and exit
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub sync: SyncArgs,
}

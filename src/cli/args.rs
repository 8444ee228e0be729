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

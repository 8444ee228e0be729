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
    /// Chat memories (seed 004): list, show, add and delete messages
    #[command(subcommand)]
    ChatMemory(ChatMemoryCommand),
    /// Preview trims on any history, apply them to chat memories, undo the last one
    #[command(subcommand)]
    Trim(TrimCommand),
    /// List the nodes that ran in a chatflow conversation, with their latest context size
    Nodes(NodesArgs),
    /// Show what one node of a chatflow remembers and sent, with its token budget and timeline
    NodeContext(NodeContextArgs),
    /// Memory bases: list, create, sync into their knowledge base, check, regenerate, search
    Mb(MbArgs),
    /// Every knowledge base under the KB root, memory bases marked
    Kbs,
    /// Record one flow run's messages (a JSON list) and run the memory-base threshold check
    Capture(CaptureArgs),
    /// Sync auto-capture memory bases whenever a session reaches its threshold
    Watch(WatchArgs),
}

#[derive(Debug, Subcommand)]
pub enum ChatMemoryCommand {
    /// Every chat memory with its message count
    List,
    /// A chat memory's policy and messages (Get Memory Data: limit and offset)
    Show {
        /// Chat memory id
        id: String,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value_t = 0)]
        offset: i64,
    },
    /// Add a message to (memory node, chat id), creating the memory if needed, then apply its policy
    Add(Box<ChatMemoryAddArgs>),
    /// Delete messages (latest workflow request or all, by roles); `trim undo` restores them
    Delete(ChatMemoryDeleteArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageRole {
    User,
    Assistant,
}

#[derive(Debug, Args)]
pub struct ChatMemoryAddArgs {
    /// Memory node id
    #[arg(long)]
    pub node: String,
    /// Chat id
    #[arg(long)]
    pub chat: String,
    #[arg(long, value_enum)]
    pub role: MessageRole,
    #[arg(long)]
    pub content: String,
    /// Files as JSON: {"files": [{"url", "file_name", "content_type", …}]} or a bare list
    #[arg(long, value_name = "JSON")]
    pub files: Option<String>,
    /// Workflow request id the message belongs to
    #[arg(long, value_name = "ID")]
    pub request: Option<String>,
    /// Label of a new memory
    #[arg(long, default_value = "Chat Memory")]
    pub label: String,
    /// Policy JSON of a new memory (seed 004 defaults when absent)
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub policy: String,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeleteScopeArg {
    /// Messages of the most recent workflow request
    Latest,
    All,
}

#[derive(Debug, Args)]
pub struct ChatMemoryDeleteArgs {
    /// Chat memory id
    pub id: String,
    #[arg(long, value_enum)]
    pub scope: DeleteScopeArg,
    /// Roles to delete
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [MessageRole::User, MessageRole::Assistant])]
    pub roles: Vec<MessageRole>,
    /// Confirm the deletion
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum TrimCommand {
    /// What a trim would do, changing nothing
    Preview(Box<TrimArgs>),
    /// Apply a chat memory's trim (policy and flags) in one transaction
    Apply(Box<TrimArgs>),
    /// Restore the last change of a chat memory exactly
    Undo {
        /// Chat memory id
        #[arg(long, value_name = "ID")]
        chat_memory: String,
        /// Confirm the undo
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
pub struct TrimArgs {
    /// A JSON list of messages; - for stdin
    #[arg(long, value_name = "FILE", group = "source")]
    pub input: Option<PathBuf>,
    /// A conversation's history (what TokenBufferMemory reads)
    #[arg(long, value_name = "ID", group = "source")]
    pub conversation: Option<String>,
    /// A chat memory (its stored policy is the starting point)
    #[arg(long, value_name = "ID", group = "source")]
    pub chat_memory: Option<String>,
    /// With --conversation: this node's context instead of the thread history
    #[arg(long, value_name = "NODE", requires = "conversation")]
    pub node: Option<String>,
    /// With --node: the leaf to read the context at (default: the newest message)
    #[arg(long, value_name = "MSG", requires = "node")]
    pub leaf: Option<String>,
    /// With --node: which context source (default: outputs, design B)
    #[arg(
        long = "source",
        id = "node_source",
        value_enum,
        value_name = "SOURCE",
        requires = "node"
    )]
    pub node_source: Option<NodeSource>,
    /// first|last: LangChain's trim_messages; drop-oldest|drop-middle: a chat memory policy
    #[arg(long, value_name = "S")]
    pub strategy: Option<String>,
    /// messages (len), or a token counter: openai, plugin, raw, zero (default from config)
    #[arg(long, value_name = "NAME")]
    pub counter: Option<String>,
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
    /// trim_messages' max_tokens, or a policy's token limit
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    #[arg(long)]
    pub include_system: bool,
    /// Message types the result must start on (comma-separated: human, ai, system, tool)
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    pub start_on: Option<Vec<String>>,
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    pub end_on: Option<Vec<String>>,
    #[arg(long)]
    pub allow_partial: bool,
    /// allow_partial's text splitter separator (default: newline)
    #[arg(long, value_name = "SEP")]
    pub split_on: Option<String>,
    /// A whole policy as JSON (flags below override its keys)
    #[arg(long, value_name = "JSON")]
    pub policy: Option<String>,
    /// messages or tokens
    #[arg(long, value_name = "T")]
    pub limit_type: Option<String>,
    /// continuous or threshold
    #[arg(long, value_name = "M")]
    pub trim_mode: Option<String>,
    #[arg(long, value_name = "N")]
    pub max_messages: Option<u64>,
    #[arg(long, value_name = "N")]
    pub trigger: Option<u64>,
    #[arg(long, value_name = "N")]
    pub target: Option<u64>,
    #[arg(long, value_name = "N")]
    pub min_messages: Option<u64>,
    #[arg(long, value_name = "N")]
    pub keep_first: Option<u64>,
    #[arg(long)]
    pub clear_tool_results: bool,
    #[arg(long, value_name = "N")]
    pub max_images: Option<u64>,
    /// Replace the removed messages by a summary
    #[arg(long)]
    pub summarize: bool,
    /// The summarizer's rules (seed 004's default when absent)
    #[arg(long, value_name = "TEXT")]
    pub summarize_prompt: Option<String>,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
    /// Confirm applying
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummarizerKind {
    /// No summary: report the prompt that would be sent
    None,
    /// Offline: the most informative sentences within the token cap
    Extractive,
    /// An OpenAI-compatible chat-completions endpoint
    Openai,
}

#[derive(Debug, Args, Clone)]
pub struct SummarizerArgs {
    /// Default: `[summarizer] kind` of the config (extractive unless set)
    #[arg(long, value_enum)]
    pub summarizer: Option<SummarizerKind>,
    /// Default: `[summarizer] base_url`
    #[arg(long, value_name = "URL", env = "MEMSCOPE_SUMMARIZER_URL")]
    pub summarizer_url: Option<String>,
    /// Default: `[summarizer] model`
    #[arg(long, value_name = "MODEL", env = "MEMSCOPE_SUMMARIZER_MODEL")]
    pub summarizer_model: Option<String>,
    /// Environment variable holding the API key (default: `[summarizer] api_key_env`)
    #[arg(long, value_name = "VAR")]
    pub summarizer_key_env: Option<String>,
    /// Default: `[summarizer] timeout_seconds`
    #[arg(long, value_name = "SECONDS")]
    pub summarizer_timeout: Option<u64>,
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

/// How syncs embed and lock: overrides of `[memory_bases]` in the configuration.
#[derive(Debug, Args, Clone)]
pub struct SyncArgs {
    /// OpenAI-compatible embeddings server (http://host:port) for bases whose model is not hashing-lexical [config: memory_bases.embeddings_url]
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_URL", value_name = "URL")]
    pub embeddings_url: Option<String>,
    /// Dimension of that server's vectors [config: memory_bases.embeddings_dimension]
    #[arg(long, env = "MEMSCOPE_EMBEDDINGS_DIMENSION")]
    pub embeddings_dimension: Option<usize>,
    /// Texts per embeddings request [config: memory_bases.embeddings_batch]
    #[arg(long)]
    pub embeddings_batch: Option<usize>,
    /// Seconds before an embeddings request times out [config: memory_bases.embeddings_timeout_secs]
    #[arg(long)]
    pub embeddings_timeout: Option<u64>,
    /// SQLite sync lease in seconds: how long a killed sync blocks its session [config: memory_bases.lease_secs]
    #[arg(long, env = "MEMSCOPE_SYNC_LEASE_SECS")]
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
        /// hashing-lexical (offline) or a model of the embeddings server [config: memory_bases.embedding_model]
        #[arg(long)]
        embedding_model: Option<String>,
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
    /// Seconds between checks [config: memory_bases.watch_interval_secs]
    #[arg(long)]
    pub interval: Option<u64>,
    /// Check once and exit
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub sync: SyncArgs,
}

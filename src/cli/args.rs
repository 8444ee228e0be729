//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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

#[derive(Debug, Parser)]
#[command(
    name = "memscope",
    version,
    about = "Inspect and administer the memory of LLM applications",
    long_about = "Inspect and administer the memory of LLM applications: conversations and their \
regeneration threads, what Dify's TokenBufferMemory sends to the model, token budgets and more.\n\n\
With no command, memscope opens the terminal UI on its embedded demo database (created on \
first run) or the configured one; press ? in it for every key, q to quit. `memscope info` shows \
the files and paths in use."
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
    /// Dify's docker/.env (or an env dump of its API container): database URL and object storage from Dify's own settings
    #[arg(long, global = true, value_name = "PATH")]
    pub dify_env: Option<PathBuf>,
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
    /// Chat memories (the message lists memory nodes store per chat): list, show, add and delete messages
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
    /// Print a shell completion script (source it from the shell's startup file)
    Completions(CompletionsArgs),
    /// Print the manual page (roff; `memscope man | man -l -` shows it), or write every command's page
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write memscope.1 and one page per command (memscope-mb-sync.1, …) into this directory
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum ChatMemoryCommand {
    /// Every chat memory with its message count
    List,
    /// A chat memory's policy and messages (Get Memory Data: limit and offset)
    Show {
        /// Chat memory id (or a unique prefix, as lists show it)
        id: String,
        /// Messages per page
        #[arg(long, default_value_t = 50, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(1..))]
        limit: i64,
        /// Messages to skip before the page
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
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
    /// Who wrote the message
    #[arg(long, value_enum)]
    pub role: MessageRole,
    /// The message text
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
    /// Policy JSON of a new memory (the built-in defaults when absent)
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub policy: String,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeleteScopeArg {
    /// Messages of the most recent workflow request
    Latest,
    /// Every message
    All,
}

#[derive(Debug, Args)]
pub struct ChatMemoryDeleteArgs {
    /// Chat memory id (or a unique prefix, as lists show it)
    pub id: String,
    /// Which messages: those of the latest workflow request, or all
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
    /// Apply a chat memory's trim (its policy, changed by the flags) in one transaction
    #[command(
        mut_arg("input", |a| a.hide(true)),
        mut_arg("conversation", |a| a.hide(true)),
        mut_arg("node", |a| a.hide(true)),
        mut_arg("leaf", |a| a.hide(true)),
        mut_arg("node_source", |a| a.hide(true)),
        mut_arg("include_system", |a| a.hide(true)),
        mut_arg("start_on", |a| a.hide(true)),
        mut_arg("end_on", |a| a.hide(true)),
        mut_arg("allow_partial", |a| a.hide(true)),
        mut_arg("split_on", |a| a.hide(true)),
        mut_arg("strategy", |a| a.help("drop-oldest or drop-middle (default: the memory's policy)"))
    )]
    Apply {
        #[command(flatten)]
        args: Box<TrimArgs>,
        /// Confirm applying
        #[arg(long)]
        yes: bool,
    },
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
    /// With --node: which context source (default: outputs, the node output context)
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
    /// Model whose tokenizer counts (default from config)
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Encoding override: cl100k_base, o200k_base, p50k_base, r50k_base
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
    /// trim_messages' max_tokens, or a policy's token limit
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub max_tokens: Option<i64>,
    /// first|last: always keep the leading system message
    #[arg(long)]
    pub include_system: bool,
    /// Message types the result must start on (comma-separated: human, ai, system, tool)
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    pub start_on: Option<Vec<String>>,
    /// Message types the result must end on (comma-separated: human, ai, system, tool)
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    pub end_on: Option<Vec<String>>,
    /// first|last: split the message at the limit instead of dropping it whole
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
    /// Policy: the most messages kept (limit type messages)
    #[arg(long, value_name = "N")]
    pub max_messages: Option<u64>,
    /// Threshold trimming: trim once the history reaches this size
    #[arg(long, value_name = "N")]
    pub trigger: Option<u64>,
    /// Threshold trimming: the size a trim brings the history down to
    #[arg(long, value_name = "N")]
    pub target: Option<u64>,
    /// Policy: never trim below this many messages
    #[arg(long, value_name = "N")]
    pub min_messages: Option<u64>,
    /// drop-middle: the first messages always kept
    #[arg(long, value_name = "N")]
    pub keep_first: Option<u64>,
    /// Policy: blank the results of old tool calls before trimming
    #[arg(long)]
    pub clear_tool_results: bool,
    /// Policy: the most images kept across the history
    #[arg(long, value_name = "N")]
    pub max_images: Option<u64>,
    /// Replace the removed messages by a summary
    #[arg(long)]
    pub summarize: bool,
    /// The summarizer's rules (the built-in rules when absent)
    #[arg(long, value_name = "TEXT")]
    pub summarize_prompt: Option<String>,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummarizerKind {
    /// No summary: report the prompt that would be sent
    None,
    /// Offline: the most informative sentences within the token cap
    Extractive,
    /// An OpenAI-compatible chat-completions endpoint (`[summarizer] kind = "chat-completions"`)
    #[value(alias = "openai")]
    ChatCompletions,
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
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
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
    #[arg(long, default_value_t = 50, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
    /// Continue after this cursor (printed as `next` by the previous page)
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,
    /// List conversations deleted in Dify too, marked deleted (Dify hides them)
    #[arg(long)]
    pub include_deleted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThreadMode {
    /// Dify's extraction, as Dify runs it (it can stop early at an unrelated root)
    Dify,
    /// Dify's extraction with the parent fix: unrelated roots no longer end the thread
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
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub max_tokens: Option<i64>,
    /// message_limit, the memory window (default and 0: the app's window, else 500)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub message_limit: Option<i64>,
    #[command(flatten)]
    pub tokens: TokenArgs,
    /// Render as get_history_prompt_text does
    #[arg(long)]
    pub text: bool,
    /// With --text: the label of user lines
    #[arg(long, default_value = "Human", requires = "text")]
    pub human_prefix: String,
    /// With --text: the label of assistant lines
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
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
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
    /// The node memory file in object storage
    Files,
    /// The node output context: outputs["context"] of the thread's last run
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
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
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

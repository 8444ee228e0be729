//! The command line, as clap parses it: the global flags and the commands here, each command
//! group's arguments in its own file (`inspect`: conversations, threads, histories, tokens,
//! doctor and nodes; `chat_memory`; `trim`; `mb`: memory bases, capture and watch).

mod chat_memory;
mod checkpoints;
mod inspect;
mod mb;
mod trim;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use chat_memory::{
    ChatMemoryAddArgs, ChatMemoryCommand, ChatMemoryDeleteArgs, DeleteScopeArg, MessageRole,
};
pub use checkpoints::{CheckpointsCommand, PruneArgs};
pub use inspect::{
    AgentSessionsArgs, ConversationsArgs, DoctorArgs, ExportArgs, HistoryArgs, NodeContextArgs,
    NodeSource, NodesArgs, OpenArgs, SessionArgs, ThreadArgs, ThreadMode, TokenArgs, TokensArgs,
};
pub use mb::{CaptureArgs, MbArgs, MbCommand, SyncArgs, UnitArg, WatchArgs};
pub use trim::{SummarizerArgs, SummarizerKind, TrimArgs, TrimCommand};

#[derive(Debug, Parser)]
#[command(
    name = "memscope",
    version,
    about = "Inspect and administer the memory of LLM applications: Dify, Langflow, LangGraph, \
the OpenAI Agents SDK and Google ADK",
    long_about = "Inspect and administer the memory of LLM applications: Dify (on PostgreSQL, MySQL \
or MariaDB), Langflow, LangGraph's checkpoint savers, the OpenAI Agents SDK's sessions, Google \
ADK's session services and memscope's own demo database.\n\n\
It shows conversations and their regeneration trees, what each application's memory sends to \
the model, token budgets and more.\n\n\
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

/// The options every command takes, shown under their own heading in each command's help so
/// they do not mix with the command's own.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Database: a file path, sqlite:///path.db, postgres://… or mysql://… (Dify on MySQL or MariaDB); overrides MEMSCOPE_DATABASE_URL and the config
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
    /// Open the terminal UI on one conversation, session or thread
    ///
    /// The id is looked up first: an unknown one fails as `thread` does (exit 3), before the
    /// screen is taken. Esc goes back to the list, as after opening it there.
    Open(OpenArgs),
    /// List conversations, most recently active first
    Conversations(ConversationsArgs),
    /// Show a conversation's message tree with a thread marked
    Thread(ThreadArgs),
    /// Show exactly what a conversation's memory sends the model (Dify's TokenBufferMemory, a
    /// Langflow Agent's chat memory, a LangGraph thread's messages, an agent session's items)
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
    /// LangGraph checkpoints: prune a thread's older ones (archived first), restore an archive
    #[command(subcommand)]
    Checkpoints(CheckpointsCommand),
    /// List the nodes that ran in a chatflow conversation, with their latest context size
    Nodes(NodesArgs),
    /// Show what one node of a chatflow remembers and sent, with its token budget and timeline
    NodeContext(NodeContextArgs),
    /// List a Dify conversation's Agent V2 runtime sessions with what their snapshots hold
    AgentSessions(AgentSessionsArgs),
    /// Write one JSON bundle of a conversation for a bug report, credentials removed
    ///
    /// The bundle holds what `thread`, `history`, `nodes` and `node-context` print with --json
    /// (a Dify conversation's tree and thread, its history with the token budget, each chatflow
    /// node's context; a Langflow session's flows and what its Agent is fed), the database's kind
    /// (source, backend, schema revision) and memscope's version. Passwords in URLs, signed URL
    /// parameters, API keys and tokens, and fields named for a secret are replaced with
    /// [redacted]; `secrets_redacted` counts them. Read the bundle before you share it: a secret
    /// of an unknown shape in a message's text stays.
    ///
    /// Without --out the bundle goes to standard output. With --out it is written whole or not at
    /// all, and an existing file is never replaced unless --yes is given (exit 2 otherwise).
    Export(ExportArgs),
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
    /// Write a LangGraph checkpoint database instead: a new SQLite file at PATH, in
    /// SqliteSaver's layout and format, with a tool-using agent, a rewound conversation, an
    /// operator's edit, a graph that deletes old messages, a subgraph and a long thread
    #[arg(long, value_name = "PATH", conflicts_with = "scale")]
    pub langgraph: Option<PathBuf>,
    /// Write an OpenAI Agents SDK session file instead: a new SQLite file at PATH, as
    /// SQLiteSession and AdvancedSQLiteSession write it, with a tool-using agent, a run that
    /// stopped before its tool answered, a long session and a session with a branch
    #[arg(long, value_name = "PATH", conflicts_with_all = ["scale", "langgraph"])]
    pub openai_agents: Option<PathBuf>,
    /// Write a Google ADK session file instead: a new SQLite file at PATH, as
    /// SqliteSessionService writes it (`adk web`'s `.adk/session.db`), with a tool call, a
    /// transfer to a sub-agent and a long session
    #[arg(long, value_name = "PATH", conflicts_with_all = ["scale", "langgraph", "openai_agents"])]
    pub adk: Option<PathBuf>,
}

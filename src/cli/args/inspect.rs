//! The arguments of the commands that read: `conversations`, `thread`, `history`, `tokens`,
//! `doctor`, `nodes` and `node-context`, and the token-counter flags they share.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::sources::conversation::SourceOptions;
use crate::sources::doctor::DEFAULT_KEEP_LAST;

#[derive(Debug, Args)]
pub struct ConversationsArgs {
    /// Only conversations of this app (Dify's app id; Google ADK's app name)
    #[arg(long, value_name = "ID")]
    pub app: Option<String>,
    /// Google ADK: only sessions of this user
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
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
pub struct OpenArgs {
    /// Conversation id (a unique prefix will do), Langflow session id or LangGraph thread id
    pub conversation: String,
}

/// The flags that name one session where an id alone may not (`thread`, `history`, `export`):
/// an OpenAI Agents SDK session's branch, and a Google ADK session's app, user and agent. Each
/// command words `--branch` and `--agent` for what it shows of them.
#[derive(Debug, Args, Clone)]
pub struct SessionArgs {
    /// OpenAI Agents SDK: the branch of an advanced session (default: main)
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Google ADK: the app the session is under (needed when several share its id)
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// Google ADK: the user the session is under (needed when several share its id)
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Google ADK: whose view of the session, the agent whose model is sent it (default: the agent ADK's runner continues with)
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

impl SessionArgs {
    /// `options` with the flags given, as the sources read them.
    pub fn add_to(&self, options: SourceOptions) -> SourceOptions {
        options
            .with("branch", self.branch.as_deref())
            .with("app", self.app.as_deref())
            .with("user", self.user.as_deref())
            .with("agent", self.agent.as_deref())
    }
}

#[derive(Debug, Args)]
#[command(
    mut_arg("branch", |arg| arg.help("OpenAI Agents SDK: the branch of an advanced session whose path is marked (default: main)")),
    mut_arg("agent", |arg| arg.help("Google ADK: whose view is marked, the agent whose model is sent it (default: the agent ADK's runner continues with)")),
)]
pub struct ThreadArgs {
    /// Conversation id (a unique prefix will do), Langflow session id or LangGraph thread id
    pub conversation: String,
    /// The leaf to follow: a message, or a LangGraph checkpoint (default: the newest)
    #[arg(long, value_name = "MSG")]
    pub leaf: Option<String>,
    /// Which thread to mark
    #[arg(long, value_enum, default_value_t = ThreadMode::Dify)]
    pub mode: ThreadMode,
    /// Langflow: the flow (name or id) whose session is shown, when the session is in several
    #[arg(long, value_name = "NAME|ID")]
    pub flow: Option<String>,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Args, Clone)]
pub struct TokenArgs {
    /// Model: picks the encoding and the formula's constants (default from config)
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Token counter: openai, plugin, raw or zero (default from config)
    #[arg(long, value_name = "NAME",
          value_parser = clap::builder::PossibleValuesParser::new(crate::memory::tokens::CounterKind::ALL.map(crate::memory::tokens::CounterKind::name)))]
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
    /// Langflow: the flow (name or id) whose Agent reads the session
    #[arg(long, value_name = "NAME|ID")]
    pub flow: Option<String>,
    /// Langflow: the Agent's number of chat history messages (default 100; 0: memory off)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32))]
    pub n_messages: Option<u32>,
    /// Langflow: the Agent's context id
    #[arg(long, value_name = "C")]
    pub context_id: Option<String>,
    /// LangGraph: the checkpoint whose messages are read (default: the thread's latest)
    #[arg(long, value_name = "CHECKPOINT")]
    pub leaf: Option<String>,
    /// OpenAI Agents SDK: SessionSettings(limit=N), the newest N items the Runner reads (default: all)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub limit: Option<i64>,
    /// OpenAI Agents SDK: EncryptedSession's ttl, items sealed longer ago are skipped (default: none)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub ttl: Option<i64>,
    #[command(flatten)]
    pub session: SessionArgs,
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
    /// On a LangGraph database: the newest checkpoints each thread keeps in the figure of what
    /// `checkpoints prune --keep-last` frees
    #[arg(long, value_name = "N", default_value_t = DEFAULT_KEEP_LAST as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_last: u64,
    /// OpenAI Agents SDK: the app's SessionSettings(limit=N), to find windows that part a tool
    /// call from its output (the database does not record it)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64))]
    pub limit: Option<u64>,
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

#[derive(Debug, Args)]
pub struct AgentSessionsArgs {
    /// Conversation id (an Agent App conversation, or a chatflow's whose agent nodes ran)
    pub conversation: String,
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

#[derive(Debug, Args)]
#[command(
    mut_arg("branch", |arg| arg.help("OpenAI Agents SDK: the branch of an advanced session the bundle holds (default: main)")),
    mut_arg("agent", |arg| arg.help("Google ADK: whose view the bundle holds, the agent whose model is sent it (default: the agent ADK's runner continues with)")),
)]
pub struct ExportArgs {
    /// Conversation id (Dify), session id (Langflow) or thread id (LangGraph)
    pub conversation: String,
    /// Write the bundle to this file (written whole, or not at all) instead of standard output
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// With --out: replace the file if it exists (without it, an existing file is kept and the export refused)
    #[arg(long, requires = "out")]
    pub yes: bool,
    /// Langflow: the flow (name or id) whose Agent reads the session, when the session is in several
    #[arg(long, value_name = "NAME|ID")]
    pub flow: Option<String>,
    /// LangGraph: the checkpoint whose path and messages the bundle holds (default: the latest)
    #[arg(long, value_name = "CHECKPOINT")]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// max_token_limit of the budgets (default from config: Dify's 2000)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub max_tokens: Option<i64>,
    #[command(flatten)]
    pub tokens: TokenArgs,
}

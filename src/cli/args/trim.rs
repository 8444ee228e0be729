//! `trim`'s subcommands, what a trim reads and changes, and the summarizer flags.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::inspect::NodeSource;

#[derive(Debug, Subcommand)]
pub enum TrimCommand {
    /// What a trim would do, changing nothing
    Preview(Box<TrimArgs>),
    /// Apply a trim in one transaction: a chat memory's (its policy, changed by the flags), a
    /// LangGraph thread's (as update_state with RemoveMessage writes it), or an OpenAI Agents SDK
    /// session's (its oldest rows deleted, archived first)
    #[command(
        mut_arg("input", |a| a.hide(true)),
        mut_arg("conversation", |a| a.help("A LangGraph thread (removals written as update_state writes them), or an OpenAI Agents SDK session (its oldest rows deleted)")),
        mut_arg("node", |a| a.hide(true)),
        mut_arg("leaf", |a| a.hide(true)),
        mut_arg("node_source", |a| a.hide(true)),
        mut_arg("app", |a| a.hide(true)),
        mut_arg("user", |a| a.hide(true)),
        mut_arg("strategy", |a| a.help("first|last (a LangGraph thread: default, the cut `history` shows), drop-oldest|drop-middle (default: the memory's policy)"))
    )]
    Apply {
        #[command(flatten)]
        args: Box<TrimArgs>,
        /// Confirm applying
        #[arg(long)]
        yes: bool,
    },
    /// Restore the last change of a chat memory exactly, delete a LangGraph thread's trim
    /// checkpoint, or put back the rows a session's last trim deleted
    #[command(group(clap::ArgGroup::new("undone").required(true)))]
    Undo {
        /// Chat memory id
        #[arg(long, value_name = "ID", group = "undone")]
        chat_memory: Option<String>,
        /// A LangGraph thread whose latest checkpoint is memscope's trim, or an OpenAI Agents SDK
        /// session memscope trimmed
        #[arg(long, value_name = "THREAD", group = "undone")]
        conversation: Option<String>,
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
    /// With --conversation: the app the session is under, where sessions are kept by app and
    /// user (Google ADK; needed when several share its id)
    #[arg(
        long,
        value_name = "APP",
        requires = "conversation",
        conflicts_with = "node"
    )]
    pub app: Option<String>,
    /// With --conversation: the user the session is under (Google ADK; needed when several
    /// share its id)
    #[arg(
        long,
        value_name = "USER",
        requires = "conversation",
        conflicts_with = "node"
    )]
    pub user: Option<String>,
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
    /// first|last: LangChain's trim_messages; drop-oldest|drop-middle: a chat memory policy (a
    /// LangGraph thread starts from the cut `history` shows: last, start_on human,
    /// include_system)
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
    /// A stored session's trim: keep its newest N items (a tool call stays with its output)
    #[arg(long, value_name = "N", requires = "conversation")]
    pub keep_last: Option<usize>,
    /// trim_messages' max_tokens, or a policy's token limit (a LangGraph thread: the budget
    /// `history` cuts with, from config; a stored session: keep its newest items within N)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(0..))]
    pub max_tokens: Option<i64>,
    /// last: always keep the leading system message (on by default on a LangGraph thread;
    /// `--include-system false` turns it off)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub include_system: Option<bool>,
    /// Message types the result must start on (comma-separated: human, ai, system, tool; any:
    /// none, as a LangGraph thread's start_on=human taken back)
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

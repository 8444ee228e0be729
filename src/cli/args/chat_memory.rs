//! `chat-memory`'s subcommands and their arguments.

use clap::{Args, Subcommand, ValueEnum};

use super::trim::SummarizerArgs;

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
    /// Add a message to the memory of (memory node, chat id), then apply its policy
    Add(Box<ChatMemoryAddArgs>),
    /// Delete messages (latest workflow request or all, by roles); `trim undo` restores them
    Delete(ChatMemoryDeleteArgs),
    /// Delete an empty chat memory itself, with its undo history (`delete --scope all` empties one)
    Drop {
        /// Chat memory id (or a unique prefix, as lists show it)
        id: String,
        /// Confirm the deletion
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageRole {
    User,
    Assistant,
}

#[derive(Debug, Args)]
pub struct ChatMemoryAddArgs {
    /// Memory node: its id, a unique prefix of it (as lists show it), or its title (case ignored)
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
    /// Create the memory when the node has none for this chat; a node that matches none is then
    /// a new node of this id
    #[arg(long)]
    pub create: bool,
    /// Label of the memory --create makes (default: the node's title; "Chat Memory" on a new node)
    #[arg(long, visible_alias = "title", requires = "create")]
    pub label: Option<String>,
    /// Policy JSON of the memory --create makes (default: the node's policy; the built-in
    /// defaults on a new node)
    #[arg(long, value_name = "JSON", requires = "create")]
    pub policy: Option<String>,
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

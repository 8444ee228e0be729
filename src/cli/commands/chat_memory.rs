//! `chat-memory list|show|add|delete`: seed 004's memory operations.

use serde::Serialize;

use crate::cli::args::{
    ChatMemoryAddArgs, ChatMemoryCommand, ChatMemoryDeleteArgs, DeleteScopeArg, MessageRole,
};
use crate::cli::commands::trim::{summarizer_from, trim_counter};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::InspectError;
use crate::inspect::chat_memory_nodes::{
    MemoryNode, add_target, memory_nodes, resolve_memory_node,
};
use crate::inspect::trim::{
    NewMemory, NewMessage, add_message, delete_messages, load_memory, row_message,
};
use crate::memory::model::Role;
use crate::store::{ChatMemorySummary, DeleteScope};
use crate::store::{Part, rows::ChatMemoryMessageRow};
use crate::summarize::Summarizer;

pub async fn run(context: &Context, command: ChatMemoryCommand) -> CliResult {
    match command {
        ChatMemoryCommand::List => list(context).await,
        ChatMemoryCommand::Show { id, limit, offset } => show(context, &id, limit, offset).await,
        ChatMemoryCommand::Add(args) => add(context, &args).await,
        ChatMemoryCommand::Delete(args) => delete(context, &args).await,
        ChatMemoryCommand::Drop { id, yes } => drop_memory(context, &id, yes).await,
    }
}

fn role(role: MessageRole) -> Role {
    match role {
        MessageRole::User => Role::User,
        MessageRole::Assistant => Role::Assistant,
    }
}

#[derive(Serialize)]
struct MemoryList {
    chat_memories: Vec<MemoryLine>,
}

#[derive(Serialize)]
struct MemoryLine {
    id: String,
    memory_node_id: String,
    /// The memory node: its id and title.
    node: NodeName,
    chat_id: String,
    label: String,
    messages: i64,
    policy: serde_json::Value,
}

/// A memory's node as lists and `show` name it.
#[derive(Serialize)]
struct NodeName {
    id: String,
    title: String,
}

/// The node of id `node_id` among `nodes`, titled as it is there (`label` if it is not).
fn node_of(nodes: &[MemoryNode], node_id: &str, label: &str) -> NodeName {
    let title = nodes
        .iter()
        .find(|n| n.id == node_id)
        .map_or(label, |n| n.title.as_str());
    NodeName {
        id: node_id.to_owned(),
        title: title.to_owned(),
    }
}

fn line(nodes: &[MemoryNode], memory: ChatMemorySummary) -> MemoryLine {
    MemoryLine {
        node: node_of(nodes, &memory.memory_node_id, &memory.label),
        policy: serde_json::from_str(&memory.policy)
            .unwrap_or(serde_json::Value::String(memory.policy)),
        id: memory.id,
        memory_node_id: memory.memory_node_id,
        chat_id: memory.chat_id,
        label: memory.label,
        messages: memory.message_count,
    }
}

async fn list(context: &Context) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let memories = store.list_chat_memories().await?;
    let nodes = memory_nodes(&memories);
    let list = MemoryList {
        chat_memories: memories.into_iter().map(|m| line(&nodes, m)).collect(),
    };
    emit(context.global.json, &list, |l| {
        if l.chat_memories.is_empty() {
            return "no chat memories".to_owned();
        }
        let rows: Vec<Vec<String>> = l
            .chat_memories
            .iter()
            .map(|m| {
                vec![
                    m.id.clone(),
                    m.node.id.clone(),
                    one_line(&m.node.title, 28),
                    one_line(&m.chat_id, 28),
                    thousands(m.messages),
                ]
            })
            .collect();
        table(&["id", "node", "title", "chat id", "messages"], &rows)
    })?;
    Ok(ExitCode::Ok)
}

#[derive(Serialize)]
struct Shown {
    id: String,
    label: String,
    chat_id: String,
    memory_node_id: String,
    /// The memory node: its id and title.
    node: NodeName,
    policy: serde_json::Value,
    total: usize,
    offset: i64,
    messages: Vec<ShownMessage>,
}

#[derive(Serialize)]
struct ShownMessage {
    id: String,
    seq: i64,
    role: String,
    is_summary: bool,
    workflow_request_id: Option<String>,
    message: crate::memory::model::PromptMessage,
}

fn shown(row: &ChatMemoryMessageRow) -> ShownMessage {
    ShownMessage {
        id: row.id.clone(),
        seq: row.seq,
        role: row.role.clone(),
        is_summary: row.is_summary,
        workflow_request_id: row.workflow_request_id.clone(),
        message: row_message(row),
    }
}

async fn show(context: &Context, id: &str, limit: i64, offset: i64) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let loaded = load_memory(&store, id).await?;
    let nodes = memory_nodes(&store.list_chat_memories().await?);
    let page = store
        .chat_memory_messages(&loaded.memory.id, Some(limit), offset)
        .await?;
    let view = Shown {
        id: loaded.memory.id.clone(),
        label: loaded.memory.label.clone(),
        chat_id: loaded.memory.chat_id.clone(),
        memory_node_id: loaded.memory.memory_node_id.clone(),
        node: node_of(&nodes, &loaded.memory.memory_node_id, &loaded.memory.label),
        policy: serde_json::to_value(&loaded.policy)?,
        total: loaded.rows.len(),
        offset,
        messages: page.iter().map(shown).collect(),
    };
    emit(context.global.json, &view, |v| {
        let rows: Vec<Vec<String>> = v
            .messages
            .iter()
            .map(|m| {
                vec![
                    m.seq.to_string(),
                    if m.is_summary {
                        "summary".into()
                    } else {
                        m.role.clone()
                    },
                    one_line(&m.message.content.text(), 70),
                ]
            })
            .collect();
        format!(
            "chat memory {} \"{}\" chat {} ({} {}, showing {} from {})\nnode {} ({})\npolicy {}\n\n{}",
            v.id,
            v.label,
            v.chat_id,
            thousands(v.total as u64),
            crate::format::noun(v.total as u64, "message"),
            thousands(v.messages.len() as u64),
            thousands(v.offset),
            v.node.id,
            v.node.title,
            v.policy,
            table(&["seq", "role", "content"], &rows)
        )
    })?;
    Ok(ExitCode::Ok)
}

async fn add(context: &Context, args: &ChatMemoryAddArgs) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let files = args
        .files
        .as_deref()
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .map_err(|e| CliError::failure(format!("--files is not JSON: {e}")))?;
    let counter = trim_counter(context, None, None, None)?;
    let summarizer = summarizer_from(context, &args.summarizer)?.unwrap_or(Summarizer::Extractive);
    let nodes = memory_nodes(&store.list_chat_memories().await?);
    let target = add_target(&nodes, &args.node, &args.chat, args.create).map_err(|e| {
        let hint = match &e {
            InspectError::Unknown(_) if resolve_memory_node(&nodes, &args.node).is_ok() => {
                "pass --create to start a chat memory for a new chat on this node"
            }
            InspectError::Unknown(_) => {
                "`memscope chat-memory list` shows each memory's node; --create starts a \
                 memory on a new node of this id"
            }
            _ => "`memscope chat-memory list` shows each memory's node",
        };
        CliError::from(e).with_hint(hint)
    })?;
    let create = NewMemory {
        label: args
            .label
            .as_deref()
            .or(target.node.map(|n| n.title.as_str()))
            .unwrap_or("Chat Memory"),
        policy: args
            .policy
            .as_deref()
            .or(target.node.map(|n| n.policy.as_str()))
            .unwrap_or("{}"),
    };
    let new = NewMessage {
        memory_node_id: &target.node_id,
        chat_id: &args.chat,
        role: role(args.role),
        content: &args.content,
        files,
        workflow_request_id: args.request.as_deref(),
        create: args.create.then_some(create),
    };
    let added = add_message(&store, &new, counter, &summarizer).await?;
    let node = match target.node {
        Some(node) => node.label(),
        None => format!("{} (a new node)", target.node_id),
    };
    emit(context.global.json, &added, |a| {
        format!(
            "added message {} (seq {}) to chat memory {}{} of chat {} on memory node {node}{}",
            a.message_id,
            a.seq,
            a.chat_memory_id,
            if a.created { " (created)" } else { "" },
            args.chat,
            {
                let (removed, modified) = (
                    a.trim.plan.removed().count(),
                    a.trim.plan.modified().count(),
                );
                let id = a.trim.change_id.as_deref().unwrap_or("-");
                if removed + modified > 0 {
                    format!(
                        "\npolicy trimmed: {removed} removed, {modified} modified (change {id}; \
                         `trim undo` takes the message and the trim back)"
                    )
                } else {
                    format!("\nchange {id}; `trim undo` takes the message back")
                }
            }
        )
    })?;
    Ok(ExitCode::Ok)
}

#[derive(Serialize)]
struct Deleted {
    chat_memory_id: String,
    deleted: usize,
    change_id: Option<String>,
}

async fn delete(context: &Context, args: &ChatMemoryDeleteArgs) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let loaded = load_memory(&store, &args.id).await?;
    confirm(args.yes, "delete removes chat memory messages")?;
    let scope = match args.scope {
        DeleteScopeArg::Latest => DeleteScope::LatestRequest,
        DeleteScopeArg::All => DeleteScope::All,
    };
    let roles: Vec<Role> = args.roles.iter().copied().map(role).collect();
    let result = delete_messages(&store, &loaded, scope, &roles).await?;
    let deleted = Deleted {
        chat_memory_id: loaded.memory.id.clone(),
        deleted: result.as_ref().map_or(0, |(_, n)| *n),
        change_id: result.map(|(id, _)| id),
    };
    emit(context.global.json, &deleted, |d| {
        format!(
            "deleted {} {} from chat memory {}",
            d.deleted,
            crate::format::noun(d.deleted as u64, "message"),
            d.chat_memory_id
        )
    })?;
    Ok(ExitCode::Ok)
}

#[derive(Serialize)]
struct Dropped {
    chat_memory_id: String,
    dropped: bool,
}

/// Deletes an empty memory; one that holds messages is refused with the way to empty it.
async fn drop_memory(context: &Context, id: &str, yes: bool) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let loaded = load_memory(&store, id).await?;
    let memory = &loaded.memory;
    let refuse = |held: u64| {
        CliError::failure(format!(
            "chat memory {} holds {} {}: only an empty memory is deleted, so no message \
                 goes with it unseen",
            memory.id,
            thousands(held),
            crate::format::noun(held, "message")
        ))
        .with_hint(format!(
            "`memscope chat-memory delete {} --scope all --yes` deletes its messages first \
             (`trim undo` brings them back until the memory is deleted)",
            memory.id
        ))
    };
    if !loaded.rows.is_empty() {
        return Err(refuse(loaded.rows.len() as u64));
    }
    let changes = store.chat_memory_changes(&memory.id).await?.len() as u64;
    confirm(
        yes,
        format!(
            "drop deletes chat memory {} (chat {} on memory node {}) and its undo history \
             ({} {})",
            memory.id,
            memory.chat_id,
            memory.memory_node_id,
            thousands(changes),
            crate::format::noun(changes, "change")
        ),
    )?;
    let held = store.delete_empty_chat_memory(&memory.id).await?;
    if held > 0 {
        return Err(refuse(held as u64));
    }
    let dropped = Dropped {
        chat_memory_id: memory.id.clone(),
        dropped: true,
    };
    emit(context.global.json, &dropped, |d| {
        format!("deleted chat memory {}", d.chat_memory_id)
    })?;
    Ok(ExitCode::Ok)
}

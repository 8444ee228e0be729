//! A session drawn as turns (a user message and what followed it). A plain session is one path.
//! An advanced session (`AdvancedSQLiteSession`) is its branches: `create_branch_from_turn(n)`
//! copies the structure rows of the turns before `n` under the new branch, sharing their
//! `agent_messages` rows, so a branch forks from the branch that holds its first shared row,
//! after the last turn it shares. Each turn carries its `turn_usage` row; each branch the totals
//! `get_session_usage(branch)` gives (that branch's own usage rows only).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value as Json, json};

use super::encrypted;
use super::item::{StoredItem, prompt_of};
use super::read::{self, Branch, Scope, StructureRow, TurnUsage, Writer};
use crate::format::{count, one_line, thousands};
use crate::sources::conversation::{
    Extra, MessageKind, SourceError, SourceTree, TreeNode, TreeRequest,
};
use crate::store::Store;

/// One turn of a branch (or of a plain session).
#[derive(Debug, Clone)]
struct Turn {
    number: i64,
    /// The usage row's key (`user_turn_number`).
    usage_turn: i64,
    first_row: Option<i64>,
    text: String,
    items: usize,
    tool_calls: usize,
    missing: usize,
}

fn user_text(item: Option<&StoredItem>) -> String {
    item.map(|item| prompt_of(&item.value).1.content.text().into_owned())
        .unwrap_or_default()
}

/// A plain session's items as turns: a user message opens one.
fn plain_turns(items: &[StoredItem]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for item in items {
        let (kind, message) = prompt_of(&item.value);
        let opens = kind == MessageKind::Message
            && message.role == crate::memory::model::Role::User
            || turns.is_empty();
        if opens {
            let number = turns.len() as i64 + 1;
            turns.push(Turn {
                number,
                usage_turn: number,
                first_row: Some(item.row),
                text: message.content.text().into_owned(),
                items: 0,
                tool_calls: 0,
                missing: 0,
            });
        }
        let turn = turns.last_mut().expect("a turn was opened");
        turn.items += 1;
        turn.tool_calls += usize::from(kind == MessageKind::ToolCall);
    }
    turns
}

/// A branch's structure rows as turns, by `branch_turn_number`.
fn branch_turns(rows: &[&StructureRow], items: &HashMap<i64, StoredItem>) -> Vec<Turn> {
    let mut turns: BTreeMap<i64, Turn> = BTreeMap::new();
    for row in rows {
        let number = row.branch_turn_number.unwrap_or_default();
        let turn = turns.entry(number).or_insert_with(|| Turn {
            number,
            usage_turn: row.user_turn_number.unwrap_or(number),
            first_row: Some(row.message_id),
            text: String::new(),
            items: 0,
            tool_calls: 0,
            missing: 0,
        });
        turn.items += 1;
        turn.missing += usize::from(!row.present);
        turn.tool_calls +=
            usize::from(row.tool_name.is_some() && row.message_type.ends_with("call"));
        if row.message_type == "user" && turn.text.is_empty() {
            turn.text = user_text(items.get(&row.message_id));
        }
    }
    turns.into_values().collect()
}

fn usage_json(usage: Option<&TurnUsage>) -> Json {
    usage.map_or(Json::Null, |u| {
        json!({
            "requests": u.requests.unwrap_or_default(),
            "input_tokens": u.input_tokens.unwrap_or_default(),
            "output_tokens": u.output_tokens.unwrap_or_default(),
            "total_tokens": u.total_tokens.unwrap_or_default(),
        })
    })
}

fn usage_words(usage: &Json) -> String {
    let field = |key: &str| usage[key].as_i64().unwrap_or_default();
    format!(
        "{}, {} in / {} out / {} tokens",
        count(field("requests"), "request"),
        thousands(field("input_tokens")),
        thousands(field("output_tokens")),
        thousands(field("total_tokens"))
    )
}

fn node_line(turn: &Turn, branch: Option<&str>, usage: &Json) -> String {
    let mut line = format!("turn {}", turn.number);
    if let Some(branch) = branch {
        line.push_str(&format!(" [{branch}]"));
    }
    line.push_str(&format!(
        ": {} · {}",
        one_line(&turn.text, 48),
        count(turn.items as u64, "item")
    ));
    if turn.tool_calls > 0 {
        line.push_str(&format!(", {}", count(turn.tool_calls as u64, "tool call")));
    }
    if turn.missing > 0 {
        line.push_str(&format!(", {} missing", count(turn.missing as u64, "row")));
    }
    if !usage.is_null() {
        line.push_str(&format!(" · {}", usage_words(usage)));
    }
    line
}

fn node(
    request: &TreeRequest,
    id: String,
    parent: Option<String>,
    depth: usize,
    turn: &Turn,
    branch: Option<&str>,
    usage: Json,
) -> TreeNode {
    TreeNode {
        line: node_line(turn, branch, &usage),
        extra: request.details(|| {
            json!({
                "branch": branch,
                "turn": turn.number,
                "items": turn.items,
                "tool_calls": turn.tool_calls,
                "missing_items": turn.missing,
                "first_row": turn.first_row,
                "usage": usage,
            })
        }),
        id,
        parent,
        depth,
        on_thread: false,
        group: None,
    }
}

pub async fn tree(store: &Store, request: &TreeRequest) -> Result<SourceTree, SourceError> {
    let session = &request.id;
    let branches = read::branches(store, session).await?;
    let writer = Writer::of(store).await?;
    let scope = Scope::Session(writer);
    // An encrypted session is drawn from its items as they open, whatever their age.
    let stored = if encrypted::is_encrypted(store, session, scope).await? {
        encrypted::get_items(store, session, scope, None, None)
            .await?
            .read
    } else {
        read::get_items(store, session, scope, None).await?
    };
    if branches.is_empty() {
        if request.options.is_set("branch") {
            return Err(SourceError::usage(format!(
                "session {session} keeps no branches (only AdvancedSQLiteSession's do)"
            )));
        }
        let turns = plain_turns(&stored.items);
        let ids: Vec<String> = turns.iter().map(|t| t.number.to_string()).collect();
        let nodes = turns
            .iter()
            .enumerate()
            .map(|(index, turn)| {
                let parent = index.checked_sub(1).map(|before| ids[before].clone());
                let mut node = node(
                    request,
                    ids[index].clone(),
                    parent,
                    0,
                    turn,
                    None,
                    Json::Null,
                );
                node.on_thread = true;
                node
            })
            .collect();
        return Ok(SourceTree {
            id: session.clone(),
            title: None,
            header: vec![format!(
                "session {session} ({}): one path of {}",
                writer.class(),
                count(turns.len() as u64, "turn")
            )],
            nodes,
            thread: ids,
            footer: Vec::new(),
            extra: Extra::new(),
        });
    }
    let items: HashMap<i64, StoredItem> = stored
        .items
        .into_iter()
        .map(|item| (item.row, item))
        .collect();
    let structure = read::structure(store, session).await?;
    let usage = read::usage(store, session).await?;
    advanced_tree(request, &branches, &structure, &usage, &items)
}

/// Where a branch forked: from which branch, after which of its turns.
struct Fork {
    parent: Option<usize>,
    after_turn: i64,
}

fn advanced_tree(
    request: &TreeRequest,
    branches: &[Branch],
    structure: &[StructureRow],
    usage: &[TurnUsage],
    items: &HashMap<i64, StoredItem>,
) -> Result<SourceTree, SourceError> {
    let session = &request.id;
    let selected = request.options.get("branch").unwrap_or("main");
    let Some(selected_index) = branches.iter().position(|b| b.branch_id == selected) else {
        let names: Vec<&str> = branches.iter().map(|b| b.branch_id.as_str()).collect();
        return Err(SourceError::not_found(format!(
            "session {session} has no branch {selected} (its branches: {})",
            names.join(", ")
        )));
    };
    let turns: Vec<Vec<Turn>> = branches
        .iter()
        .map(|b| {
            let rows: Vec<&StructureRow> = structure
                .iter()
                .filter(|r| r.branch_id == b.branch_id)
                .collect();
            branch_turns(&rows, items)
        })
        .collect();
    // A copy is written after what it copies: the branch that holds an item at its lowest
    // sequence number wrote it, and any other holder copied it.
    let mut first_holder: HashMap<i64, (i64, usize)> = HashMap::new();
    for (index, branch) in branches.iter().enumerate() {
        for row in structure.iter().filter(|r| r.branch_id == branch.branch_id) {
            let holder = first_holder
                .entry(row.message_id)
                .or_insert((row.sequence_number, index));
            if row.sequence_number < holder.0 {
                *holder = (row.sequence_number, index);
            }
        }
    }
    let first_holder: HashMap<i64, usize> = first_holder
        .into_iter()
        .map(|(row, (_, branch))| (row, branch))
        .collect();
    let forks: Vec<Fork> = turns
        .iter()
        .enumerate()
        .map(|(index, turns)| {
            let shared: Vec<&Turn> = turns
                .iter()
                .filter(|t| {
                    t.first_row
                        .and_then(|row| first_holder.get(&row))
                        .is_some_and(|h| *h != index)
                })
                .collect();
            Fork {
                parent: shared
                    .first()
                    .and_then(|t| first_holder.get(&t.first_row?).copied()),
                after_turn: shared.iter().map(|t| t.number).max().unwrap_or(0),
            }
        })
        .collect();
    let usage_of = |branch: &str, turn: i64| {
        usage_json(
            usage
                .iter()
                .find(|u| u.branch_id == branch && u.user_turn_number == turn),
        )
    };
    let node_id = |branch: usize, turn: i64| format!("{}:{turn}", branches[branch].branch_id);

    let mut nodes = Vec::new();
    let mut stack: Vec<(usize, usize)> = branches
        .iter()
        .enumerate()
        .filter(|(index, _)| forks[*index].parent.is_none())
        .map(|(index, _)| (index, 0))
        .rev()
        .collect();
    let mut drawn = vec![false; branches.len()];
    while let Some((branch, depth)) = stack.pop() {
        if std::mem::replace(&mut drawn[branch], true) {
            continue;
        }
        let own: Vec<&Turn> = turns[branch]
            .iter()
            .filter(|t| t.number > forks[branch].after_turn)
            .collect();
        let mut previous = forks[branch]
            .parent
            .map(|parent| node_id(parent, forks[branch].after_turn));
        let mut children_after: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (child, fork) in forks.iter().enumerate() {
            if fork.parent == Some(branch) && child != branch {
                children_after
                    .entry(fork.after_turn)
                    .or_default()
                    .push(child);
            }
        }
        let name = branches[branch].branch_id.as_str();
        for turn in own {
            let id = node_id(branch, turn.number);
            let usage = usage_of(name, turn.usage_turn);
            nodes.push(node(
                request,
                id.clone(),
                previous.replace(id),
                depth,
                turn,
                Some(name),
                usage,
            ));
        }
        // A branch's forks are drawn after its own path, in the order they fork.
        for child in children_after.into_values().flatten().rev() {
            stack.push((child, depth + 1));
        }
    }
    let mut thread = Vec::new();
    let mut chain = vec![selected_index];
    while let Some(parent) = forks[*chain.last().expect("one")]
        .parent
        .filter(|p| !chain.contains(p))
    {
        chain.push(parent);
    }
    let mut upto = i64::MAX;
    let mut on_path: Vec<String> = Vec::new();
    for &branch in &chain {
        let below = forks[branch].after_turn;
        let ids: Vec<String> = turns[branch]
            .iter()
            .filter(|t| t.number > below && t.number <= upto)
            .map(|t| node_id(branch, t.number))
            .collect();
        on_path.splice(0..0, ids);
        upto = below;
    }
    thread.extend(on_path);
    for node in &mut nodes {
        node.on_thread = thread.contains(&node.id);
    }
    let totals: Vec<Json> = branches
        .iter()
        .enumerate()
        .map(|(index, b)| {
            let rows: Vec<&TurnUsage> = usage
                .iter()
                .filter(|u| u.branch_id == b.branch_id)
                .collect();
            let sum = |f: fn(&TurnUsage) -> Option<i64>| {
                rows.iter().map(|u| f(u).unwrap_or_default()).sum::<i64>()
            };
            let totals = (!rows.is_empty()).then(|| {
                json!({
                    "requests": sum(|u| u.requests),
                    "input_tokens": sum(|u| u.input_tokens),
                    "output_tokens": sum(|u| u.output_tokens),
                    "total_tokens": sum(|u| u.total_tokens),
                    "total_turns": rows.len(),
                })
            });
            json!({
                "branch_id": b.branch_id,
                "message_count": b.message_count,
                "user_turns": b.user_turns,
                "created_at": b.created_at,
                "forked_from": forks[index].parent.map(|p| branches[p].branch_id.clone()),
                "after_turn": forks[index].parent.map(|_| forks[index].after_turn),
                "usage": totals,
            })
        })
        .collect();
    let footer = totals
        .iter()
        .map(|b| {
            let usage = match &b["usage"] {
                Json::Null => "no usage stored".to_owned(),
                usage => format!(
                    "{} over {}",
                    usage_words(usage),
                    count(usage["total_turns"].as_i64().unwrap_or_default(), "turn")
                ),
            };
            let origin = match b["forked_from"].as_str() {
                Some(parent) => format!(", from {parent} after turn {}", b["after_turn"]),
                None => String::new(),
            };
            format!(
                "branch {}{origin}: {}; {usage}",
                b["branch_id"].as_str().unwrap_or_default(),
                count(b["message_count"].as_i64().unwrap_or_default(), "item"),
            )
        })
        .collect();
    Ok(SourceTree {
        id: session.clone(),
        title: None,
        header: vec![format!(
            "session {session} (AdvancedSQLiteSession): {} {}, the path of {selected} marked",
            branches.len(),
            if branches.len() == 1 {
                "branch"
            } else {
                "branches"
            }
        )],
        nodes,
        thread,
        footer,
        extra: Extra::from_iter([("branches".to_owned(), Json::Array(totals))]),
    })
}

//! The selected row of any table, whole, in a detail popup: what its cells had to cut (ids,
//! names, policies, mismatches, a failed job's reason). `i` asks for it on every list; `enter`
//! does where it opens nothing else (a session, a job).

use crate::format::thousands;
use crate::inspect::diff::side_by_side;
use crate::inspect::listing::{cells, headers};
use crate::inspect::memory_bases::{BaseStatus, SessionStatus};
use crate::inspect::nodes::Timeline;
use crate::inspect::sessions::whole;
use crate::kb::rows::SearchHit;
use crate::memory::node_context::Disagreement;
use crate::memory::thread::{StepDecision, ThreadComparison};
use crate::sources::conversation::{ListColumn, ListedConversation};
use crate::store::ChatMemorySummary;
use crate::sync::Stage;
use crate::tui::state::memory_bases::{Focus, JobLine};
use crate::tui::state::{AppState, DemoState, Detail, NodeRow, Overlay, Screen, TextComparison};

/// Opens the detail popup of the selected row, or says there is none.
pub(super) fn open(state: &mut AppState) {
    match selected(state) {
        Some(detail) => {
            let under = std::mem::take(&mut state.overlay);
            state.overlay = Overlay::Detail(detail.over(under));
        }
        None => state.message = Some("nothing selected to show".to_owned()),
    }
}

/// The selected row of the table in front, whole.
fn selected(state: &AppState) -> Option<Detail> {
    if state.overlay == Overlay::Jobs {
        let lines = state.jobs.lines();
        return lines.get(state.jobs.selected).map(|line| job(state, line));
    }
    match state.screen {
        Screen::Conversations => state.list.selected_row().map(|row| {
            let tokens = state
                .list_counts_tokens()
                .then(|| state.list.thread_tokens.get(&row.id).copied());
            list_row(row, &state.list_columns, tokens)
        }),
        Screen::Session => {
            let session = state.session.as_ref()?;
            let message = session.view.as_ref()?.messages.get(session.selected)?;
            Some(Detail::new(
                format!(" Message {} ", message.message.id),
                whole(message),
            ))
        }
        Screen::Conversation => {
            let conversation = state.conversation.as_ref()?;
            match &conversation.nodes {
                Some(nodes) => nodes.rows.get(nodes.selected).map(|row| {
                    let timeline = nodes
                        .timeline
                        .as_ref()
                        .filter(|t| t.node_id == row.summary.node_id);
                    node(row, timeline)
                }),
                None => {
                    if let Some(demo) = &conversation.demo {
                        return Some(demo_steps(demo));
                    }
                    let loaded = conversation.loaded.as_ref()?;
                    let mut detail = (!loaded.tree.is_empty())
                        .then(|| tree_message(loaded.message(conversation.selected)))?;
                    // The ⚑ line over the tree is cut to its width: here it is whole.
                    if let Some(thread) = conversation
                        .thread
                        .as_ref()
                        .filter(|t| !matches!(t.comparison, ThreadComparison::Same))
                    {
                        detail.text = format!("⚑ {}\n\n{}", thread.comparison, detail.text);
                    }
                    Some(detail)
                }
            }
        }
        Screen::ChatMemories => {
            let memories = &state.chat_memories;
            match &memories.open {
                Some(open) => open.rows.get(open.selected).map(|row| {
                    super::chat_memories::message_detail(
                        row,
                        open.tokens.get(open.selected).copied(),
                    )
                }),
                None => memories
                    .selected_row()
                    .map(|row| chat_memory(row, memories.tokens.get(&row.id).copied())),
            }
        }
        Screen::Checkpoints => super::checkpoint_detail::detail(state.checkpoints.as_ref()?),
        Screen::Tree => super::tree_screen::detail(state.tree.as_ref()?),
        Screen::Doctor => state
            .doctor
            .as_ref()?
            .selected_finding()
            .map(super::doctor::finding_detail),
        Screen::MemoryBases => {
            let tab = &state.memory_bases;
            if let Some(search) = &tab.search {
                return search.hits.get(search.selected).map(search_hit);
            }
            match tab.focus {
                Focus::Bases => tab.selected_base().map(base),
                Focus::Sessions => tab.selected_session().map(session),
            }
        }
    }
}

/// `label  value` lines, the values aligned.
fn fields(pairs: &[(&str, String)]) -> String {
    let width = pairs
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    pairs
        .iter()
        .map(|(key, value)| format!("{key:<width$}  {value}\n"))
        .collect()
}

fn when(at: impl std::fmt::Display) -> String {
    at.to_string()
}

/// A row of the conversation list: every cell whole (the empty ones left out), why it could not
/// be read whole, the extras the list has no column for and, where the list counts them, the
/// tokens of its latest thread (`Some(None)`: not counted yet).
fn list_row(
    row: &ListedConversation,
    columns: &[ListColumn],
    tokens: Option<Option<u64>>,
) -> Detail {
    let mut pairs: Vec<(&str, String)> = headers(columns)
        .into_iter()
        .zip(cells(row, columns))
        .filter(|(_, cell)| !cell.is_empty())
        .collect();
    if let Some(problem) = &row.problem {
        pairs.push(("unread", problem.clone()));
    }
    let shown: Vec<&str> = columns.iter().map(|column| column.key).collect();
    pairs.extend(
        row.extra
            .iter()
            .filter(|(key, _)| !shown.contains(&key.as_str()))
            .filter_map(|(key, value)| Some((key.as_str(), value.as_str()?.to_owned()))),
    );
    if let Some(tokens) = tokens {
        let counted = tokens.map_or("counting…".to_owned(), |t| {
            crate::format::count(t, "token")
        });
        pairs.push(("latest thread", counted));
    }
    Detail::new(format!(" {} ", row.id), fields(&pairs))
}

/// A message of the conversation's tree: its ids, state, tokens, and query and answer whole.
fn tree_message(message: &crate::memory::model::StoredMessage) -> Detail {
    let mut pairs = vec![
        ("id", message.id.clone()),
        (
            "parent",
            message
                .parent_message_id
                .clone()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "- (a thread root)".to_owned()),
        ),
        ("status", message.status.clone()),
        (
            "created",
            when(message.created_at.format("%Y-%m-%d %H:%M:%S")),
        ),
        (
            "tokens",
            format!(
                "{} in / {} out",
                thousands(message.message_tokens),
                thousands(message.answer_tokens)
            ),
        ),
    ];
    if let Some(run) = &message.workflow_run_id {
        pairs.push(("workflow run", run.clone()));
    }
    let mut text = fields(&pairs);
    if let Some(error) = message.error.as_deref().filter(|e| !e.is_empty()) {
        text.push_str(&format!("\nError:\n{error}\n"));
    }
    text.push_str(&format!(
        "\nQuery:\n{}\n\nAnswer:\n{}\n",
        message.query, message.answer
    ));
    Detail::new(format!(" Message {} ", message.id), text)
}

/// The extraction demo's steps so far, each with its reason whole, newest last.
fn demo_steps(demo: &DemoState) -> Detail {
    let mut text = String::new();
    for step in &demo.trace.steps[..demo.shown] {
        let verdict = match step.decision {
            StepDecision::Kept => "kept",
            StepDecision::Stopped => "stopped",
            StepDecision::Skipped => "skipped",
        };
        text.push_str(&format!(
            "row {} · {} · {verdict}\n  {}\n",
            step.row,
            step.id,
            step.reason.describe()
        ));
    }
    let tracked = demo
        .current()
        .and_then(|step| step.tracked_parent.as_deref())
        .unwrap_or("none: the walk has stopped");
    text.push_str(&format!("\nnow tracking parent: {tracked}\n"));
    Detail::new(
        format!(
            " Dify's extraction, step {} of {} ",
            demo.shown,
            demo.trace.steps.len()
        ),
        text,
    )
}

/// A node whole; with its timeline loaded, each turn where the node memory file and the run's
/// context disagree, the two texts side by side.
fn node(row: &NodeRow, timeline: Option<&Timeline>) -> Detail {
    let node = &row.summary;
    let latest = match &row.latest {
        Some(latest) => format!(
            "{}, {} ({})",
            crate::format::count(latest.messages as u64, "message"),
            crate::format::count(latest.tokens, "token"),
            latest.source.describe()
        ),
        None => "none on this thread".to_owned(),
    };
    let text = fields(&[
        ("title", node.title.clone()),
        ("node id", node.node_id.clone()),
        ("type", node.node_type.clone()),
        (
            "executions",
            format!(
                "{} in the conversation, {} on this thread",
                thousands(node.executions as u64),
                thousands(node.on_thread as u64)
            ),
        ),
        (
            "latest run",
            node.latest_run.clone().unwrap_or_else(|| "-".to_owned()),
        ),
        ("latest context", latest),
    ]);
    let mut detail = Detail::new(format!(" Node {} ", node.title), text);
    let turns = timeline.map_or(&[][..], |t| &t.turns[..]);
    for (number, turn) in turns.iter().enumerate() {
        let Some(disagreement) = &turn.disagreement else {
            continue;
        };
        let heading = format!("Turn {} ({}): {disagreement}", number + 1, turn.message_id);
        match disagreement {
            Disagreement::DifferentUser { file, outputs }
            | Disagreement::DifferentAssistant { file, outputs } => {
                detail.comparisons.push(TextComparison {
                    heading,
                    left_title: "node memory file".to_owned(),
                    right_title: "the run's outputs.context".to_owned(),
                    rows: side_by_side(file, outputs),
                });
            }
            Disagreement::MissingInFile | Disagreement::MissingInOutputs => {
                detail.text.push_str(&format!("\n{heading}\n"));
            }
        }
    }
    detail
}

fn chat_memory(row: &ChatMemorySummary, tokens: Option<u64>) -> Detail {
    let policy = serde_json::from_str::<serde_json::Value>(&row.policy)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|_| row.policy.clone());
    let mut text = fields(&[
        ("label", row.label.clone()),
        ("id", row.id.clone()),
        ("memory node", row.memory_node_id.clone()),
        ("chat id", row.chat_id.clone()),
        ("messages", thousands(row.message_count)),
        ("tokens", tokens.map_or("counting…".to_owned(), thousands)),
        (
            "policy",
            crate::tui::state::chat_memories::policy_summary(&row.policy),
        ),
        ("created", when(row.created_at.format("%Y-%m-%d %H:%M:%S"))),
        ("updated", when(row.updated_at.format("%Y-%m-%d %H:%M:%S"))),
    ]);
    text.push_str("\nPolicy as stored:\n");
    text.push_str(&policy);
    Detail::new(format!(" Chat memory {} ", row.label), text)
}

fn base(status: &BaseStatus) -> Detail {
    let b = &status.base;
    let mut text = fields(&[
        ("name", b.name.clone()),
        ("id", b.id.clone()),
        (
            "flow",
            match &b.flow_name {
                Some(name) => format!("{name} ({})", b.flow_id),
                None => b.flow_id.clone(),
            },
        ),
        (
            "user",
            b.username.clone().unwrap_or_else(|| b.user_id.clone()),
        ),
        (
            "threshold",
            format!(
                "{} {}",
                thousands(b.threshold),
                crate::inspect::memory_bases::counted(b.unit())
            ),
        ),
        (
            "auto-capture",
            if b.auto_capture { "on" } else { "off" }.to_owned(),
        ),
        (
            "embedding",
            format!("{} / {}", b.embedding_provider, b.embedding_model),
        ),
        ("knowledge base", b.kb_name.clone()),
        ("KB directory", status.kb_path.display().to_string()),
        ("sessions", thousands(b.sessions)),
        (
            "processed",
            crate::format::count(b.total_processed, "message"),
        ),
        ("records", thousands(b.ingestion_records)),
        ("active jobs", thousands(b.active_jobs)),
        (
            "last sync",
            b.last_sync_at
                .map_or("never".to_owned(), |t| when(t.format("%Y-%m-%d %H:%M:%S"))),
        ),
        ("created", when(b.created_at.format("%Y-%m-%d %H:%M:%S"))),
        ("status", status.status.as_str().to_owned()),
    ]);
    if !status.mismatches.is_empty() {
        text.push_str("\nMismatches (R regenerates the knowledge base):\n");
        for mismatch in &status.mismatches {
            text.push_str(&format!("- {mismatch}\n"));
        }
    }
    Detail::new(format!(" Memory base {} ", b.name), text)
}

/// A KB search hit: where it comes from, its score, and the chunk's text whole.
fn search_hit(hit: &SearchHit) -> Detail {
    let metadata = serde_json::to_string_pretty(&hit.metadata).unwrap_or_default();
    let mut text = fields(&[
        ("score", format!("{:.3}", 1.0 - hit.distance)),
        ("session", hit.session_id.clone()),
        ("message", hit.message_id.clone()),
        ("chunk", hit.chunk_id.clone()),
    ]);
    text.push_str(&format!(
        "\nText:\n{}\n\nMetadata:\n{metadata}\n",
        hit.content
    ));
    Detail::new(format!(" Hit in session {} ", hit.session_id), text)
}

fn session(status: &SessionStatus) -> Detail {
    let s = &status.session;
    let text = fields(&[
        ("session", s.session_id.clone()),
        ("pending", status.pending_label()),
        (
            "to ingest",
            format!(
                "{} {} (a sync reads every message after the cursor)",
                thousands(status.pending_messages),
                crate::format::noun(status.pending_messages.max(0) as u64, "message")
            ),
        ),
        (
            "due",
            if status.due {
                "yes: the threshold is reached, an automatic check syncs it"
            } else {
                "no"
            }
            .to_owned(),
        ),
        (
            "cursor",
            s.cursor_id.clone().unwrap_or_else(|| "-".to_owned()),
        ),
        (
            "processed",
            crate::format::count(s.total_processed, "message"),
        ),
        ("records", thousands(s.ingestion_records)),
        (
            "last sync",
            s.last_sync_at
                .map_or("never".to_owned(), |t| when(t.format("%Y-%m-%d %H:%M:%S"))),
        ),
    ]);
    Detail::new(format!(" Session {} ", s.session_id), text)
}

fn job(state: &AppState, line: &JobLine) -> Detail {
    let now = state.jobs.now.unwrap_or(line.started);
    let stage = match line.tracked.as_ref().map(|t| &t.progress.stage) {
        Some(Stage::Running) => "running".to_owned(),
        Some(Stage::Committed) => "completed".to_owned(),
        Some(Stage::RolledBack { .. }) => "failed (rolled back)".to_owned(),
        None => line.status.replace('_', " "),
    };
    let mut pairs = vec![
        ("job", line.job_id.clone()),
        ("status", stage),
        ("session", line.session_id.clone()),
        ("started", when(line.started.format("%Y-%m-%d %H:%M:%S"))),
        (
            "finished",
            line.finished
                .map_or("-".to_owned(), |t| when(t.format("%Y-%m-%d %H:%M:%S"))),
        ),
        ("elapsed", format!("{:.1}s", line.elapsed(now))),
    ];
    if let Some(job) = &line.tracked {
        pairs.push((
            "progress",
            format!(
                "{} of {}, {} written{}",
                thousands(job.progress.messages_done),
                crate::format::count(job.progress.messages_total, "message"),
                crate::format::count(job.progress.chunks_written, "chunk"),
                if job.automatic {
                    " (started automatically)"
                } else {
                    ""
                }
            ),
        ));
    }
    let mut text = fields(&pairs);
    match &line.error {
        Some(error) => text.push_str(&format!("\nWhy it ended:\n{error}\n")),
        None if line.status == "failed" || line.status == "cancelled" => {
            text.push_str("\nNo reason was recorded for this job.\n");
        }
        None => {}
    }
    Detail::new(format!(" Job {} ", line.job_id), text)
}

#[cfg(test)]
#[path = "details_tests.rs"]
mod tests;

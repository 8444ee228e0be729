//! `agent-sessions`: the Agent V2 runtime sessions of a conversation, read-only.

use serde::Serialize;

use crate::cli::args::AgentSessionsArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit};
use crate::inspect::agent_sessions::{AgentSession, load_agent_sessions};
use crate::memory::agent_session::SessionSnapshot;

#[derive(Serialize)]
struct Report {
    conversation_id: String,
    conversation_name: String,
    /// Whether the database has Dify's `agent_runtime_sessions` table at all.
    has_sessions_table: bool,
    sessions: Vec<AgentSession>,
}

fn snapshot_line(snapshot: &SessionSnapshot) -> String {
    match snapshot {
        SessionSnapshot::Layers {
            schema_version,
            layers,
        } => {
            let layers: Vec<String> = layers
                .iter()
                .map(|layer| {
                    let state = if layer.runtime_state.is_empty() {
                        "no runtime state".to_owned()
                    } else {
                        layer.runtime_state.join(", ")
                    };
                    format!("{} ({}: {state})", layer.name, layer.lifecycle_state)
                })
                .collect();
            format!(
                "snapshot schema {schema_version}, {} {}: {}",
                layers.len(),
                crate::format::noun(layers.len() as u64, "layer"),
                if layers.is_empty() {
                    "none".to_owned()
                } else {
                    layers.join("; ")
                }
            )
        }
        SessionSnapshot::Unreadable { reason, bytes } => {
            format!("snapshot of {bytes} bytes memscope cannot read: {reason}")
        }
    }
}

fn render(report: &Report) -> String {
    let mut out = format!(
        "conversation {} \"{}\"\n",
        report.conversation_id, report.conversation_name
    );
    if !report.has_sessions_table {
        out.push_str(
            "no agent runtime sessions: this database has no agent_runtime_sessions table \
             (Dify's Agent V2 keeps them there since May 2026)\n",
        );
        return out;
    }
    out += &format!(
        "{} {}, oldest first\n",
        report.sessions.len(),
        crate::format::noun(report.sessions.len() as u64, "agent runtime session")
    );
    for session in &report.sessions {
        let row = &session.row;
        let owner = match (&row.workflow_run_id, &row.node_id) {
            (Some(run), Some(node)) => format!("workflow run {run}, node {node}"),
            (Some(run), None) => format!("workflow run {run}"),
            _ => "the conversation".to_owned(),
        };
        let cleaned = row
            .cleaned_at
            .map_or(String::new(), |at| format!(", cleaned {at}"));
        out += &format!(
            "\n{} {} (owned by {owner})\n  agent {}, backend run {}\n  created {}, updated {}{cleaned}\n  {}\n",
            row.id,
            row.status,
            row.agent_id,
            row.backend_run_id.as_deref().unwrap_or("none"),
            row.created_at,
            row.updated_at,
            snapshot_line(&session.snapshot),
        );
    }
    out
}

pub async fn run(context: &Context, args: &AgentSessionsArgs) -> CliResult {
    let store = context.open().await?;
    let loaded = load_agent_sessions(&store, &args.conversation).await?;
    let report = Report {
        conversation_id: loaded.info.id,
        conversation_name: loaded.info.name,
        has_sessions_table: loaded.sessions.is_some(),
        sessions: loaded.sessions.unwrap_or_default(),
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

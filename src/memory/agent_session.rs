//! Dify's Agent V2 runtime sessions (`agent_runtime_sessions`, Dify's migration `121e7346074d`
//! of May 2026, on main behind `ENABLE_AGENT_V2`): one row per session of the Agent backend,
//! owned by an Agent App conversation (`owner_type = conversation`) or by one agent node of a
//! workflow run (`owner_type = workflow_run`). `session_snapshot` is what the backend returned
//! for the session to resume from: its compositor's `CompositorSessionSnapshot` as JSON, a
//! schema version and, layer by layer, the layer's name, its lifecycle state and its runtime
//! state. Live handles, prompts, tools and config are never in it.

use chrono::NaiveDateTime;
use serde::Serialize;
use serde_json::Value;

/// One `agent_runtime_sessions` row, its snapshot as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentSessionRow {
    pub id: String,
    /// `conversation` or `workflow_run`.
    pub owner_type: String,
    pub agent_id: String,
    /// `active` (reusable by the next run of the session) or `cleaned` (retired).
    pub status: String,
    pub backend_run_id: Option<String>,
    /// Set for a workflow-run owner, with the agent node.
    pub workflow_run_id: Option<String>,
    pub node_id: Option<String>,
    pub session_snapshot: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub cleaned_at: Option<NaiveDateTime>,
}

/// One layer of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotLayer {
    pub name: String,
    /// The layer's lifecycle state (`lifecycle_state`, `state` in the first snapshots).
    pub lifecycle_state: String,
    /// The names in the layer's runtime state, in name order.
    pub runtime_state: Vec<String>,
}

/// A session snapshot as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SessionSnapshot {
    Layers {
        schema_version: i64,
        layers: Vec<SnapshotLayer>,
    },
    /// Not a compositor snapshot memscope knows: why, and the text's size.
    Unreadable { reason: String, bytes: usize },
}

/// Reads a `session_snapshot` as the Agent backend's compositor writes it. Its model forbids
/// other fields and defaults the schema version to 1; a snapshot of another shape (a later
/// schema, a cut text) is said to be unreadable rather than guessed at.
pub fn read_snapshot(text: &str) -> SessionSnapshot {
    let unreadable = |reason: String| SessionSnapshot::Unreadable {
        reason,
        bytes: text.len(),
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return unreadable(format!("not JSON: {error}")),
    };
    let Some(object) = value.as_object() else {
        return unreadable("not a JSON object".to_owned());
    };
    if let Some(other) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "schema_version" | "layers"))
    {
        return unreadable(format!("an unknown field \"{other}\""));
    }
    let schema_version = match object.get("schema_version") {
        None => 1,
        Some(version) => match version.as_i64() {
            Some(version) => version,
            None => return unreadable("schema_version is not an integer".to_owned()),
        },
    };
    let Some(entries) = object.get("layers").and_then(Value::as_array) else {
        return unreadable("no list of layers".to_owned());
    };
    let mut layers = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        match read_layer(entry) {
            Some(layer) => layers.push(layer),
            None => return unreadable(format!("layer {index} is not a layer snapshot")),
        }
    }
    SessionSnapshot::Layers {
        schema_version,
        layers,
    }
}

fn read_layer(entry: &Value) -> Option<SnapshotLayer> {
    let entry = entry.as_object()?;
    let state = entry
        .get("lifecycle_state")
        .or_else(|| entry.get("state"))?;
    let mut runtime_state: Vec<String> = entry
        .get("runtime_state")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    runtime_state.sort();
    Some(SnapshotLayer {
        name: entry.get("name")?.as_str()?.to_owned(),
        lifecycle_state: state.as_str()?.to_owned(),
        runtime_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers(snapshot: &SessionSnapshot) -> Vec<(&str, &str, Vec<&str>)> {
        match snapshot {
            SessionSnapshot::Layers { layers, .. } => layers
                .iter()
                .map(|l| {
                    (
                        l.name.as_str(),
                        l.lifecycle_state.as_str(),
                        l.runtime_state.iter().map(String::as_str).collect(),
                    )
                })
                .collect(),
            SessionSnapshot::Unreadable { reason, .. } => panic!("unreadable: {reason}"),
        }
    }

    #[test]
    fn reads_both_spellings_of_the_lifecycle_state() {
        let current = read_snapshot(
            r#"{"schema_version": 1, "layers": [
                {"name": "history", "lifecycle_state": "suspended",
                 "runtime_state": {"messages": [], "cursor": 3}},
                {"name": "sandbox", "lifecycle_state": "closed", "runtime_state": {}}]}"#,
        );
        assert_eq!(
            layers(&current),
            [
                ("history", "suspended", vec!["cursor", "messages"]),
                ("sandbox", "closed", vec![])
            ]
        );
        let first = read_snapshot(
            r#"{"layers": [{"name": "history", "state": "suspended", "runtime_state": {}}]}"#,
        );
        assert_eq!(layers(&first), [("history", "suspended", vec![])]);
        assert!(matches!(
            first,
            SessionSnapshot::Layers {
                schema_version: 1,
                ..
            }
        ));
    }

    #[test]
    fn another_shape_is_unreadable_not_guessed() {
        for (text, reason) in [
            ("{\"layers\": [", "not JSON"),
            ("[]", "not a JSON object"),
            (
                r#"{"layers": [], "tools": []}"#,
                "an unknown field \"tools\"",
            ),
            (r#"{"schema_version": "2", "layers": []}"#, "schema_version"),
            (r#"{"schema_version": 2}"#, "no list of layers"),
            (r#"{"layers": [{"name": "x"}]}"#, "layer 0"),
        ] {
            match read_snapshot(text) {
                SessionSnapshot::Unreadable {
                    reason: said,
                    bytes,
                } => {
                    assert!(said.starts_with(reason), "{text}: {said}");
                    assert_eq!(bytes, text.len());
                }
                read => panic!("{text} read as {read:?}"),
            }
        }
    }
}

//! A Langflow session's messages as stored, and the flows a session id is used in.
//!
//! Rows come in Langflow's reading order: by `timestamp`, and between equal timestamps in the
//! order the table keeps them (SQLite's `rowid`, PostgreSQL's `ctid`), the order Langflow's
//! own index scan gives them (see [`crate::memory::agent_history`]).

use serde::Serialize;
use sqlx::FromRow;

use crate::memory::agent_history::LangflowMessage;
use crate::memory::instant::parse_instant;
use crate::sources::source_error::{Refusal, SourceError};
use crate::store::pool::DbPool;
use crate::store::sql::dialect_text;
use crate::store::{Part, Store, StoreError, dashed_id};

/// The columns of a [`MessageRow`] and the session filter, up to the physical tie-break.
macro_rules! session_rows {
    ($physical:literal) => {
        concat!(
            "SELECT m.id::text AS id, CAST(m.timestamp AS TEXT) AS timestamp, \
             m.flow_id::text AS flow_id, m.session_id, m.context_id, m.user_id::text AS owner, \
             m.run_id::text AS run_id, m.sender, m.sender_name, coalesce(m.text, '') AS text, \
             m.files::text AS files, coalesce(m.error, false) AS error, \
             coalesce(m.category, 'message') AS category \
             FROM message m WHERE m.session_id = $1 AND ($2 = '' OR m.flow_id::text = $2) \
             ORDER BY m.timestamp, ",
            $physical
        )
    };
}

#[derive(FromRow)]
struct MessageRow {
    id: String,
    timestamp: String,
    flow_id: Option<String>,
    session_id: String,
    context_id: Option<String>,
    owner: Option<String>,
    run_id: Option<String>,
    sender: String,
    sender_name: String,
    text: String,
    files: Option<String>,
    error: bool,
    category: String,
}

/// The messages stored under `session_id`, of one flow when `flow_id` is given, oldest first in
/// Langflow's reading order.
pub async fn session_messages(
    store: &Store,
    session_id: &str,
    flow_id: Option<&str>,
) -> Result<Vec<LangflowMessage>, StoreError> {
    let flow = flow_id.map(dashed_id).unwrap_or_default();
    let rows: Vec<MessageRow> = match &store.pool {
        DbPool::Sqlite(pool, dialect) => {
            sqlx::query_as(dialect_text(*dialect, session_rows!("m.rowid")))
                .bind(session_id)
                .bind(&flow)
                .fetch_all(pool)
                .await
        }
        DbPool::Postgres(pool, dialect) => {
            sqlx::query_as(dialect_text(*dialect, session_rows!("m.ctid")))
                .bind(session_id)
                .bind(&flow)
                .fetch_all(pool)
                .await
        }
        // Langflow keeps its tables in SQLite or PostgreSQL only.
        DbPool::Mysql(..) => return Err(store.lacks(Part::Conversations)),
    }
    .map_err(|e| store.query_failed(e))?;
    rows.into_iter()
        .enumerate()
        .map(|(rank, row)| message(store, row, rank as u64))
        .collect()
}

fn message(
    store: &Store,
    row: MessageRow,
    stored_order: u64,
) -> Result<LangflowMessage, StoreError> {
    let timestamp = parse_instant(&row.timestamp).map_err(|source| StoreError::BadTimestamp {
        url: store.url().to_owned(),
        row: format!("message {}", row.id),
        source,
    })?;
    Ok(LangflowMessage {
        id: row.id,
        timestamp,
        flow_id: row.flow_id,
        session_id: row.session_id,
        context_id: row.context_id,
        owner: row.owner,
        run_id: row.run_id,
        sender: row.sender,
        sender_name: row.sender_name,
        text: row.text,
        files: files(row.files.as_deref()),
        error: row.error,
        category: row.category,
        stored_order,
    })
}

/// The `files` column (a JSON list of paths) as its entries; a value that is not a list is kept
/// whole as one entry, so nothing stored is hidden.
fn files(stored: Option<&str>) -> Vec<String> {
    let Some(text) = stored
        .map(str::trim)
        .filter(|t| !t.is_empty() && *t != "null")
    else {
        return Vec::new();
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                serde_json::Value::String(path) => path,
                other => other.to_string(),
            })
            .collect(),
        _ => vec![text.to_owned()],
    }
}

/// A flow a session id has messages in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowRef {
    /// `None` for messages written without a flow.
    pub id: Option<String>,
    /// `None` when the flow was deleted (or the messages have none).
    pub name: Option<String>,
    /// The flow's `user_id`: whose runs the Agent's memory is scoped to.
    pub owner: Option<String>,
    pub messages: i64,
}

impl FlowRef {
    /// How a person names it: its name, else its id.
    pub fn label(&self) -> String {
        match (&self.name, &self.id) {
            (Some(name), Some(id)) => format!("{name} ({id})"),
            (None, Some(id)) => id.clone(),
            (Some(name), None) => name.clone(),
            (None, None) => "no flow".to_owned(),
        }
    }
}

/// The flows a session id is used in, and the choice among them.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFlows {
    pub session_id: String,
    pub flows: Vec<FlowRef>,
}

/// Why no single flow was chosen for a session.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlowChoiceError {
    #[error("no messages are stored under session {session:?}")]
    UnknownSession { session: String },
    #[error("session {session:?} is used by {} flows: {}; choose one with --flow", flows.len(), labels(flows))]
    Ambiguous {
        session: String,
        flows: Vec<FlowRef>,
    },
    #[error(
        "session {session:?} has no messages of flow {wanted:?}; its flows: {}",
        labels(flows)
    )]
    UnknownFlow {
        session: String,
        wanted: String,
        flows: Vec<FlowRef>,
    },
}

/// The refusal both front ends give: a session in several flows lists them as the candidates of
/// `--flow`.
impl From<FlowChoiceError> for SourceError {
    fn from(error: FlowChoiceError) -> Self {
        let message = error.to_string();
        match error {
            FlowChoiceError::UnknownSession { .. } => SourceError::not_found(message),
            FlowChoiceError::Ambiguous { flows, .. } => SourceError::new(
                Refusal::Ambiguous(flows.iter().map(|flow| flow.label()).collect()),
                message,
            )
            .with_hint("choose one with --flow NAME|ID"),
            FlowChoiceError::UnknownFlow { .. } => SourceError::new(Refusal::NotFound, message)
                .with_hint("choose one of the session's flows with --flow NAME|ID"),
        }
    }
}

fn labels(flows: &[FlowRef]) -> String {
    flows
        .iter()
        .map(FlowRef::label)
        .collect::<Vec<_>>()
        .join(", ")
}

impl SessionFlows {
    /// The flow `wanted` names (its id, with or without dashes, or its exact name), or the only
    /// flow when nothing is wanted.
    pub fn choose(&self, wanted: Option<&str>) -> Result<&FlowRef, FlowChoiceError> {
        let session = self.session_id.clone();
        let named: Vec<&FlowRef> = match wanted {
            None => self.flows.iter().collect(),
            Some(wanted) => {
                let id = dashed_id(wanted);
                let by_id: Vec<&FlowRef> = self
                    .flows
                    .iter()
                    .filter(|f| f.id.as_deref() == Some(id.as_str()))
                    .collect();
                if by_id.is_empty() {
                    self.flows
                        .iter()
                        .filter(|f| f.name.as_deref() == Some(wanted))
                        .collect()
                } else {
                    by_id
                }
            }
        };
        match (named.as_slice(), wanted) {
            ([only], _) => Ok(only),
            ([], _) if self.flows.is_empty() => Err(FlowChoiceError::UnknownSession { session }),
            ([], Some(wanted)) => Err(FlowChoiceError::UnknownFlow {
                session,
                wanted: wanted.to_owned(),
                flows: self.flows.clone(),
            }),
            (several, _) => Err(FlowChoiceError::Ambiguous {
                session,
                flows: several.iter().map(|f| (*f).clone()).collect(),
            }),
        }
    }
}

#[derive(FromRow)]
struct FlowRow {
    flow_id: Option<String>,
    name: Option<String>,
    owner: Option<String>,
    messages: i64,
}

/// The flows `session_id` has messages in, by name then id.
pub async fn session_flows(store: &Store, session_id: &str) -> Result<SessionFlows, StoreError> {
    const FLOWS: &str = "SELECT m.flow_id::text AS flow_id, f.name, f.user_id::text AS owner, \
         count(*) AS messages FROM message m LEFT JOIN flow f ON f.id = m.flow_id \
         WHERE m.session_id = $1 GROUP BY m.flow_id, f.name, f.user_id \
         ORDER BY f.name, m.flow_id";
    let rows: Vec<FlowRow> = match &store.pool {
        DbPool::Sqlite(pool, dialect) => {
            let query = sqlx::query_as(dialect_text(*dialect, FLOWS));
            query.bind(session_id).fetch_all(pool).await
        }
        DbPool::Postgres(pool, dialect) => {
            let query = sqlx::query_as(dialect_text(*dialect, FLOWS));
            query.bind(session_id).fetch_all(pool).await
        }
        // Langflow keeps its tables in SQLite or PostgreSQL only.
        DbPool::Mysql(..) => return Err(store.lacks(Part::Conversations)),
    }
    .map_err(|e| store.query_failed(e))?;
    Ok(SessionFlows {
        session_id: session_id.to_owned(),
        flows: rows
            .into_iter()
            .map(|row| FlowRef {
                id: row.flow_id,
                name: row.name,
                owner: row.owner,
                messages: row.messages,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::source_error::LIST_HINT;

    fn flow(id: &str, name: &str) -> FlowRef {
        FlowRef {
            id: Some(id.into()),
            name: Some(name.into()),
            owner: None,
            messages: 1,
        }
    }

    const A: &str = "11111111-1111-1111-1111-111111111111";
    const B: &str = "22222222-2222-2222-2222-222222222222";

    fn shared() -> SessionFlows {
        SessionFlows {
            session_id: "New Session 0".into(),
            flows: vec![flow(A, "Sales Chat"), flow(B, "Support Chat")],
        }
    }

    #[test]
    fn a_session_in_several_flows_is_refused_with_the_flows_as_candidates() {
        let refused = SourceError::from(shared().choose(None).unwrap_err());
        let SourceError::Refused { kind, hint, .. } = refused else {
            panic!("a refusal, not a store error");
        };
        assert_eq!(
            kind,
            Refusal::Ambiguous(vec![
                format!("Sales Chat ({A})"),
                format!("Support Chat ({B})")
            ])
        );
        assert!(hint.unwrap().contains("--flow"));
        let no_flows = SessionFlows {
            session_id: "s".into(),
            flows: Vec::new(),
        };
        let unknown = SourceError::from(no_flows.choose(None).unwrap_err());
        assert!(matches!(
            unknown,
            SourceError::Refused { kind: Refusal::NotFound, hint: Some(hint), .. } if hint == LIST_HINT
        ));
    }

    #[test]
    fn a_session_of_several_flows_needs_one_named() {
        let err = shared().choose(None).unwrap_err();
        assert!(matches!(&err, FlowChoiceError::Ambiguous { flows, .. } if flows.len() == 2));
        let text = err.to_string();
        assert!(
            text.contains("Sales Chat") && text.contains("Support Chat"),
            "{text}"
        );
    }

    #[test]
    fn a_flow_is_named_by_id_in_either_spelling_or_by_name() {
        let flows = shared();
        assert_eq!(
            flows.choose(Some("Support Chat")).unwrap().id.as_deref(),
            Some(B)
        );
        assert_eq!(
            flows
                .choose(Some(&A.replace('-', "")))
                .unwrap()
                .name
                .as_deref(),
            Some("Sales Chat")
        );
        assert!(matches!(
            flows.choose(Some("support chat")),
            Err(FlowChoiceError::UnknownFlow { .. })
        ));
    }

    #[test]
    fn a_lone_flow_is_chosen_and_an_empty_session_is_unknown() {
        let lone = SessionFlows {
            session_id: "s".into(),
            flows: vec![flow(A, "Sales Chat")],
        };
        assert_eq!(lone.choose(None).unwrap().id.as_deref(), Some(A));
        let empty = SessionFlows {
            session_id: "s".into(),
            flows: Vec::new(),
        };
        assert!(matches!(
            empty.choose(None),
            Err(FlowChoiceError::UnknownSession { .. })
        ));
        assert!(matches!(
            empty.choose(Some("x")),
            Err(FlowChoiceError::UnknownSession { .. })
        ));
    }

    #[test]
    fn two_flows_of_one_name_are_still_ambiguous() {
        let twins = SessionFlows {
            session_id: "s".into(),
            flows: vec![flow(A, "Chat"), flow(B, "Chat")],
        };
        assert!(matches!(
            twins.choose(Some("Chat")),
            Err(FlowChoiceError::Ambiguous { .. })
        ));
    }

    #[test]
    fn files_are_read_as_a_list_and_anything_else_is_kept_whole() {
        assert_eq!(
            files(Some(r#"["s/a.png", "s/b.txt"]"#)),
            vec!["s/a.png", "s/b.txt"]
        );
        assert!(files(None).is_empty());
        assert!(files(Some("null")).is_empty());
        assert!(files(Some("[]")).is_empty());
        assert_eq!(files(Some("[1]")), vec!["1"]);
        assert_eq!(files(Some("not json")), vec!["not json"]);
    }
}

//! `export`'s bundle: one JSON document of a conversation for a bug report, the same from the
//! command line and from the TUI's `E`. Every source gives the same parts, computed by the very
//! functions its commands print (`thread`, `history`, `nodes`, `node-context`), so the bundle
//! says what those commands say; then every credential is removed (`redact.rs`) before a byte
//! is written.

mod redact;

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::InspectError;
use super::history::history;
use super::nodes::ContextSource;
use super::nodes::report::{context_report, nodes_report};
use super::tree::thread;
use crate::memory::budget_view::BudgetSettings;
use crate::sources::conversation::{HistoryRequest, TreeRequest};
use crate::storage::ObjectStore;
use crate::store::{Backend, Part, Store, redact_url};

/// What a bundle is made of: the conversation's tree and history as `thread` and `history` are
/// asked for them, and on a database with node executions each node's context.
pub struct ExportRequest {
    /// The conversation (Dify), session (Langflow) or thread (LangGraph) id, as typed.
    pub conversation: String,
    pub thread: TreeRequest,
    pub history: HistoryRequest,
    /// How the nodes are read, on a database with node executions.
    pub nodes: Option<NodeSettings>,
    /// The database URL as given; the bundle keeps it without its password.
    pub url: String,
}

/// How the nodes are read: where memory files are kept, the nodes list's budget and each
/// node context's.
pub struct NodeSettings {
    pub storage: ObjectStore,
    pub list: BudgetSettings,
    pub context: BudgetSettings,
}

/// What made the database: enough to reproduce a report on the same kind.
#[derive(Serialize)]
struct DatabaseKind {
    /// memscope, Dify, Langflow or a LangGraph checkpoint saver.
    source: &'static str,
    backend: &'static str,
    /// The source's schema revision, when it records one (Dify's and Langflow's migrations).
    schema_revision: Option<String>,
    /// memscope's own schema version, on a database memscope created.
    schema_version: Option<i64>,
    /// The database URL, its password removed.
    url: String,
}

#[derive(Serialize)]
struct Bundle {
    memscope_version: &'static str,
    database: DatabaseKind,
    conversation: String,
    /// The conversation's parts, as their commands print them with `--json`.
    #[serde(flatten)]
    parts: Map<String, Value>,
}

/// A bundle with its credentials removed, and how many were.
pub struct Exported {
    pub bundle: Value,
    pub secrets_redacted: usize,
}

fn to_value(value: impl Serialize) -> Result<Value, InspectError> {
    serde_json::to_value(value).map_err(|e| InspectError::BadSetting(e.to_string()))
}

/// The conversation's parts, the same on every source: its tree with the path the model sees,
/// what its memory feeds the model with the budget, and on a database with node executions
/// each node's context. A setting the source does not take is refused as `thread` and
/// `history` refuse it.
async fn parts(store: &Store, request: &ExportRequest) -> Result<Map<String, Value>, InspectError> {
    let mut parts = Map::new();
    parts.insert(
        "thread".into(),
        to_value(thread(store, &request.thread).await?)?,
    );
    parts.insert(
        "history".into(),
        to_value(history(store, &request.history).await?)?,
    );
    if let Some(NodeSettings {
        storage,
        list,
        context,
    }) = request
        .nodes
        .as_ref()
        .filter(|_| store.profile().has(Part::NodeContexts))
    {
        let nodes = nodes_report(store, storage, list, &request.conversation, None).await?;
        let mut contexts = Vec::new();
        for node in nodes.node_ids() {
            let conversation = &request.conversation;
            let source = ContextSource::Outputs;
            let report =
                context_report(store, storage, context, conversation, &node, None, source).await?;
            contexts.push(to_value(report)?);
        }
        parts.insert("nodes".into(), to_value(nodes)?);
        parts.insert("node_contexts".into(), Value::Array(contexts));
    }
    Ok(parts)
}

fn database_kind(store: &Store, url: &str) -> DatabaseKind {
    let profile = store.profile();
    DatabaseKind {
        source: profile.source.name(),
        backend: match store.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        },
        schema_revision: profile.revision.clone(),
        schema_version: store.schema_version(),
        url: redact_url(url),
    }
}

/// The bundle of `request`'s conversation, its credentials removed.
pub async fn bundle(store: &Store, request: &ExportRequest) -> Result<Exported, InspectError> {
    let parts = parts(store, request).await?;
    let mut bundle = to_value(Bundle {
        memscope_version: env!("CARGO_PKG_VERSION"),
        database: database_kind(store, &request.url),
        conversation: request.conversation.clone(),
        parts,
    })?;
    let secrets_redacted = redact::redact(&mut bundle);
    if let Value::Object(fields) = &mut bundle {
        fields.insert("secrets_redacted".into(), Value::from(secrets_redacted));
    }
    Ok(Exported {
        bundle,
        secrets_redacted,
    })
}

/// Writes `text` to `out` whole or not at all: into a file beside it, then renamed over it.
/// Without `replace`, a file that is there (or appeared meanwhile) is kept: the error is
/// `AlreadyExists`. A path that names no file is `InvalidInput`.
pub fn write_whole(out: &Path, text: &str, replace: bool) -> std::io::Result<()> {
    let dir = match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let partial = dir.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = write_through(&partial, out, text, replace);
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// Writes `text` into `partial`, then moves it to `out`: over an existing file only when
/// `replace`, else by a hard link that fails on an existing name.
fn write_through(partial: &Path, out: &Path, text: &str, replace: bool) -> std::io::Result<()> {
    let mut file = std::fs::File::create(partial)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    if replace {
        std::fs::rename(partial, out)
    } else {
        std::fs::hard_link(partial, out)?;
        std::fs::remove_file(partial)
    }
}

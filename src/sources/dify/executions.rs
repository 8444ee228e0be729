//! Dify's LLM node executions with their JSON columns in full: offloaded copies are followed
//! into object storage, all at once, and an unreadable copy leaves the row's truncated value and
//! a problem.

use crate::memory::node_context::NodeProblem;
use crate::sources::node_context::{ExecutionDocs, FullColumn};
use crate::storage::ObjectStore;
use crate::storage::files::FileReadError;
use crate::store::{NodeExecutionRecord, Offload};

/// An offload link's object key, or why it has none.
fn offload_key(offload: &Option<Offload>) -> Option<&str> {
    offload.as_ref().and_then(|o| o.storage_key.as_deref())
}

/// A column in full from what its offloaded copy's read gave (`None`: the row has no offload).
fn full_column(
    storage: &ObjectStore,
    execution_id: &str,
    column: &str,
    row_value: Option<String>,
    offload: Option<Offload>,
    read: Option<Result<Vec<u8>, FileReadError>>,
) -> FullColumn {
    let Some(offload) = offload else {
        return FullColumn {
            text: row_value,
            ..FullColumn::default()
        };
    };
    let missing = |location: String| FullColumn {
        text: row_value.clone(),
        offloaded: false,
        problem: Some(NodeProblem::MissingOffloadFile {
            execution_id: execution_id.to_owned(),
            column: column.to_owned(),
            file_id: offload.file_id.clone(),
            location,
        }),
    };
    let Some(key) = &offload.storage_key else {
        return missing("no upload_files row".to_owned());
    };
    match read {
        Some(Ok(bytes)) => FullColumn {
            text: Some(String::from_utf8_lossy(&bytes).into_owned()),
            offloaded: true,
            problem: None,
        },
        Some(Err(error)) => missing(format!("{}: {error}", storage.location(key))),
        None => missing(format!("{}: not read", storage.location(key))),
    }
}

/// Follows each record's offload links into object storage: every offloaded copy is read at
/// once (bounded, see [`ObjectStore::read_many`]), so hundreds cost about one round trip.
pub async fn resolve_offloads(
    storage: &ObjectStore,
    records: Vec<NodeExecutionRecord>,
) -> Vec<ExecutionDocs> {
    let keys: Vec<String> = records
        .iter()
        .flat_map(|r| {
            [
                offload_key(&r.outputs_offload),
                offload_key(&r.process_data_offload),
            ]
        })
        .flatten()
        .map(str::to_owned)
        .collect();
    let mut reads = storage.read_many(&keys).await.into_iter();
    let mut next = |offload: &Option<Offload>| offload_key(offload).and_then(|_| reads.next());
    let mut docs = Vec::with_capacity(records.len());
    for record in records {
        let outputs_read = next(&record.outputs_offload);
        let process_data_read = next(&record.process_data_offload);
        let outputs = full_column(
            storage,
            &record.id,
            "outputs",
            record.outputs,
            record.outputs_offload,
            outputs_read,
        );
        let process_data = full_column(
            storage,
            &record.id,
            "process_data",
            record.process_data,
            record.process_data_offload,
            process_data_read,
        );
        docs.push(ExecutionDocs {
            id: record.id,
            workflow_run_id: record.workflow_run_id,
            status: record.status,
            outputs,
            process_data,
        });
    }
    docs
}

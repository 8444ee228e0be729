//! `doctor`'s checks of what a Dify database's rows point to: the context and prompts of every
//! LLM node execution (their offloaded copies followed into storage), the node memory files and
//! the files uploaded with messages.

use super::doctor_finding::DifyFinding;
use super::executions::resolve_offloads;
use crate::memory::node_context::{NodeProblem, parse_memory_file};
use crate::sources::doctor::DoctorSettings;
use crate::sources::node_context::{ExecutionDocs, FullColumn, parse_execution};
use crate::storage::ObjectStore;
use crate::store::{BadRow, Store, StoreError};

/// The problems in one LLM execution's context and prompts. An unparsable row column is
/// already an `unreadable_json` finding; an unparsable offloaded copy is reported here.
fn execution_findings(docs: &ExecutionDocs, node_id: &str) -> Vec<DifyFinding> {
    let parsed = parse_execution(docs);
    let row_not_json = |problem: &NodeProblem, offloaded: bool| {
        !offloaded && matches!(problem, NodeProblem::NotJson { .. })
    };
    let problems = parsed.problems.iter().chain(
        parsed
            .outputs
            .context
            .problems
            .iter()
            .filter(|p| !row_not_json(p, docs.outputs.offloaded)),
    );
    let problems = problems.chain(
        parsed
            .prompts
            .problems
            .iter()
            .filter(|p| !row_not_json(p, docs.process_data.offloaded)),
    );
    problems
        .map(|problem| DifyFinding::NodeContext {
            node_execution_id: Some(docs.id.clone()),
            node_id: Some(node_id.to_owned()),
            problem: problem.clone(),
        })
        .collect()
}

/// Streams every LLM execution, then follows offload links and reads every node memory file.
pub(super) async fn node_context_findings(
    store: &Store,
    settings: &DoctorSettings,
    bad_row: impl FnMut(BadRow),
) -> Result<Vec<DifyFinding>, StoreError> {
    let mut findings = Vec::new();
    let mut offloaded = Vec::new();
    store
        .for_each_llm_execution(
            |record| {
                if record.outputs_offload.is_some() || record.process_data_offload.is_some() {
                    // Read after the stream: the copy in storage is the one that counts.
                    offloaded.push(record);
                    return;
                }
                let node_id = record.node_id.clone();
                let docs = ExecutionDocs {
                    id: record.id,
                    workflow_run_id: record.workflow_run_id,
                    status: record.status,
                    outputs: FullColumn {
                        text: record.outputs,
                        ..Default::default()
                    },
                    process_data: FullColumn {
                        text: record.process_data,
                        ..Default::default()
                    },
                };
                findings.extend(execution_findings(&docs, &node_id));
            },
            bad_row,
        )
        .await?;
    let Some(storage) = &settings.storage else {
        return Ok(findings);
    };
    let node_ids: Vec<String> = offloaded.iter().map(|r| r.node_id.clone()).collect();
    for (docs, node_id) in resolve_offloads(storage, offloaded)
        .await
        .iter()
        .zip(node_ids)
    {
        findings.extend(execution_findings(docs, &node_id));
    }
    findings.extend(memory_file_findings(storage).await);
    Ok(findings)
}

/// Parses every `node_memory/{app_id}/{conversation_id}/{node_id}.json` in storage, read
/// concurrently and without blocking: a missing, oversized or unreadable object (a FIFO on a
/// local disk, a stalled mount or server) is a finding naming where it is.
async fn memory_file_findings(storage: &ObjectStore) -> Vec<DifyFinding> {
    let finding = |node_id: Option<String>, problem| DifyFinding::NodeContext {
        node_execution_id: None,
        node_id,
        problem,
    };
    let keys: Vec<String> = match storage.list("node_memory/").await {
        Ok(keys) => keys.into_iter().filter(|k| is_memory_file_key(k)).collect(),
        Err(error) => {
            return vec![finding(
                None,
                NodeProblem::UnreadableFile {
                    path: storage.location("node_memory/"),
                    error: format!("cannot list it: {error}"),
                },
            )];
        }
    };
    let reads = storage.read_many(&keys).await;
    let mut findings = Vec::new();
    for (key, read) in keys.iter().zip(reads) {
        let what = storage.location(key);
        let node_id = key
            .rsplit('/')
            .next()
            .and_then(|name| name.strip_suffix(".json"))
            .map(str::to_owned);
        let problems = match read {
            Ok(bytes) => parse_memory_file(&bytes, &what).problems,
            Err(error) => vec![NodeProblem::UnreadableFile {
                path: what,
                error: error.to_string(),
            }],
        };
        findings.extend(
            problems
                .into_iter()
                .map(|problem| finding(node_id.clone(), problem)),
        );
    }
    findings
}

/// Checks that every uploaded message file is in storage (a `stat` each, concurrently).
pub(super) async fn message_file_findings(
    store: &Store,
    storage: &ObjectStore,
) -> Result<Vec<DifyFinding>, StoreError> {
    let uploads = store.message_uploads().await?;
    let keys: Vec<String> = uploads.iter().map(|u| u.key.clone()).collect();
    let sizes = storage.sizes(&keys).await;
    Ok(uploads
        .into_iter()
        .zip(sizes)
        .filter_map(|(upload, size)| {
            let error = size.err()?;
            Some(DifyFinding::MissingMessageFile {
                location: storage.location(&upload.key),
                conversation_id: upload.conversation_id,
                message_id: upload.message_id,
                message_file_id: upload.message_file_id,
                error: error.to_string(),
            })
        })
        .collect())
}

/// `node_memory/{app_id}/{conversation_id}/{node_id}.json`, exactly that deep.
fn is_memory_file_key(key: &str) -> bool {
    let parts: Vec<&str> = key.split('/').collect();
    parts.len() == 4 && parts.iter().all(|p| !p.is_empty()) && key.ends_with(".json")
}

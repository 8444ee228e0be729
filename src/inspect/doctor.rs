//! `doctor`: one pass over a memory database for the problems that make a bot forget, leak or
//! overflow, each finding naming the row an operator should look at.

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::{self, Either};
use serde::Serialize;

use super::InspectError;
use super::conversation::{compare_thread, memory_rows_newest_first};
use super::nodes::{ExecutionDocs, FullColumn, parse_execution, resolve_offloads};
use crate::memory::history::{HistoryOptions, MAX_ROW_WINDOW, assemble_history};
use crate::memory::model::StoredMessage;
use crate::memory::node_context::{NodeProblem, parse_memory_file};
use crate::memory::thread::{ExtractionMode, ThreadComparison, extract_thread};
use crate::memory::tokens::CountCache;
use crate::memory::tree::MessageTree;
use crate::sources::conversation_registry::doctor_of;
use crate::sources::dify::queries::{BadNodeJson, DanglingRunRef};
use crate::storage::ObjectStore;
use crate::store::{BadRow, CancelFlag, Part, Store};

pub use super::doctor_finding::Finding;
pub use crate::sources::doctor::DoctorSettings;

#[derive(Debug, Clone, Default, Serialize)]
pub struct DoctorReport {
    pub conversations: usize,
    pub messages: usize,
    /// Conversations deleted in Dify, left out of the scan as Dify leaves them out.
    pub deleted_skipped: i64,
    /// Messages whose workflow run Dify archived out of the database: gone on purpose, so not
    /// a missing-run finding.
    pub archived_runs: i64,
    pub findings: Vec<Finding>,
    /// Dify's files (uploads, node memory files, offloaded outputs) were not checked: no
    /// object storage is configured for this database.
    pub files_not_checked: bool,
}

impl DoctorReport {
    /// A source's own scan: no deleted conversations or archived runs to skip.
    fn without_dify_rows(conversations: usize, messages: usize, findings: Vec<Finding>) -> Self {
        DoctorReport {
            conversations,
            messages,
            findings,
            ..DoctorReport::default()
        }
    }
}

/// The checks of one conversation's messages (oldest first), pure.
pub fn check_conversation(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    settings: &DoctorSettings,
    cache: &mut CountCache,
) -> Vec<Finding> {
    let Some(newest) = rows_oldest_first.last() else {
        return Vec::new();
    };
    let conversation_id = &newest.conversation_id;
    let mut findings = Vec::new();
    let tree = MessageTree::build(rows_oldest_first);
    findings.extend(tree.anomalies().iter().map(|anomaly| Finding::TreeAnomaly {
        conversation_id: conversation_id.clone(),
        anomaly: anomaly.to_string(),
    }));

    let window = memory_rows_newest_first(rows_oldest_first, answered_rows_only, MAX_ROW_WINDOW);
    let extracted = extract_thread(&window, ExtractionMode::Dify);
    if let Some(leaf) = tree.find(&newest.id) {
        let comparison = compare_thread(
            rows_oldest_first,
            answered_rows_only,
            &window,
            &extracted,
            &tree,
            leaf,
        );
        // A thread cut by the row window is Dify working as designed, not a fault.
        if !matches!(
            comparison,
            ThreadComparison::Same | ThreadComparison::WindowCut { .. }
        ) {
            findings.push(Finding::ThreadDivergence {
                conversation_id: conversation_id.clone(),
                newest_message: newest.id.clone(),
                explanation: comparison.to_string(),
                comparison,
            });
        }
    }

    let history = assemble_history(&window, &[], &HistoryOptions::default());
    let messages: Vec<_> = history.prompt_messages().cloned().collect();
    let tokens = cache.count_list(&settings.counter, &messages);
    if tokens as i128 > settings.budget as i128 {
        findings.push(Finding::OverBudget {
            conversation_id: conversation_id.clone(),
            tokens,
            budget: settings.budget,
            messages: messages.len(),
        });
    }
    findings
}

/// Scans the whole database: one streaming pass over the messages, then the run and JSON checks.
pub async fn run(store: &Store, settings: &DoctorSettings) -> Result<DoctorReport, InspectError> {
    run_with_progress(store, settings, |_| {}).await
}

/// [`run`], telling `progress` how many messages the scan has read so far (unreadable rows
/// included) after each conversation.
pub async fn run_with_progress(
    store: &Store,
    settings: &DoctorSettings,
    progress: impl FnMut(u64) + Send,
) -> Result<DoctorReport, InspectError> {
    let never = CancelFlag::default();
    let report = run_until(store, settings, &never, progress).await?;
    Ok(report.unwrap_or_default())
}

/// How many messages a scan reads (checkpoints, on a LangGraph database), for a progress
/// gauge: a count, so rows written since may take a scan past it.
pub async fn messages_to_scan(store: &Store) -> Result<u64, InspectError> {
    if let Some(doctor) = doctor_of(store.profile().source) {
        return Ok(doctor.to_scan(store).await?);
    }
    let counts = store.table_counts().await?;
    Ok(counts
        .iter()
        .find(|count| count.table == "messages")
        .map_or(0, |count| count.rows.max(0) as u64))
}

/// What a scan's progress counts, singular: "message", "checkpoint" on a LangGraph database.
pub fn scanned_unit(store: &Store) -> &'static str {
    doctor_of(store.profile().source).map_or("message", |doctor| doctor.unit())
}

/// [`run_with_progress`] until `stop` is cancelled, which ends the scan of the messages at its
/// next row and gives `None` (the checks running beside it are dropped).
pub async fn run_until(
    store: &Store,
    settings: &DoctorSettings,
    stop: &CancelFlag,
    progress: impl FnMut(u64) + Send,
) -> Result<Option<DoctorReport>, InspectError> {
    if let Some(doctor) = doctor_of(store.profile().source) {
        let mut progress = progress;
        let scan = doctor.scan(store, settings, stop, &mut progress).await?;
        return Ok(scan.map(|scan| {
            let findings = scan.findings.into_iter().map(Finding::Source).collect();
            DoctorReport::without_dify_rows(scan.conversations, scan.messages, findings)
        }));
    }
    // Dify's scan: its tables must be there (a source with a scan of its own says what it
    // lacks itself).
    store.require(Part::Conversations)?;
    // The table checks need nothing from the scan, so they run beside it on another connection:
    // the server sorts every message before the scan's first row arrives, and the checks' own
    // passes fit in that wait instead of following it.
    let scan = std::pin::pin!(scan_conversations(store, settings, stop, progress));
    let checks = std::pin::pin!(table_checks(store, settings));
    let (scan, checks) = match future::select(scan, checks).await {
        Either::Left((scan, checks)) => {
            let scan = scan?;
            if stop.is_cancelled() {
                return Ok(None);
            }
            (scan, checks.await?)
        }
        Either::Right((checks, scan)) => {
            let checks = checks?;
            (scan.await?, checks)
        }
    };
    if stop.is_cancelled() {
        return Ok(None);
    }
    Ok(Some(DoctorReport {
        files_not_checked: settings.storage.is_none(),
        ..checks.into_report(scan)
    }))
}

/// What the scan of every message found, conversation by conversation.
struct ConversationScan {
    conversations: usize,
    messages: usize,
    findings: Vec<Finding>,
    /// Rows the scan could not read, in the order it met them.
    unreadable: Vec<BadRow>,
}

/// The checks of one conversation at a time over every message, oldest first.
async fn scan_conversations(
    store: &Store,
    settings: &DoctorSettings,
    stop: &CancelFlag,
    mut progress: impl FnMut(u64),
) -> Result<ConversationScan, InspectError> {
    // Counts are not reused across conversations: a small cache keeps memory flat.
    let mut cache = CountCache::new(4_096);
    let mut scan = ConversationScan {
        conversations: 0,
        messages: 0,
        findings: Vec::new(),
        unreadable: Vec::new(),
    };
    let answered_rows_only = store.profile().answered_rows_only();
    // Both callbacks see it (one counts, the other reads); atomic so the future stays `Send`.
    let unreadable_rows = AtomicU64::new(0);
    let mut unreadable = Vec::new();
    store
        .for_each_conversation_until(
            stop,
            |rows| {
                scan.conversations += 1;
                scan.messages += rows.len();
                scan.findings.extend(check_conversation(
                    &rows,
                    answered_rows_only,
                    settings,
                    &mut cache,
                ));
                progress(scan.messages as u64 + unreadable_rows.load(Ordering::Relaxed));
            },
            |bad| {
                unreadable_rows.fetch_add(1, Ordering::Relaxed);
                unreadable.push(bad);
            },
        )
        .await?;
    scan.unreadable = unreadable;
    Ok(scan)
}

/// The checks beside the scan: deleted conversations and archived runs counted, messages
/// whose run is gone, node JSON that does not parse, node contexts and message files.
struct TableChecks {
    deleted_skipped: i64,
    archived_runs: i64,
    /// Rows these checks could not read, each once.
    unreadable: Vec<BadRow>,
    dangling_runs: Vec<DanglingRunRef>,
    bad_json: Vec<BadNodeJson>,
    node_findings: Vec<Finding>,
    file_findings: Vec<Finding>,
}

async fn table_checks(
    store: &Store,
    settings: &DoctorSettings,
) -> Result<TableChecks, InspectError> {
    let mut unreadable: Vec<BadRow> = Vec::new();
    let mut note = |bad: BadRow| {
        if !already_noted(&unreadable, &bad) {
            unreadable.push(bad);
        }
    };
    let deleted_skipped = store.deleted_conversation_count().await?;
    let archived_runs = store.archived_run_messages().await?;
    let dangling_runs = store.dangling_workflow_runs(&mut note).await?;
    let bad_json = store.bad_node_json(&mut note).await?;
    let node_findings = node_context_findings(store, settings, &mut note).await?;
    let file_findings = match &settings.storage {
        Some(storage) => message_file_findings(store, storage).await?,
        None => Vec::new(),
    };
    Ok(TableChecks {
        deleted_skipped,
        archived_runs,
        unreadable,
        dangling_runs,
        bad_json,
        node_findings,
        file_findings,
    })
}

fn already_noted(unreadable: &[BadRow], bad: &BadRow) -> bool {
    unreadable
        .iter()
        .any(|seen| seen.table == bad.table && seen.id == bad.id)
}

impl TableChecks {
    /// The report: the scan's findings, then every unreadable row once (the scan's first),
    /// then the table checks' findings.
    fn into_report(self, scan: ConversationScan) -> DoctorReport {
        let mut unreadable = scan.unreadable;
        for bad in self.unreadable {
            if !already_noted(&unreadable, &bad) {
                unreadable.push(bad);
            }
        }
        let mut findings = scan.findings;
        findings.extend(unreadable.into_iter().map(|bad| Finding::UnreadableRow {
            table: bad.table.to_owned(),
            id: bad.id,
            error: bad.error,
        }));
        findings.extend(self.dangling_runs.into_iter().map(|dangling| {
            Finding::DanglingWorkflowRun {
                conversation_id: dangling.conversation_id,
                message_id: dangling.message_id,
                workflow_run_id: dangling.workflow_run_id,
            }
        }));
        findings.extend(
            self.bad_json
                .into_iter()
                .map(|bad| Finding::UnreadableJson {
                    node_execution_id: bad.node_execution_id,
                    node_id: bad.node_id,
                    column: bad.column.to_owned(),
                    error: bad.error,
                }),
        );
        findings.extend(self.node_findings);
        findings.extend(self.file_findings);
        DoctorReport {
            conversations: scan.conversations,
            messages: scan.messages,
            deleted_skipped: self.deleted_skipped,
            archived_runs: self.archived_runs,
            findings,
            files_not_checked: false,
        }
    }
}

/// The problems in one LLM execution's context and prompts. An unparsable row column is
/// already an `unreadable_json` finding; an unparsable offloaded copy is reported here.
fn execution_findings(docs: &ExecutionDocs, node_id: &str) -> Vec<Finding> {
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
        .map(|problem| Finding::NodeContext {
            node_execution_id: Some(docs.id.clone()),
            node_id: Some(node_id.to_owned()),
            problem: problem.clone(),
        })
        .collect()
}

/// Streams every LLM execution, then follows offload links and reads every node memory file.
async fn node_context_findings(
    store: &Store,
    settings: &DoctorSettings,
    bad_row: impl FnMut(BadRow),
) -> Result<Vec<Finding>, InspectError> {
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
async fn memory_file_findings(storage: &ObjectStore) -> Vec<Finding> {
    let finding = |node_id: Option<String>, problem| Finding::NodeContext {
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
async fn message_file_findings(
    store: &Store,
    storage: &ObjectStore,
) -> Result<Vec<Finding>, InspectError> {
    let uploads = store.message_uploads().await?;
    let keys: Vec<String> = uploads.iter().map(|u| u.key.clone()).collect();
    let sizes = storage.sizes(&keys).await;
    Ok(uploads
        .into_iter()
        .zip(sizes)
        .filter_map(|(upload, size)| {
            let error = size.err()?;
            Some(Finding::MissingMessageFile {
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

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;

//! `doctor` on a Dify database (and on memscope's own, which keeps Dify's tables): one pass over
//! every message, conversation by conversation, for the problems that make a bot forget, leak or
//! overflow, and beside it the checks of the other tables and of the files in storage.

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::{self, Either};

use super::doctor_files::{message_file_findings, node_context_findings};
use super::doctor_finding::DifyFinding;
use super::queries::{BadNodeJson, DanglingRunRef};
use crate::memory::history::{HistoryOptions, MAX_ROW_WINDOW, assemble_history};
use crate::memory::model::StoredMessage;
use crate::memory::thread::{ExtractionMode, ThreadComparison, extract_thread};
use crate::memory::thread_view::{compare_thread, memory_rows_newest_first};
use crate::memory::tokens::CountCache;
use crate::memory::tree::MessageTree;
use crate::sources::conversation::SourceFuture;
use crate::sources::doctor::{ConversationDoctor, DoctorSettings, Found, SourceScan};
use crate::store::{BadRow, CancelFlag, Part, Store, StoreError};

/// `doctor` on Dify's tables.
pub struct DifyDoctor;

impl ConversationDoctor for DifyDoctor {
    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64> {
        Box::pin(async move {
            let counts = store.table_counts().await?;
            Ok(counts
                .iter()
                .find(|count| count.table == "messages")
                .map_or(0, |count| count.rows.max(0) as u64))
        })
    }

    fn scan<'a>(
        &'a self,
        store: &'a Store,
        settings: &'a DoctorSettings,
        stop: &'a CancelFlag,
        progress: &'a mut (dyn FnMut(u64) + Send),
    ) -> SourceFuture<'a, Option<SourceScan>> {
        Box::pin(async move { Ok(scan(store, settings, stop, progress).await?) })
    }
}

/// The scan of every message beside the table checks, until `stop` is cancelled (then `None`,
/// the checks running beside it dropped).
async fn scan(
    store: &Store,
    settings: &DoctorSettings,
    stop: &CancelFlag,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Option<SourceScan>, StoreError> {
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
    Ok(Some(SourceScan {
        files_not_checked: settings.storage.is_none(),
        ..checks.into_scan(scan)
    }))
}

/// The checks of one conversation's messages (oldest first), pure.
pub fn check_conversation(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    settings: &DoctorSettings,
    cache: &mut CountCache,
) -> Vec<DifyFinding> {
    let Some(newest) = rows_oldest_first.last() else {
        return Vec::new();
    };
    let conversation_id = &newest.conversation_id;
    let mut findings = Vec::new();
    let tree = MessageTree::build(rows_oldest_first);
    findings.extend(
        tree.anomalies()
            .iter()
            .map(|anomaly| DifyFinding::TreeAnomaly {
                conversation_id: conversation_id.clone(),
                anomaly: anomaly.to_string(),
            }),
    );

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
            findings.push(DifyFinding::ThreadDivergence {
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
        findings.push(DifyFinding::OverBudget {
            conversation_id: conversation_id.clone(),
            tokens,
            budget: settings.budget,
            messages: messages.len(),
        });
    }
    findings
}

/// What the scan of every message found, conversation by conversation.
struct ConversationScan {
    conversations: usize,
    messages: usize,
    findings: Vec<DifyFinding>,
    /// Rows the scan could not read, in the order it met them.
    unreadable: Vec<BadRow>,
}

/// The checks of one conversation at a time over every message, oldest first.
async fn scan_conversations(
    store: &Store,
    settings: &DoctorSettings,
    stop: &CancelFlag,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<ConversationScan, StoreError> {
    // Counts are not reused across conversations: a small cache keeps memory flat.
    let mut cache = CountCache::new(4_096);
    let mut scan = ConversationScan {
        conversations: 0,
        messages: 0,
        findings: Vec::new(),
        unreadable: Vec::new(),
    };
    let answered_rows_only = store.dify_schema().memory_skips_unanswered();
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
    node_findings: Vec<DifyFinding>,
    file_findings: Vec<DifyFinding>,
}

async fn table_checks(store: &Store, settings: &DoctorSettings) -> Result<TableChecks, StoreError> {
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
    /// The scan's findings, then every unreadable row once (the scan's first), then the table
    /// checks' findings.
    fn into_scan(self, scan: ConversationScan) -> SourceScan {
        let mut unreadable = scan.unreadable;
        for bad in self.unreadable {
            if !already_noted(&unreadable, &bad) {
                unreadable.push(bad);
            }
        }
        let mut findings = scan.findings;
        findings.extend(
            unreadable
                .into_iter()
                .map(|bad| DifyFinding::UnreadableRow {
                    table: bad.table.to_owned(),
                    id: bad.id,
                    error: bad.error,
                }),
        );
        findings.extend(self.dangling_runs.into_iter().map(|dangling| {
            DifyFinding::DanglingWorkflowRun {
                conversation_id: dangling.conversation_id,
                message_id: dangling.message_id,
                workflow_run_id: dangling.workflow_run_id,
            }
        }));
        findings.extend(
            self.bad_json
                .into_iter()
                .map(|bad| DifyFinding::UnreadableJson {
                    node_execution_id: bad.node_execution_id,
                    node_id: bad.node_id,
                    column: bad.column.to_owned(),
                    error: bad.error,
                }),
        );
        findings.extend(self.node_findings);
        findings.extend(self.file_findings);
        SourceScan {
            conversations: scan.conversations,
            messages: scan.messages,
            findings: findings.into_iter().map(Found::new).collect(),
            deleted_skipped: self.deleted_skipped,
            archived_runs: self.archived_runs,
            files_not_checked: false,
        }
    }
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;

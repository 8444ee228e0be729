//! Whole-demo checks (determinism, foreign-key order, summary) and helpers the per-module tests
//! share.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use tempfile::TempDir;

use super::*;
use crate::memory::model::{StoredMessage, UUID_NIL};
use crate::store::rows::ConversationRow;

/// A generated small demo with its directories.
pub(crate) struct SmallDemo {
    pub(crate) batches: Vec<Batch>,
    pub(crate) summary: DemoSummary,
    pub(crate) storage: TempDir,
    pub(crate) kb: TempDir,
}

impl SmallDemo {
    pub(crate) fn story(&self, title: &str) -> &Story {
        self.summary
            .stories
            .iter()
            .find(|story| story.title == title)
            .unwrap_or_else(|| panic!("no story {title:?}"))
    }

    /// The story conversation titled `title` and its rows, oldest first.
    pub(crate) fn conversation(&self, title: &str) -> (ConversationRow, Vec<StoredMessage>) {
        let story = self.story(title);
        let conversation = self
            .batches
            .iter()
            .flat_map(|batch| &batch.conversations)
            .find(|conversation| conversation.id == story.id)
            .expect("the story's conversation")
            .clone();
        let rows = self
            .batches
            .iter()
            .flat_map(|batch| &batch.messages)
            .filter(|row| row.message.conversation_id == story.id)
            .map(|row| row.message.clone())
            .collect();
        (conversation, rows)
    }
}

fn generate_into(seed: u64, plan: Option<BulkPlan>) -> SmallDemo {
    let storage = TempDir::new().expect("temp dir");
    let kb = TempDir::new().expect("temp dir");
    let options = DemoOptions {
        scale: Scale::Small,
        seed,
        storage_root: storage.path().to_owned(),
        kb_root: kb.path().to_owned(),
    };
    let mut demo = Demo::with_bulk(&options, plan);
    let batches = demo
        .by_ref()
        .collect::<Result<Vec<_>, _>>()
        .expect("demo generated");
    SmallDemo {
        batches,
        summary: demo.into_summary(),
        storage,
        kb,
    }
}

pub(crate) fn small() -> SmallDemo {
    generate_into(42, None)
}

/// Dify's `extract_thread_messages` on rows given oldest first (so newest first is the reverse;
/// demo rows never share a second), returned oldest first.
pub(crate) fn thread(rows: &[StoredMessage]) -> Vec<&StoredMessage> {
    let mut thread = Vec::new();
    let mut next: Option<&str> = None;
    for row in rows.iter().rev() {
        let Some(parent) = row.parent() else {
            thread.push(row);
            break;
        };
        if next.is_none() || next == Some(row.id.as_str()) || next == Some(UUID_NIL) {
            thread.push(row);
            next = Some(parent);
        }
    }
    thread.reverse();
    thread
}

/// Every file below `root`, by relative path.
fn files_below(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(root).expect("below root");
                let bytes = std::fs::read(&path).expect("readable file");
                files.insert(relative.to_string_lossy().into_owned(), bytes);
            }
        }
    }
    files
}

const TINY_PLAN: BulkPlan = BulkPlan {
    conversations: 30,
    rows_per_conversation: 6,
    conversations_per_batch: 8,
};

#[test]
fn same_seed_gives_identical_batches_and_files() {
    let first = generate_into(7, Some(TINY_PLAN));
    let second = generate_into(7, Some(TINY_PLAN));
    assert_eq!(first.batches, second.batches);
    assert_eq!(first.summary, second.summary);
    let storage = files_below(first.storage.path());
    assert!(storage.keys().any(|path| path.starts_with("node_memory/")));
    assert!(storage.keys().any(|path| path.starts_with("upload_files/")));
    assert_eq!(storage, files_below(second.storage.path()));
    let kb = files_below(first.kb.path());
    assert_eq!(kb.len(), 2);
    assert_eq!(kb, files_below(second.kb.path()));
}

#[test]
fn another_seed_gives_other_ids() {
    let first = small();
    let other = generate_into(43, None);
    let ids = |demo: &SmallDemo| -> Vec<String> {
        demo.batches
            .iter()
            .flat_map(|batch| &batch.messages)
            .map(|row| row.message.id.clone())
            .collect()
    };
    assert_eq!(ids(&first).len(), ids(&other).len());
    assert_ne!(ids(&first), ids(&other));
}

/// Ids seen so far per referenced table.
#[derive(Default)]
struct Seen {
    apps: HashSet<String>,
    conversations: HashSet<String>,
    uploads: HashSet<String>,
    runs: HashSet<String>,
    messages: HashSet<String>,
    executions: HashSet<String>,
    chat_memories: HashSet<String>,
    users: HashSet<String>,
    flows: HashSet<String>,
    jobs: HashSet<String>,
    lf_messages: HashSet<String>,
    memory_bases: HashSet<String>,
}

/// Checks every reference against the rows of this and earlier batches, tables in `Batch`
/// order. Returns the violations and the message ids whose `workflow_run_id` dangles (which
/// Dify allows: there is no foreign key).
fn check_references(batches: &[Batch]) -> (Vec<String>, Vec<String>) {
    let mut seen = Seen::default();
    let mut violations = Vec::new();
    let mut dangling_runs = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            violations.push(what);
        }
    };
    for (index, batch) in batches.iter().enumerate() {
        seen.apps
            .extend(batch.apps.iter().map(|app| app.id.clone()));
        for c in &batch.conversations {
            check(
                seen.apps.contains(&c.app_id),
                format!("{index}: conversation {} app", c.id),
            );
            seen.conversations.insert(c.id.clone());
        }
        seen.uploads
            .extend(batch.upload_files.iter().map(|u| u.id.clone()));
        for run in &batch.workflow_runs {
            check(
                seen.apps.contains(&run.app_id),
                format!("{index}: run {} app", run.id),
            );
            seen.runs.insert(run.id.clone());
        }
        for row in &batch.messages {
            let m = &row.message;
            check(
                seen.apps.contains(&row.app_id),
                format!("{index}: message {} app", m.id),
            );
            check(
                seen.conversations.contains(&m.conversation_id),
                format!("{index}: message {} conversation", m.id),
            );
            if let Some(parent) = m.parent().filter(|&parent| parent != UUID_NIL) {
                check(
                    seen.messages.contains(parent),
                    format!("{index}: message {} parent", m.id),
                );
            }
            if let Some(run) = &m.workflow_run_id
                && !seen.runs.contains(run)
            {
                dangling_runs.push(m.id.clone());
            }
            seen.messages.insert(m.id.clone());
        }
        for file in &batch.message_files {
            check(
                seen.messages.contains(&file.message_id),
                format!("{index}: file {} message", file.id),
            );
            if file.transfer_method == "local_file" {
                let upload = file.upload_file_id.as_deref().unwrap_or_default();
                check(
                    seen.uploads.contains(upload),
                    format!("{index}: file {} upload", file.id),
                );
            }
        }
        for execution in &batch.node_executions {
            let run = execution.workflow_run_id.as_deref().unwrap_or_default();
            check(
                seen.runs.contains(run),
                format!("{index}: execution {} run", execution.id),
            );
            seen.executions.insert(execution.id.clone());
        }
        for offload in &batch.node_execution_offloads {
            check(
                seen.executions.contains(&offload.node_execution_id),
                format!("{index}: offload {} execution", offload.id),
            );
            check(
                seen.uploads.contains(&offload.file_id),
                format!("{index}: offload {} file", offload.id),
            );
        }
        seen.chat_memories
            .extend(batch.chat_memories.iter().map(|m| m.id.clone()));
        for message in &batch.chat_memory_messages {
            check(
                seen.chat_memories.contains(&message.chat_memory_id),
                format!("{index}: chat memory message {}", message.id),
            );
        }
        seen.users
            .extend(batch.lf_users.iter().map(|user| user.id.clone()));
        for flow in &batch.flows {
            check(
                seen.users.contains(&flow.user_id),
                format!("{index}: flow {} user", flow.id),
            );
            seen.flows.insert(flow.id.clone());
        }
        for job in &batch.jobs {
            let flow = job.flow_id.as_deref().unwrap_or_default();
            check(
                seen.flows.contains(flow),
                format!("{index}: job {} flow", job.job_id),
            );
            seen.jobs.insert(job.job_id.clone());
        }
        for message in &batch.lf_messages {
            let flow = message.flow_id.as_deref().unwrap_or_default();
            check(
                seen.flows.contains(flow),
                format!("{index}: lf message {} flow", message.id),
            );
            seen.lf_messages.insert(message.id.clone());
        }
        for base in &batch.memory_bases {
            check(
                seen.flows.contains(&base.flow_id),
                format!("{index}: base {} flow", base.id),
            );
            check(
                seen.users.contains(&base.user_id),
                format!("{index}: base {} user", base.id),
            );
            seen.memory_bases.insert(base.id.clone());
        }
        for session in &batch.memory_base_sessions {
            check(
                seen.memory_bases.contains(&session.memory_base_id),
                format!("{index}: session {} base", session.id),
            );
            if let Some(cursor) = &session.cursor_id {
                check(
                    seen.lf_messages.contains(cursor),
                    format!("{index}: session {} cursor", session.id),
                );
            }
        }
        for run in &batch.memory_base_workflow_runs {
            check(
                seen.memory_bases.contains(&run.memory_base_id),
                format!("{index}: mb run {} base", run.id),
            );
            for job in run.workflow_job_id.iter().chain(&run.ingestion_job_id) {
                check(
                    seen.jobs.contains(job),
                    format!("{index}: mb run {} job", run.id),
                );
            }
        }
        for record in &batch.ingestion_records {
            check(
                seen.lf_messages.contains(&record.message_id),
                format!("{index}: record {} message", record.id),
            );
            check(
                seen.memory_bases.contains(&record.memory_base_id),
                format!("{index}: record {} base", record.id),
            );
            let job = record.job_id.as_deref().unwrap_or_default();
            check(
                seen.jobs.contains(job),
                format!("{index}: record {} job", record.id),
            );
        }
    }
    (violations, dangling_runs)
}

#[test]
fn batches_respect_foreign_key_order() {
    let demo = generate_into(11, Some(TINY_PLAN));
    let (violations, dangling_runs) = check_references(&demo.batches);
    assert_eq!(violations, Vec::<String>::new());
    let orphan = demo.story("Orphaned workflow run");
    assert_eq!(dangling_runs, std::slice::from_ref(&orphan.id));
}

#[test]
fn the_checker_catches_a_reference_to_a_later_batch() {
    let demo = small();
    let mut batches = demo.batches;
    let apps = std::mem::take(&mut batches[0].apps);
    batches.push(Batch {
        apps,
        ..Batch::default()
    });
    let (violations, _) = check_references(&batches);
    assert!(!violations.is_empty());
}

#[test]
fn ids_are_unique_per_table() {
    let demo = generate_into(5, Some(TINY_PLAN));
    let messages: Vec<&str> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.messages)
        .map(|row| row.message.id.as_str())
        .collect();
    let unique: HashSet<&&str> = messages.iter().collect();
    assert_eq!(unique.len(), messages.len());
}

#[test]
fn summary_counts_every_row_and_names_existing_stories() {
    let demo = generate_into(3, Some(TINY_PLAN));
    let rows: usize = demo.batches.iter().map(Batch::len).sum();
    assert_eq!(demo.summary.counts.total(), rows as u64);
    assert_eq!(
        demo.summary.counts.messages,
        demo.batches
            .iter()
            .map(|b| b.messages.len() as u64)
            .sum::<u64>()
    );
    assert!(demo.summary.counts.messages >= TINY_PLAN.messages());
    assert!(demo.summary.stories.len() >= 15);
    for story in &demo.summary.stories {
        let found = demo.batches.iter().any(|batch| match story.table {
            "conversations" => batch.conversations.iter().any(|c| c.id == story.id),
            "messages" => batch.messages.iter().any(|m| m.message.id == story.id),
            "workflow_node_executions" => batch.node_executions.iter().any(|e| e.id == story.id),
            "chat_memories" => batch.chat_memories.iter().any(|m| m.id == story.id),
            "memory_base" => batch.memory_bases.iter().any(|b| b.id == story.id),
            _ => false,
        });
        assert!(found, "story {:?} points at nothing", story.title);
    }
}

#[test]
fn generate_streams_to_the_sink_and_stops_on_its_error() {
    let storage = TempDir::new().expect("temp dir");
    let options = DemoOptions {
        scale: Scale::Small,
        seed: 42,
        storage_root: storage.path().to_owned(),
        kb_root: storage.path().join("kb"),
    };
    let mut received = Vec::new();
    let summary = generate(&options, &mut |batch| {
        received.push(batch);
        Ok::<(), String>(())
    })
    .expect("generated");
    assert_eq!(received.len(), 4);
    assert_eq!(summary, small().summary);

    let mut calls = 0;
    let error = generate(&options, &mut |_| {
        calls += 1;
        Err("disk full".to_owned())
    })
    .expect_err("the sink failed");
    assert_eq!(calls, 1);
    assert!(matches!(error, DemoError::Sink(ref message) if message == "disk full"));
}

#[test]
fn an_unwritable_storage_root_is_a_file_error() {
    let dir = TempDir::new().expect("temp dir");
    let not_a_directory = dir.path().join("file");
    std::fs::write(&not_a_directory, b"x").expect("setup");
    let options = DemoOptions {
        scale: Scale::Small,
        seed: 1,
        storage_root: not_a_directory,
        kb_root: dir.path().join("kb"),
    };
    let error = generate(&options, &mut |_| Ok::<(), String>(())).expect_err("cannot write");
    assert!(matches!(error, DemoError::File(_)));
    let mut demo = Demo::new(&options);
    assert!(matches!(demo.next(), Some(Err(_))));
    assert!(demo.next().is_none(), "the iterator ends after an error");
}

#[test]
fn demo_can_move_to_a_blocking_thread() {
    // Callers generate on a blocking thread and insert on the async runtime.
    fn movable<T: Send + 'static>(_: &T) {}
    let storage = TempDir::new().expect("temp dir");
    let demo = Demo::new(&DemoOptions {
        scale: Scale::Large,
        seed: 1,
        storage_root: storage.path().to_owned(),
        kb_root: storage.path().join("kb"),
    });
    movable(&demo);
    let handle = std::thread::spawn(move || demo.take(1).count());
    assert_eq!(handle.join().expect("thread finished"), 1);
}

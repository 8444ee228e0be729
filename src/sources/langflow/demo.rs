//! Langflow: users, flows, sessions of flow runs, and memory bases in the states an operator
//! meets: synced with runs pending, above threshold, auto-capture off, and a knowledge base gone
//! missing (mismatch).
//!
//! Only `embedding_metadata.json` is written for each knowledge base; the vector store files
//! (Chroma) are built by a later feature, which also fills in `size`.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::demo::chapter::{Chapter, LANGFLOW_STREAM, Setting, Story};
use crate::demo::files::{FileRoot, WriteFileError};
use crate::demo::ids::{DemoRng, base_time, seconds, utc};
use crate::demo::text::{prose, short_answer, short_query};
use crate::memory::memory_base::kb_name_stem;
use crate::store::rows::{
    Batch, FlowRow, IngestionRecordRow, JobRow, LfMessageRow, LfUserRow, MemoryBaseRow,
    MemoryBaseSessionRow, MemoryBaseWorkflowRunRow,
};

/// The embedder memscope's knowledge bases use: lexical feature hashing, no model download.
const EMBEDDING_PROVIDER: &str = "memscope";
const EMBEDDING_MODEL: &str = "hashing-lexical";
const EMBEDDING_DIMENSION: u32 = 384;

/// Langflow's default `RecursiveCharacterTextSplitter` settings for memory documents. Every demo
/// message is shorter than a chunk, so each ingested message is one chunk.
const CHUNK_SIZE: usize = 1000;
const CHUNK_OVERLAP: usize = 100;

/// `Properties` as Langflow dumps it for a plain chat message.
const PROPERTIES: &str = r#"{"text_color":null,"background_color":null,"edited":false,"source":{"id":null,"display_name":null,"source":null},"icon":null,"allow_markdown":false,"positive_feedback":null,"state":"complete","targets":[]}"#;

/// One completed flow run: a user message, the machine's output, and the workflow job.
struct FlowRun {
    job_id: String,
    message_ids: [String; 2],
    texts: [String; 2],
    finished_at: DateTime<Utc>,
}

/// Plays flow runs in one session, advancing a shared clock.
struct Sessions<'a> {
    clock: DateTime<Utc>,
    batch: &'a mut Batch,
}

/// How the sessions of a flow talk.
#[derive(Clone, Copy)]
enum Topic {
    Support,
    Research,
    Releases,
}

impl Sessions<'_> {
    fn play(
        &mut self,
        rng: &mut DemoRng,
        flow: &FlowRow,
        session_id: &str,
        topic: Topic,
        runs: usize,
    ) -> Vec<FlowRun> {
        (0..runs)
            .map(|index| {
                let (question, answer) = match topic {
                    Topic::Support => (short_query(rng), short_answer(rng)),
                    Topic::Research => (
                        format!("Note {}: what did we learn about the rollout?", index + 1),
                        prose(rng, 2),
                    ),
                    Topic::Releases => (
                        format!("Draft release notes for v2.{index}"),
                        format!("v2.{index}: {}", short_answer(rng)),
                    ),
                };
                self.run(rng, flow, session_id, question, answer)
            })
            .collect()
    }

    fn run(
        &mut self,
        rng: &mut DemoRng,
        flow: &FlowRow,
        session_id: &str,
        question: String,
        answer: String,
    ) -> FlowRun {
        self.clock += seconds(rng.between(60, 1800));
        let started = self.clock;
        let run_id = rng.uuid();
        let mut message = |sender: &str, sender_name: &str, text: &str, offset_ms: i64| {
            let id = rng.uuid();
            let micros = rng.between(0, 999);
            self.batch.lf_messages.push(LfMessageRow {
                id: id.clone(),
                timestamp: started
                    + chrono::TimeDelta::milliseconds(offset_ms)
                    + chrono::TimeDelta::microseconds(micros),
                sender: sender.to_owned(),
                sender_name: sender_name.to_owned(),
                session_id: session_id.to_owned(),
                text: text.to_owned(),
                files: "[]".to_owned(),
                error: false,
                edit: false,
                properties: PROPERTIES.to_owned(),
                category: "message".to_owned(),
                content_blocks: "[]".to_owned(),
                flow_id: Some(flow.id.clone()),
                run_id: Some(run_id.clone()),
                is_output: sender == "Machine",
            });
            id
        };
        let user_message = message("User", "User", &question, 0);
        let machine_message = message("Machine", "AI", &answer, 2_400);
        let finished_at = started + seconds(3);
        let job_id = rng.uuid();
        self.batch.jobs.push(JobRow {
            job_id: job_id.clone(),
            flow_id: Some(flow.id.clone()),
            status: "completed".to_owned(),
            job_type: "workflow".to_owned(),
            user_id: Some(flow.user_id.clone()),
            asset_id: None,
            asset_type: None,
            dedupe_key: None,
            created_timestamp: started,
            finished_timestamp: Some(finished_at),
        });
        FlowRun {
            job_id,
            message_ids: [user_message, machine_message],
            texts: [question, answer],
            finished_at,
        }
    }
}

/// An ingestion job that ran after the first `through_run` runs of a session.
struct Sync {
    through_run: usize,
    succeeded: bool,
}

/// What ingestion put into a memory base's knowledge base.
#[derive(Default)]
struct Ingested {
    texts: Vec<String>,
}

/// Records a memory base tracking a session: one workflow-run row per flow run, and for each
/// sync an ingestion job; successful syncs stamp their runs, write ingestion records and move
/// the cursor, failed ones leave everything pending.
fn track(
    rng: &mut DemoRng,
    base: &MemoryBaseRow,
    session_id: &str,
    runs: &[FlowRun],
    syncs: &[Sync],
    ingested: &mut Ingested,
    batch: &mut Batch,
) {
    let mut session = MemoryBaseSessionRow {
        id: rng.uuid(),
        memory_base_id: base.id.clone(),
        session_id: session_id.to_owned(),
        cursor_id: None,
        total_processed: 0,
        last_sync_at: None,
    };
    let mut ingestion_jobs: Vec<Option<String>> = vec![None; runs.len()];
    let mut first_pending = 0;
    for sync in syncs {
        let pending = &runs[first_pending..sync.through_run];
        let Some(latest) = pending.last() else {
            continue;
        };
        let job_id = rng.uuid();
        let started = latest.finished_at + seconds(5);
        let finished = started + seconds(20);
        batch.jobs.push(JobRow {
            job_id: job_id.clone(),
            flow_id: Some(base.flow_id.clone()),
            status: if sync.succeeded {
                "completed"
            } else {
                "failed"
            }
            .to_owned(),
            job_type: "ingestion".to_owned(),
            user_id: Some(base.user_id.clone()),
            asset_id: Some(base.id.clone()),
            asset_type: Some("memory_base".to_owned()),
            dedupe_key: Some(format!(
                "ingestion:{}:{session_id}:{}",
                base.id, latest.job_id
            )),
            created_timestamp: started,
            finished_timestamp: Some(finished),
        });
        if !sync.succeeded {
            continue;
        }
        for run in pending {
            for (message_id, text) in run.message_ids.iter().zip(&run.texts) {
                batch.ingestion_records.push(IngestionRecordRow {
                    id: rng.uuid(),
                    message_id: message_id.clone(),
                    memory_base_id: base.id.clone(),
                    job_id: Some(job_id.clone()),
                    session_id: session_id.to_owned(),
                    ingested_at: finished,
                });
                ingested.texts.push(text.clone());
            }
        }
        ingestion_jobs[first_pending..sync.through_run].fill(Some(job_id));
        session.cursor_id = Some(latest.message_ids[1].clone());
        session.total_processed += 2 * pending.len() as i64;
        session.last_sync_at = Some(finished);
        first_pending = sync.through_run;
    }
    for (run, ingestion_job_id) in runs.iter().zip(ingestion_jobs) {
        batch
            .memory_base_workflow_runs
            .push(MemoryBaseWorkflowRunRow {
                id: rng.uuid(),
                memory_base_id: base.id.clone(),
                session_id: session_id.to_owned(),
                workflow_job_id: Some(run.job_id.clone()),
                ingestion_job_id,
                recorded_at: run.finished_at,
            });
    }
    batch.memory_base_sessions.push(session);
}

/// Langflow's `kb_name`: the sanitised name plus eight hex digits.
fn kb_name(rng: &mut DemoRng, name: &str) -> String {
    format!("{}_{}", kb_name_stem(name), rng.hex8())
}

fn memory_base(
    rng: &mut DemoRng,
    name: &str,
    flow: &FlowRow,
    threshold: i64,
    threshold_unit: &str,
    auto_capture: bool,
    created_at: DateTime<Utc>,
) -> MemoryBaseRow {
    MemoryBaseRow {
        id: rng.uuid(),
        name: name.to_owned(),
        flow_id: flow.id.clone(),
        user_id: flow.user_id.clone(),
        threshold,
        threshold_unit: threshold_unit.to_owned(),
        auto_capture,
        embedding_provider: EMBEDDING_PROVIDER.to_owned(),
        embedding_model: EMBEDDING_MODEL.to_owned(),
        kb_name: kb_name(rng, name),
        created_at,
    }
}

/// Writes `{kb_root}/{username}/{kb_name}/embedding_metadata.json` as a memory base's
/// knowledge base keeps it, with the statistics of what was ingested.
fn write_kb_metadata(
    rng: &mut DemoRng,
    kb_root: &FileRoot,
    username: &str,
    base: &MemoryBaseRow,
    ingested: &Ingested,
) -> Result<(), WriteFileError> {
    let chunks = ingested.texts.len();
    let characters: usize = ingested.texts.iter().map(|text| text.chars().count()).sum();
    let words: usize = ingested
        .texts
        .iter()
        .map(|text| text.split_whitespace().count())
        .sum();
    let average = if chunks == 0 {
        0.0
    } else {
        (characters as f64 / chunks as f64 * 10.0).round() / 10.0
    };
    let metadata = json!({
        "id": rng.uuid(),
        "embedding_provider": base.embedding_provider,
        "embedding_model": base.embedding_model,
        "embedding_dimension": EMBEDDING_DIMENSION,
        "is_memory_base": true,
        "created_at": base.created_at.to_rfc3339(),
        "chunks": chunks,
        "words": words,
        "characters": characters,
        "avg_chunk_size": average,
        "size": 0,
        "source_types": ["memory"],
        "chunk_size": CHUNK_SIZE,
        "chunk_overlap": CHUNK_OVERLAP,
        "separator": null,
    });
    kb_root.write_json(
        &format!("{username}/{}/embedding_metadata.json", base.kb_name),
        &metadata,
    )?;
    Ok(())
}

pub(crate) fn chapter(setting: &Setting) -> Result<Chapter, WriteFileError> {
    let mut rng = DemoRng::new(setting.seed, LANGFLOW_STREAM);
    let kb_root = FileRoot(setting.kb_root);
    let created = utc(base_time()) - seconds(14 * 24 * 3600);
    let mut user = |username: &str| LfUserRow {
        id: rng.uuid(),
        username: username.to_owned(),
        created_at: created,
    };
    let ada = user("ada");
    let grace = user("grace");
    let mut flow = |name: &str, owner: &LfUserRow| FlowRow {
        id: rng.uuid(),
        name: name.to_owned(),
        user_id: owner.id.clone(),
        updated_at: created + seconds(3600),
    };
    let support = flow("Support Agent", &ada);
    let research = flow("Research Notes", &ada);
    let releases = flow("Release Bot", &grace);

    let bases_created = created + seconds(2 * 24 * 3600);
    let support_memory = memory_base(
        &mut rng,
        "Support memory",
        &support,
        5,
        "runs",
        true,
        bases_created,
    );
    // Its threshold counts output messages (one per run): 13 pending is above 10, 3 below.
    let research_memory = memory_base(
        &mut rng,
        "Research notes memory",
        &research,
        10,
        "messages",
        false,
        bases_created,
    );
    let release_memory = memory_base(
        &mut rng,
        "Release history",
        &releases,
        3,
        "runs",
        true,
        bases_created,
    );

    let mut batch = Batch::default();
    let mut sessions = Sessions {
        clock: bases_created + seconds(3600),
        batch: &mut batch,
    };
    let synced_runs = sessions.play(&mut rng, &support, "support-ada-0001", Topic::Support, 12);
    let failed_runs = sessions.play(&mut rng, &support, "support-ada-0002", Topic::Support, 7);
    let research_runs = sessions.play(
        &mut rng,
        &research,
        "research-ada-0001",
        Topic::Research,
        13,
    );
    let short_runs = sessions.play(&mut rng, &research, "research-ada-0002", Topic::Research, 3);
    let release_runs = sessions.play(
        &mut rng,
        &releases,
        "release-grace-0001",
        Topic::Releases,
        4,
    );

    let mut support_ingested = Ingested::default();
    let succeeded = |through_run| Sync {
        through_run,
        succeeded: true,
    };
    track(
        &mut rng,
        &support_memory,
        "support-ada-0001",
        &synced_runs,
        &[succeeded(5), succeeded(10)],
        &mut support_ingested,
        &mut batch,
    );
    track(
        &mut rng,
        &support_memory,
        "support-ada-0002",
        &failed_runs,
        &[Sync {
            through_run: 5,
            succeeded: false,
        }],
        &mut support_ingested,
        &mut batch,
    );
    let mut research_ingested = Ingested::default();
    for (session_id, runs) in [
        ("research-ada-0001", &research_runs),
        ("research-ada-0002", &short_runs),
    ] {
        track(
            &mut rng,
            &research_memory,
            session_id,
            runs,
            &[],
            &mut research_ingested,
            &mut batch,
        );
    }
    // Ingested, but its knowledge base directory is never written: a mismatch.
    track(
        &mut rng,
        &release_memory,
        "release-grace-0001",
        &release_runs,
        &[succeeded(3)],
        &mut Ingested::default(),
        &mut batch,
    );
    write_kb_metadata(
        &mut rng,
        &kb_root,
        &ada.username,
        &support_memory,
        &support_ingested,
    )?;
    write_kb_metadata(
        &mut rng,
        &kb_root,
        &ada.username,
        &research_memory,
        &research_ingested,
    )?;

    let stories = vec![
        Story {
            title: "Synced memory base",
            table: "memory_base",
            id: support_memory.id.clone(),
            demonstrates: "threshold 5 runs: one session synced twice (cursor, total_processed \
                           20, ingestion records, 2 runs pending, below threshold) and one \
                           whose ingestion failed with 7 runs pending (above threshold); \
                           knowledge-base metadata written",
        },
        Story {
            title: "Memory base above its message threshold",
            table: "memory_base",
            id: research_memory.id.clone(),
            demonstrates: "threshold 10 messages (a run's output messages), auto-capture off: \
                           one session with 13 pending (above), one with 3 (below), nothing \
                           ingested",
        },
        Story {
            title: "Memory base mismatch",
            table: "memory_base",
            id: release_memory.id.clone(),
            demonstrates: "6 messages ingested but the knowledge-base directory is missing: \
                           mismatch detected, regenerate needed",
        },
    ];
    batch.lf_users = vec![ada, grace];
    batch.flows = vec![support, research, releases];
    batch.memory_bases = vec![support_memory, research_memory, release_memory];
    Ok(Chapter { batch, stories })
}

#[cfg(test)]
#[path = "demo_tests.rs"]
mod tests;

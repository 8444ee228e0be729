//! Deterministic demo data that tells an operator's story.
//!
//! [`Demo`] yields [`Batch`]es in foreign-key order (every row a batch references is in the same
//! or an earlier batch) and writes the files that live beside the database: Dify object storage
//! (uploads, offloaded node outputs, node memory JSON) under `storage_root`, and Langflow
//! knowledge-base metadata under `kb_root`. The same seed always gives byte-identical batches and
//! files: all randomness is a seeded ChaCha8 stream and all timestamps are offsets from a fixed
//! base time.
//!
//! The small scale is a set of stories an operator can recognise (see [`DemoSummary::stories`]);
//! the large scale adds 50,000 templated conversations with 1,000,000 messages, streamed a batch
//! per 1,000 conversations.

pub(crate) mod chapter;
pub(crate) mod files;
pub(crate) mod ids;
pub(crate) mod text;

#[cfg(test)]
pub(crate) mod tests;

use std::path::PathBuf;

use crate::sources::dify::demo as dify;
use crate::sources::dify::demo::chatflow;
use crate::sources::langflow::demo as langflow;
use crate::sources::memscope::demo as chat_memory;
use crate::store::rows::Batch;

pub use crate::sources::adk::demo::{
    ADK_DEMO_APP, ADK_DEMO_USER, AdkDemoError, AdkDemoSummary, write_adk_demo,
};
pub use crate::sources::dify::demo::bulk::{BulkGenerator, BulkPlan};
pub use crate::sources::langgraph::demo::{
    LangGraphDemoError, LangGraphDemoSummary, write_langgraph_demo,
};
pub use crate::sources::openai_agents::demo::{
    OpenAiAgentsDemoError, OpenAiAgentsDemoSummary, write_openai_agents_demo,
};
pub use chapter::Story;
use chapter::{Chapter, Setting, TENANT_STREAM};
pub use files::WriteFileError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The stories only.
    Small,
    /// The stories plus [`BulkPlan::LARGE`].
    Large,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    pub scale: Scale,
    pub seed: u64,
    /// Dify's object storage root: uploads, offloaded outputs and
    /// `node_memory/{app_id}/{conversation_id}/{node_id}.json` go below it.
    pub storage_root: PathBuf,
    /// Langflow's knowledge-bases directory: `{kb_root}/{username}/{kb_name}/`.
    pub kb_root: PathBuf,
}

/// Rows generated per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounts {
    pub apps: u64,
    pub conversations: u64,
    pub upload_files: u64,
    pub workflow_runs: u64,
    pub messages: u64,
    pub message_files: u64,
    pub node_executions: u64,
    pub node_execution_offloads: u64,
    pub chat_memories: u64,
    pub chat_memory_messages: u64,
    pub lf_users: u64,
    pub flows: u64,
    pub jobs: u64,
    pub lf_messages: u64,
    pub memory_bases: u64,
    pub memory_base_sessions: u64,
    pub memory_base_workflow_runs: u64,
    pub ingestion_records: u64,
}

impl TableCounts {
    fn add(&mut self, batch: &Batch) {
        let count = |rows: usize| rows as u64;
        self.apps += count(batch.apps.len());
        self.conversations += count(batch.conversations.len());
        self.upload_files += count(batch.upload_files.len());
        self.workflow_runs += count(batch.workflow_runs.len());
        self.messages += count(batch.messages.len());
        self.message_files += count(batch.message_files.len());
        self.node_executions += count(batch.node_executions.len());
        self.node_execution_offloads += count(batch.node_execution_offloads.len());
        self.chat_memories += count(batch.chat_memories.len());
        self.chat_memory_messages += count(batch.chat_memory_messages.len());
        self.lf_users += count(batch.lf_users.len());
        self.flows += count(batch.flows.len());
        self.jobs += count(batch.jobs.len());
        self.lf_messages += count(batch.lf_messages.len());
        self.memory_bases += count(batch.memory_bases.len());
        self.memory_base_sessions += count(batch.memory_base_sessions.len());
        self.memory_base_workflow_runs += count(batch.memory_base_workflow_runs.len());
        self.ingestion_records += count(batch.ingestion_records.len());
    }

    /// `(table name, rows)` for display, in insert order.
    pub fn tables(&self) -> [(&'static str, u64); 18] {
        [
            ("apps", self.apps),
            ("conversations", self.conversations),
            ("upload_files", self.upload_files),
            ("workflow_runs", self.workflow_runs),
            ("messages", self.messages),
            ("message_files", self.message_files),
            ("workflow_node_executions", self.node_executions),
            (
                "workflow_node_execution_offload",
                self.node_execution_offloads,
            ),
            ("chat_memories", self.chat_memories),
            ("chat_memory_messages", self.chat_memory_messages),
            ("user", self.lf_users),
            ("flow", self.flows),
            ("job", self.jobs),
            ("message", self.lf_messages),
            ("memory_base", self.memory_bases),
            ("memory_base_session", self.memory_base_sessions),
            ("memory_base_workflow_run", self.memory_base_workflow_runs),
            ("message_ingestion_record", self.ingestion_records),
        ]
    }

    pub fn total(&self) -> u64 {
        self.tables().iter().map(|(_, rows)| rows).sum()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoSummary {
    pub counts: TableCounts,
    pub stories: Vec<Story>,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError<E> {
    #[error(transparent)]
    File(#[from] WriteFileError),
    #[error("storing a demo batch failed: {0}")]
    Sink(E),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoryPart {
    Dify,
    Chatflow,
    ChatMemories,
    Langflow,
}

impl StoryPart {
    fn following(self) -> Part {
        match self {
            StoryPart::Dify => Part::Story(StoryPart::Chatflow),
            StoryPart::Chatflow => Part::Story(StoryPart::ChatMemories),
            StoryPart::ChatMemories => Part::Story(StoryPart::Langflow),
            StoryPart::Langflow => Part::Bulk,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Story(StoryPart),
    Bulk,
    Done,
}

/// The demo as a stream of batches. Files are written as the batches that reference them are
/// produced; [`Demo::summary`] is complete once the iterator is exhausted.
pub struct Demo {
    seed: u64,
    tenant_id: String,
    storage_root: PathBuf,
    kb_root: PathBuf,
    bulk: Option<BulkGenerator>,
    next: Part,
    summary: DemoSummary,
}

impl Demo {
    pub fn new(options: &DemoOptions) -> Self {
        let plan = match options.scale {
            Scale::Small => None,
            Scale::Large => Some(BulkPlan::LARGE),
        };
        Demo::with_bulk(options, plan)
    }

    fn with_bulk(options: &DemoOptions, plan: Option<BulkPlan>) -> Self {
        let tenant_id = ids::DemoRng::new(options.seed, TENANT_STREAM).uuid();
        Demo {
            seed: options.seed,
            bulk: plan.map(|plan| BulkGenerator::new(options.seed, &tenant_id, plan)),
            tenant_id,
            storage_root: options.storage_root.clone(),
            kb_root: options.kb_root.clone(),
            next: Part::Story(StoryPart::Dify),
            summary: DemoSummary::default(),
        }
    }

    pub fn summary(&self) -> &DemoSummary {
        &self.summary
    }

    pub fn into_summary(self) -> DemoSummary {
        self.summary
    }

    fn chapter(&self, part: StoryPart) -> Result<Chapter, WriteFileError> {
        let setting = Setting {
            seed: self.seed,
            tenant_id: &self.tenant_id,
            storage_root: &self.storage_root,
            kb_root: &self.kb_root,
        };
        Ok(match part {
            StoryPart::Dify => dify::chapter(&setting)?,
            StoryPart::Chatflow => chatflow::chapter(&setting)?,
            StoryPart::ChatMemories => chat_memory::chapter(&setting),
            StoryPart::Langflow => langflow::chapter(&setting)?,
        })
    }
}

impl Iterator for Demo {
    type Item = Result<Batch, WriteFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.next {
            Part::Done => return None,
            Part::Bulk => match self.bulk.as_mut().and_then(Iterator::next) {
                Some(batch) => batch,
                None => {
                    self.next = Part::Done;
                    return None;
                }
            },
            Part::Story(part) => match self.chapter(part) {
                Ok(chapter) => {
                    self.next = part.following();
                    self.summary.stories.extend(chapter.stories);
                    chapter.batch
                }
                Err(error) => {
                    self.next = Part::Done;
                    return Some(Err(error));
                }
            },
        };
        self.summary.counts.add(&batch);
        Some(Ok(batch))
    }
}

/// Generates the demo, handing each batch to `sink` in order.
pub fn generate<E>(
    options: &DemoOptions,
    sink: &mut dyn FnMut(Batch) -> Result<(), E>,
) -> Result<DemoSummary, DemoError<E>> {
    let mut demo = Demo::new(options);
    for batch in demo.by_ref() {
        sink(batch?).map_err(DemoError::Sink)?;
    }
    Ok(demo.into_summary())
}

//! memscope's own schema: Dify's conversation tables, Langflow's memory-base tables and
//! memscope's chat memories, in a database memscope created (and so may write). Its demo story
//! is the chat memories' (`demo.rs`).

pub(crate) mod demo;

use std::collections::BTreeSet;

use super::adapter::{
    Capabilities, ConversationShape, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
use super::dify::schema::DifySchema;
use super::rewrite::Rewrite;
use crate::store::catalog::Catalog;

pub struct Memscope;

impl MemorySource for Memscope {
    fn name(&self) -> &'static str {
        "memscope"
    }

    fn key(&self) -> &'static str {
        "memscope"
    }

    fn recognises(&self, catalog: &Catalog, _parts: &BTreeSet<Part>) -> bool {
        catalog.created_by_memscope()
    }

    fn capabilities(&self) -> Capabilities {
        MEMSCOPE_FORMATS
    }

    fn rewrite(&self, conversation_schema: DifySchema) -> Rewrite {
        Rewrite::Dify(conversation_schema)
    }
}

/// memscope's own formats for memory bases: what its schema, and Dify's (which has none of
/// them but takes memscope's tables beside its own), allow.
pub const MEMSCOPE_FORMATS: Capabilities = Capabilities {
    memscope_writes: true,
    ingestion: Ingestion::Memscope,
    jobs: JobOwnership::ProcessRecords,
    locks: LockStyle::Memscope,
    knowledge_bases: KbHome::MemscopeDirectory,
    conversations: ConversationShape::RegenerationTrees,
};

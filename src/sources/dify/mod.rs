//! Dify's databases: conversations, their messages and workflow node executions, in the schema
//! era the catalog shows (`schema.rs`).

pub mod agent_sessions;
pub mod conversation;
pub mod demo;
pub mod doctor;
mod doctor_files;
pub mod doctor_finding;
pub mod executions;
mod history;
pub mod listing;
pub mod messages;
pub mod node_contexts;
pub mod queries;
pub mod schema;
mod thread_tree;
pub mod turn_trees;
pub mod window;

use std::collections::BTreeSet;

use super::adapter::{Capabilities, MemorySource, Part};
use super::memscope::{MEMSCOPE_FORMATS, MEMSCOPE_TABLES};
use super::rewrite::Rewrite;
use super::schema_eras::SchemaEras;
use crate::store::catalog::{Catalog, CountedTable};
use schema::DifySchema;

pub struct Dify;

impl MemorySource for Dify {
    fn name(&self) -> &'static str {
        "Dify"
    }

    fn key(&self) -> &'static str {
        "dify"
    }

    fn counted_tables(&self) -> &'static [CountedTable] {
        MEMSCOPE_TABLES
    }

    fn recognises(&self, _catalog: &Catalog, parts: &BTreeSet<Part>) -> bool {
        parts.contains(&Part::Conversations)
    }

    /// memscope's memory-base tables, when a Dify database has them, are memscope's own.
    fn capabilities(&self) -> Capabilities {
        MEMSCOPE_FORMATS
    }

    fn rewrite(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Rewrite {
        DifySchema::of_database(catalog, parts).rewrite()
    }

    fn schema_eras(&self, catalog: &Catalog, parts: &BTreeSet<Part>) -> Option<SchemaEras> {
        DifySchema::eras_of_database(catalog, parts)
    }
}

//! What opening a database finds before its profile is known: the backend a URL names and the
//! tables, columns and markers the database holds.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Which backend a URL names, if any.
    pub fn of_url(url: &str) -> Option<Backend> {
        if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Backend::Postgres)
        } else {
            None
        }
    }
}

/// What a database was found to hold when it was opened.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub tables: BTreeSet<String>,
    /// Columns of the tables whose shape differs between the sources.
    pub columns: BTreeMap<String, BTreeSet<String>>,
    /// `memscope_meta` rows.
    pub meta: BTreeMap<String, String>,
    /// Alembic's revision (Langflow's migrations).
    pub alembic_revision: Option<String>,
}

/// Tables whose columns [`Catalog::columns`] records.
pub const PROFILED_TABLES: &[&str] = &["apps", "conversations", "messages", "memory_base", "job"];

impl Catalog {
    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains(table)
    }

    pub fn has_column(&self, table: &str, column: &str) -> bool {
        self.columns
            .get(table)
            .is_some_and(|columns| columns.contains(column))
    }

    pub fn created_by_memscope(&self) -> bool {
        self.meta.get("created_by").map(String::as_str) == Some("memscope")
    }
}

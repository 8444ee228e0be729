//! The source's axis of a query's dialect: how memscope's query text reaches a source's tables.
//! The backend's axis (casts on SQLite) is the store's (`store/profile.rs`).

use super::dify::schema::DifySchema;
use super::langflow::dialect;
use crate::store::catalog::Backend;

/// How memscope's query text (written against its own schema, in PostgreSQL syntax) becomes the
/// text a source's tables need, before the backend's dialect finishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rewrite {
    /// memscope's or Dify's tables: stand-ins for the columns of Dify's later eras the database
    /// lacks.
    Dify(DifySchema),
    /// Langflow's tables: stand-ins for memscope's own memory-base columns, and on SQLite its
    /// compact uuids.
    Langflow,
}

impl Rewrite {
    /// The text as written, for a database with every column memscope's queries read.
    pub const VERBATIM: Rewrite = Rewrite::Dify(DifySchema::FULL);

    /// The query's text for the source's tables on `backend` (casts may remain: the backend's
    /// dialect deals with them).
    pub fn apply(self, postgres_sql: &str, backend: Backend) -> String {
        match self {
            Rewrite::Dify(schema) => schema.with_stand_ins(postgres_sql),
            Rewrite::Langflow => dialect::rewrite(postgres_sql, backend),
        }
    }

    /// Whether ids are stored as 32 hex digits on `backend`.
    pub fn compact_ids(self, backend: Backend) -> bool {
        match self {
            Rewrite::Dify(_) => false,
            Rewrite::Langflow => dialect::compact_ids(backend),
        }
    }
}

//! The source's axis of a query's dialect: how memscope's query text reaches a source's tables.
//! The backend's axis (casts on SQLite) is the store's (`store/profile.rs`).

use crate::store::catalog::Backend;

/// How memscope's query text (written against its own schema, in PostgreSQL syntax) becomes the
/// text a source's tables need, before the backend's dialect finishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rewrite {
    /// Tables with memscope's own names: stand-ins for the columns and tables of later schema
    /// eras the database lacks (none: the text as written).
    StandIns(StandIns),
    /// A source's own text for its tables (Langflow's: stand-ins for memscope's own memory-base
    /// columns, and on SQLite its compact uuids).
    Own(OwnText),
}

/// How a source whose tables need more than stand-ins turns memscope's query text into theirs,
/// on each backend. Compared and hashed by the source's key alone, as the dialect is a key of
/// the store's query-text cache and a source has one such text.
#[derive(Debug, Clone, Copy)]
pub struct OwnText {
    /// The source's key: "langflow".
    pub source: &'static str,
    /// The query's text for the source's tables on a backend (casts may remain).
    pub rewrite: fn(&str, Backend) -> String,
    /// Whether ids are stored as 32 hex digits on a backend.
    pub compact_ids: fn(Backend) -> bool,
}

impl PartialEq for OwnText {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for OwnText {}

impl std::hash::Hash for OwnText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.source.hash(state);
    }
}

/// A column or table memscope's queries read, and the text read in its place where a database
/// lacks it (PostgreSQL text, written against the aliases the queries use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StandIn {
    pub column: &'static str,
    pub stand_in: &'static str,
}

/// The stand-ins a database needs: those of a source's `known` list it lacks (bit `i` of
/// `lacking` for `known[i]`), applied in the list's order. Copy and hashable, as the dialect is
/// a key of the store's query-text cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StandIns {
    known: &'static [StandIn],
    lacking: u64,
}

impl StandIns {
    /// None: the text as written.
    pub const NONE: StandIns = StandIns {
        known: &[],
        lacking: 0,
    };

    /// The stand-ins of `known` for which `lacks` says the database lacks the column, in
    /// `known`'s order (`lacks` gives one answer per entry). A database that lacks none needs
    /// [`StandIns::NONE`], so its text is used as written.
    pub fn of_lacking(known: &'static [StandIn], lacks: impl IntoIterator<Item = bool>) -> Self {
        assert!(known.len() <= 64, "at most 64 stand-ins fit the mask");
        let lacking = lacks
            .into_iter()
            .take(known.len())
            .enumerate()
            .filter(|&(_, lacks)| lacks)
            .fold(0u64, |mask, (i, _)| mask | 1 << i);
        if lacking == 0 {
            StandIns::NONE
        } else {
            StandIns { known, lacking }
        }
    }

    /// The text with each lacking column replaced by its stand-in.
    fn apply(self, sql: &str) -> String {
        self.known
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.lacking & (1 << i) != 0)
            .fold(sql.to_owned(), |sql, (_, entry)| {
                sql.replace(entry.column, entry.stand_in)
            })
    }
}

impl Rewrite {
    /// The text as written, for a database with every column memscope's queries read.
    pub const VERBATIM: Rewrite = Rewrite::StandIns(StandIns::NONE);

    /// The query's text for the source's tables on `backend` (casts may remain: the backend's
    /// dialect deals with them).
    pub fn apply(self, postgres_sql: &str, backend: Backend) -> String {
        match self {
            Rewrite::StandIns(stand_ins) => stand_ins.apply(postgres_sql),
            Rewrite::Own(text) => (text.rewrite)(postgres_sql, backend),
        }
    }

    /// Whether ids are stored as 32 hex digits on `backend`.
    pub fn compact_ids(self, backend: Backend) -> bool {
        match self {
            Rewrite::StandIns(_) => false,
            Rewrite::Own(text) => (text.compact_ids)(backend),
        }
    }
}

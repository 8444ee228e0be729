//! What kind of memory database is open, decided once when it is opened: the source that made
//! it (found by the registry of `sources/`), the parts of memscope's schema it has, and how
//! memscope's queries reach it.
//!
//! Every query is written once against memscope's own schema, whose tables carry Dify's and
//! Langflow's names. Two axes turn it into the text a database needs: the source's
//! [`Rewrite`] (stand-ins for the columns its tables lack, its id formats) and the backend's
//! dialect (SQLite takes no casts).

use std::collections::BTreeSet;

use super::catalog::Backend;
pub use super::catalog::{Catalog, CatalogProbe, PROFILED_TABLES};
pub use crate::sources::adapter::{
    BaseChange, Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, MemorySource, Part,
};
pub use crate::sources::rewrite::Rewrite;
pub use crate::sources::schema_eras::SchemaEras;

/// The sources a database may have been made by, in the order they are tried on its catalog.
/// The registry of sources above the store hands them to it when a database is opened, so
/// that the store never names a source.
pub type Sources = &'static [&'static dyn MemorySource];

/// What every source reads of its own tables when a database is opened, before it is known
/// which source made it (`MemorySource::probes`).
pub fn catalog_probes(sources: Sources) -> Vec<CatalogProbe> {
    sources
        .iter()
        .flat_map(|source| source.probes())
        .copied()
        .collect()
}

/// The kind of database, its parts, and how queries reach its tables.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The source that made the database: what it has and allows.
    pub source: &'static dyn MemorySource,
    parts: BTreeSet<Part>,
    /// The revision of the database's schema, when its source versions it.
    pub revision: Option<String>,
    pub dialect: Dialect,
}

impl Profile {
    /// The profile of a database, or `None` when it is not a memory database at all: the first
    /// of `sources` that recognises it made it.
    pub fn detect(catalog: &Catalog, backend: Backend, sources: Sources) -> Option<Profile> {
        let mut parts: BTreeSet<Part> = Part::ALL
            .into_iter()
            .filter(|part| part.tables().iter().all(|t| catalog.has_table(t)))
            .collect();
        // memscope reads Dify's tables on MySQL, and the sources that read their own there.
        if backend == Backend::Mysql {
            parts.retain(|part| matches!(part, Part::Conversations | Part::NodeContexts));
        }
        let source = sources
            .iter()
            .copied()
            .find(|source| source.recognises(catalog, &parts))?;
        if backend == Backend::Mysql
            && !parts.contains(&Part::Conversations)
            && !source.read_on_mysql()
        {
            return None;
        }
        Some(Profile {
            source,
            revision: source.revision(catalog),
            dialect: Dialect::new(backend, source.rewrite(catalog, &parts)),
            parts,
        })
    }

    /// What the database's source allows and who runs its jobs.
    pub fn capabilities(&self) -> Capabilities {
        self.source.capabilities()
    }

    /// Why memscope does not make `change` to this database's memory bases, with the way
    /// out; `None` where it does.
    pub fn refuses_base_change(&self, change: BaseChange) -> Option<String> {
        if self.capabilities().memscope_writes {
            return None;
        }
        let app = self.source.name();
        let way = match self.source.base_endpoint(change) {
            Some(endpoint) => format!("{app}'s own API does: {endpoint} (or its UI)"),
            None => format!("{app} itself does"),
        };
        Some(format!(
            "memscope does not {} memory bases in {}; {way}",
            change.verb(),
            self.describe()
        ))
    }

    /// What the database (with this catalog) has of its source's schema eras, for `info`.
    pub fn schema_eras(&self, catalog: &Catalog) -> Option<SchemaEras> {
        self.source.schema_eras(catalog, &self.parts)
    }

    pub fn has(&self, part: Part) -> bool {
        self.parts.contains(&part)
    }

    pub fn parts(&self) -> impl Iterator<Item = Part> + '_ {
        self.parts.iter().copied()
    }

    /// "a Langflow database (schema mb01b2c3d4e5)", for messages.
    pub fn describe(&self) -> String {
        let name = self.source.name();
        let article = crate::format::article(name);
        match &self.revision {
            Some(revision) => format!("{article} {name} database (schema {revision})"),
            None => format!("{article} {name} database"),
        }
    }

    /// What the database holds, in words: "memory bases" or "conversations and workflow node
    /// executions".
    pub fn holdings(&self) -> String {
        let labels: Vec<&str> = self.parts().map(Part::label).collect();
        match labels.as_slice() {
            [] => "none of the parts memscope shows".to_owned(),
            [one] => (*one).to_owned(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// Why a part is missing, and what the database has instead: "a Langflow database (schema
    /// …), which has no conversations; it holds memory bases".
    pub fn lacks(&self, part: Part) -> String {
        format!(
            "{}, which has no {}; it holds {}",
            self.describe(),
            part.label(),
            self.holdings()
        )
    }
}

/// How a query written against memscope's schema (in PostgreSQL syntax) reaches a database: the
/// source's rewrite, then the backend's own form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dialect {
    pub backend: Backend,
    pub rewrite: Rewrite,
}

impl Dialect {
    pub fn new(backend: Backend, rewrite: Rewrite) -> Dialect {
        Dialect { backend, rewrite }
    }

    /// The dialect of a database whose tables have every column memscope's queries read.
    pub fn verbatim(backend: Backend) -> Dialect {
        Dialect::new(backend, Rewrite::VERBATIM)
    }

    /// The query's text for this dialect.
    pub fn text(self, postgres_sql: &str) -> String {
        let rewritten = self.rewrite.apply(postgres_sql, self.backend);
        match self.backend {
            Backend::Postgres => rewritten,
            // SQLite stores uuids and enums as TEXT: no casts.
            Backend::Sqlite => super::casts::strip_casts(&rewritten),
            Backend::Mysql => super::mysql_text::mysql_text(&rewritten),
        }
    }

    /// Whether the query text is used as written.
    pub fn is_verbatim(self) -> bool {
        self == Dialect::verbatim(Backend::Postgres)
    }

    /// Whether ids are stored as 32 hex digits.
    pub fn compact_ids(self) -> bool {
        self.rewrite.compact_ids(self.backend)
    }
}

/// An id as memscope shows and binds it: lowercase, dashed when it is a uuid written as 32 hex
/// digits (Langflow's SQLite form) — so ids are accepted with or without dashes.
pub fn dashed_id(id: &str) -> String {
    let trimmed = id.trim();
    if trimmed.len() == 32 && trimmed.chars().all(|c| c.is_ascii_hexdigit()) {
        let hex = trimmed.to_ascii_lowercase();
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    } else if trimmed.len() == 36 && uuid::Uuid::parse_str(trimmed).is_ok() {
        trimmed.to_ascii_lowercase()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_accepted_with_or_without_dashes() {
        let dashed = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(dashed_id("0F8FAD5BD9CB469FA16570867728950E"), dashed);
        assert_eq!(dashed_id(dashed), dashed);
        assert_eq!(dashed_id(" 0F8FAD5B-D9CB-469F-A165-70867728950E "), dashed);
        assert_eq!(dashed_id("support-bot"), "support-bot");
        assert_eq!(dashed_id("9b691c25"), "9b691c25");
    }
}

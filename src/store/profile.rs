//! What kind of memory database is open — memscope's own, Dify's or Langflow's — decided once
//! when it is opened from the tables and columns it has, and how memscope's queries reach it.
//!
//! Every query is written once against memscope's own schema, whose tables carry Dify's and
//! Langflow's names. A profile knows which parts of that schema a database has, and its
//! [`Dialect`] turns a query's text into the text the database's own tables need (Langflow keeps
//! uuids on SQLite as 32 hex digits, and has no column for memscope's threshold unit).

use std::collections::BTreeSet;
use std::fmt;

use super::catalog::Backend;
pub use super::catalog::{Catalog, PROFILED_TABLES};
pub use super::dify_schema::DifySchema;

use serde::Serialize;

/// Who made the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Memscope,
    Dify,
    Langflow,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Memscope => "memscope",
            Source::Dify => "Dify",
            Source::Langflow => "Langflow",
        }
    }
}

/// A part of what memscope shows, which a database may or may not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// Dify's conversations and their messages.
    Conversations,
    /// Dify's workflow runs and node executions (per-node contexts).
    NodeContexts,
    /// Stored message lists trimmed by policy (memscope's own tables).
    ChatMemories,
    /// Langflow's memory bases, their sessions and ingestion jobs.
    MemoryBases,
}

impl Part {
    pub const ALL: [Part; 4] = [
        Part::Conversations,
        Part::NodeContexts,
        Part::ChatMemories,
        Part::MemoryBases,
    ];

    /// What the part is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Part::Conversations => "conversations",
            Part::NodeContexts => "workflow node executions",
            Part::ChatMemories => "chat memories",
            Part::MemoryBases => "memory bases",
        }
    }

    /// The tables that make up the part.
    fn tables(self) -> &'static [&'static str] {
        match self {
            Part::Conversations => &["conversations", "messages"],
            Part::NodeContexts => &["workflow_runs", "workflow_node_executions"],
            Part::ChatMemories => &["chat_memories", "chat_memory_messages"],
            Part::MemoryBases => &["memory_base", "memory_base_session", "message", "job"],
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The kind of database, its parts, and how queries reach its tables.
#[derive(Debug, Clone)]
pub struct Profile {
    pub source: Source,
    parts: BTreeSet<Part>,
    /// What the conversation tables have of Dify's later columns and tables.
    pub dify: DifySchema,
    /// The Alembic revision of a Langflow database.
    pub langflow_revision: Option<String>,
    pub dialect: Dialect,
}

impl Profile {
    /// The profile of a database, or `None` when it is not a memory database at all.
    pub fn detect(catalog: &Catalog, backend: Backend) -> Option<Profile> {
        let mut parts: BTreeSet<Part> = Part::ALL
            .into_iter()
            .filter(|part| part.tables().iter().all(|t| catalog.has_table(t)))
            .collect();
        // memscope reads Dify's tables on MySQL, and nothing else there.
        if backend == Backend::Mysql {
            parts.retain(|part| matches!(part, Part::Conversations | Part::NodeContexts));
            if !parts.contains(&Part::Conversations) {
                return None;
            }
        }
        // Dify's tables first: a database with both families (a copy of memscope's own, say)
        // keeps memscope's dashed ids, which only Langflow's SQLite does not.
        let source = if catalog.created_by_memscope() {
            Source::Memscope
        } else if parts.contains(&Part::Conversations) {
            Source::Dify
        } else if catalog.has_table("message") {
            Source::Langflow
        } else {
            return None;
        };
        let dify = if parts.contains(&Part::Conversations) {
            DifySchema::of(catalog)
        } else {
            DifySchema::FULL
        };
        let dialect = match (source, backend) {
            (Source::Langflow, Backend::Sqlite) => Dialect::LangflowSqlite,
            (Source::Langflow, Backend::Postgres) => Dialect::LangflowPostgres,
            (_, Backend::Sqlite) => Dialect::Sqlite(dify),
            (_, Backend::Postgres) => Dialect::Postgres(dify),
            (_, Backend::Mysql) => Dialect::Mysql(dify),
        };
        Some(Profile {
            source,
            parts,
            dify,
            langflow_revision: (source == Source::Langflow)
                .then(|| catalog.alembic_revision.clone())
                .flatten(),
            dialect,
        })
    }

    pub fn has(&self, part: Part) -> bool {
        self.parts.contains(&part)
    }

    pub fn parts(&self) -> impl Iterator<Item = Part> + '_ {
        self.parts.iter().copied()
    }

    /// "a Langflow database (schema mb01b2c3d4e5)", for messages.
    pub fn describe(&self) -> String {
        match &self.langflow_revision {
            Some(revision) => format!("a {} database (schema {revision})", self.source.name()),
            None => format!("a {} database", self.source.name()),
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

/// How a query written against memscope's schema (in PostgreSQL syntax) reaches a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// memscope's or Dify's tables on SQLite: casts stripped, stand-ins for what the schema
    /// lacks.
    Sqlite(DifySchema),
    /// memscope's or Dify's tables on PostgreSQL: the text as written, with stand-ins for what
    /// the schema lacks.
    Postgres(DifySchema),
    /// Langflow's tables on SQLite: uuids are 32 hex digits (no dashes), read back in the dashed
    /// form Langflow prints; memscope's own memory-base columns do not exist.
    LangflowSqlite,
    /// Langflow's tables on PostgreSQL: native uuids and enums; memscope's own memory-base
    /// columns do not exist.
    LangflowPostgres,
    /// Dify's tables on MySQL or MariaDB: the text rewritten by `mysql_text`, with stand-ins
    /// for what the schema lacks.
    Mysql(DifySchema),
}

/// memscope's own memory-base columns and what stands for them in Langflow's tables: Langflow's
/// threshold always counts flow runs, and the provider is in the base's knowledge-base row
/// (`model_selection`, matched by owner and name).
type StandIn = (&'static str, &'static str, &'static str);

const LANGFLOW_COLUMN_STAND_INS: &[StandIn] = &[
    ("mb.threshold_unit", "'runs'", "'runs'"),
    (
        "mb.embedding_provider",
        "coalesce((SELECT json_extract(kb.model_selection, '$.provider') FROM knowledge_base kb \
         WHERE kb.user_id = mb.user_id AND kb.name = mb.kb_name), '')",
        "coalesce((SELECT kb.model_selection->>'provider' FROM knowledge_base kb \
         WHERE kb.user_id = mb.user_id AND kb.name = mb.kb_name), '')",
    ),
];

impl Dialect {
    /// The query's text for this dialect.
    pub fn text(self, postgres_sql: &str) -> String {
        match self {
            Dialect::Postgres(dify) => dify.with_stand_ins(postgres_sql),
            Dialect::Sqlite(dify) => super::casts::strip_casts(&dify.with_stand_ins(postgres_sql)),
            Dialect::LangflowPostgres => with_stand_ins(postgres_sql, |(_, _, postgres)| postgres),
            Dialect::LangflowSqlite => {
                compact_uuids(&with_stand_ins(postgres_sql, |(_, sqlite, _)| sqlite))
            }
            Dialect::Mysql(dify) => {
                super::mysql_text::mysql_text(&dify.with_stand_ins(postgres_sql))
            }
        }
    }

    /// Whether the query text is used as written.
    pub fn is_verbatim(self) -> bool {
        self == Dialect::Postgres(DifySchema::FULL)
    }

    /// Whether ids are stored as 32 hex digits.
    pub fn compact_ids(self) -> bool {
        self == Dialect::LangflowSqlite
    }
}

fn with_stand_ins(sql: &str, pick: fn(&StandIn) -> &'static str) -> String {
    LANGFLOW_COLUMN_STAND_INS
        .iter()
        .fold(sql.to_owned(), |sql, entry| {
            sql.replace(entry.0, pick(entry))
        })
}

/// SQLite text for Langflow's tables: a `$n::uuid` parameter is compared in Langflow's stored
/// form (lowercase, no dashes), an id column read `::text` comes back dashed, other casts go.
/// Columns named `id` or `…_id` are uuids in Langflow's schema (its `session_id` is text, and is
/// never cast).
fn compact_uuids(postgres_sql: &str) -> String {
    super::casts::rewrite_casts(postgres_sql, rewrite_cast)
}

fn rewrite_cast(operand: &str, cast: &str) -> String {
    let column = operand.rsplit('.').next().unwrap_or(operand);
    let is_id_column = column == "id" || column.ends_with("_id");
    match cast {
        "uuid" if operand.starts_with('$') => format!("replace(lower({operand}), '-', '')"),
        "text" if is_id_column && !operand.starts_with('$') => dashed(operand),
        _ => operand.to_owned(),
    }
}

/// A 32-hex-digit uuid column as Langflow prints it (8-4-4-4-12); any other value unchanged.
fn dashed(column: &str) -> String {
    format!(
        "(CASE WHEN length({column}) = 32 THEN lower(substr({column}, 1, 8) || '-' || \
         substr({column}, 9, 4) || '-' || substr({column}, 13, 4) || '-' || \
         substr({column}, 17, 4) || '-' || substr({column}, 21, 12)) ELSE {column} END)"
    )
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
    use crate::store::catalog::Backend;

    fn catalog(tables: &[&str], meta: &[(&str, &str)]) -> Catalog {
        Catalog {
            tables: tables.iter().map(|t| t.to_string()).collect(),
            meta: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Catalog::default()
        }
    }

    const LANGFLOW: &[&str] = &[
        "alembic_version",
        "user",
        "flow",
        "message",
        "job",
        "memory_base",
        "memory_base_session",
        "memory_base_workflow_run",
        "message_ingestion_record",
        "knowledge_base",
    ];
    const DIFY: &[&str] = &[
        "apps",
        "conversations",
        "messages",
        "workflow_runs",
        "workflow_node_executions",
    ];

    #[test]
    fn each_source_is_recognised_with_its_parts() {
        let langflow = Profile::detect(&catalog(LANGFLOW, &[]), Backend::Sqlite).unwrap();
        assert_eq!(langflow.source, Source::Langflow);
        assert_eq!(langflow.parts().collect::<Vec<_>>(), [Part::MemoryBases]);
        assert_eq!(langflow.dialect, Dialect::LangflowSqlite);

        let dify = Profile::detect(&catalog(DIFY, &[]), Backend::Postgres).unwrap();
        assert_eq!(dify.source, Source::Dify);
        assert_eq!(
            dify.parts().collect::<Vec<_>>(),
            [Part::Conversations, Part::NodeContexts]
        );
        assert_eq!(dify.dialect, Dialect::Postgres(dify.dify));

        let all: Vec<&str> = DIFY
            .iter()
            .chain(LANGFLOW)
            .chain(&["chat_memories", "chat_memory_messages", "memscope_meta"])
            .copied()
            .collect();
        let own = Profile::detect(
            &catalog(&all, &[("created_by", "memscope")]),
            Backend::Sqlite,
        )
        .unwrap();
        assert_eq!(own.source, Source::Memscope);
        assert_eq!(own.parts().count(), 4);
        assert_eq!(own.dialect, Dialect::Sqlite(own.dify));
    }

    #[test]
    fn a_database_with_both_families_is_read_as_difys() {
        let both: Vec<&str> = DIFY.iter().chain(LANGFLOW).copied().collect();
        let profile = Profile::detect(&catalog(&both, &[]), Backend::Sqlite).unwrap();
        assert_eq!(profile.source, Source::Dify);
        assert_eq!(profile.dialect, Dialect::Sqlite(profile.dify));
        assert!(profile.has(Part::MemoryBases));
    }

    #[test]
    fn other_databases_are_not_memory_databases() {
        assert!(Profile::detect(&catalog(&["users", "orders"], &[]), Backend::Sqlite).is_none());
        assert!(Profile::detect(&catalog(&["messages"], &[]), Backend::Sqlite).is_none());
        assert!(Profile::detect(&catalog(&["memscope_meta"], &[]), Backend::Sqlite).is_none());
    }

    #[test]
    fn a_missing_part_is_explained_in_one_line() {
        let mut langflow = catalog(LANGFLOW, &[]);
        langflow.alembic_revision = Some("mb01b2c3d4e5".into());
        let profile = Profile::detect(&langflow, Backend::Sqlite).unwrap();
        assert_eq!(
            profile.lacks(Part::Conversations),
            "a Langflow database (schema mb01b2c3d4e5), which has no conversations; \
             it holds memory bases"
        );
        let dify = Profile::detect(&catalog(DIFY, &[]), Backend::Sqlite).unwrap();
        assert_eq!(
            dify.lacks(Part::MemoryBases),
            "a Dify database, which has no memory bases; it holds conversations and \
             workflow node executions"
        );
    }

    #[test]
    fn langflow_sqlite_compares_uuid_parameters_compactly_and_reads_them_dashed() {
        let text = Dialect::LangflowSqlite
            .text("SELECT mb.id::text AS id, m.content_blocks::text AS b FROM memory_base mb WHERE mb.flow_id = $1::uuid");
        assert_eq!(
            text,
            format!(
                "SELECT {} AS id, m.content_blocks AS b FROM memory_base mb WHERE mb.flow_id = \
                 replace(lower($1), '-', '')",
                dashed("mb.id")
            )
        );
    }

    #[test]
    fn langflow_has_stand_ins_for_memscopes_own_columns() {
        for dialect in [Dialect::LangflowSqlite, Dialect::LangflowPostgres] {
            let text = dialect.text("SELECT mb.threshold_unit AS u FROM memory_base mb");
            assert_eq!(text, "SELECT 'runs' AS u FROM memory_base mb");
            let text = dialect.text("SELECT mb.embedding_provider FROM memory_base mb");
            assert!(text.contains("model_selection"), "{text}");
        }
        assert_eq!(
            Dialect::Postgres(DifySchema::FULL).text("SELECT mb.threshold_unit, x::text"),
            "SELECT mb.threshold_unit, x::text"
        );
        assert_eq!(
            Dialect::Sqlite(DifySchema::FULL).text("SELECT mb.threshold_unit, x::text"),
            "SELECT mb.threshold_unit, x"
        );
    }

    #[test]
    fn casts_inside_literals_and_on_expressions_are_handled() {
        assert_eq!(
            Dialect::LangflowSqlite
                .text("SELECT 'a::uuid', coalesce(sum(x), 0)::bigint, n::bigint"),
            "SELECT 'a::uuid', coalesce(sum(x), 0), n"
        );
    }

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

//! What opening a database finds before its profile is known: the backend a URL names and the
//! tables, columns and markers the database holds.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{MySqlConnection, PgConnection, SqliteConnection};

use super::error::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    Sqlite,
    Postgres,
    /// MySQL, MariaDB and the servers that speak their protocol (read-only).
    Mysql,
}

impl Backend {
    /// Which backend a URL names, if any.
    pub fn of_url(url: &str) -> Option<Backend> {
        if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Backend::Postgres)
        } else if super::mysql_url::is_mysql_url(url) {
            Some(Backend::Mysql)
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
    /// What the sources' probes read, by the probe's name (a probe whose table is missing, or
    /// that read nothing, is not here).
    pub probed: BTreeMap<&'static str, String>,
}

/// A value a source reads from a table of its own when a database is opened, before it is known
/// which source made it (the revision of its migrations): each source declares its probes
/// (`MemorySource::probes`), and the catalog runs every one whose table the database has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogProbe {
    /// The name its value is kept under in [`Catalog::probed`].
    pub name: &'static str,
    /// The table it reads.
    pub table: &'static str,
    /// One text for every backend: the first column of its first row, as text, is the value.
    pub sql: &'static str,
}

/// Tables whose columns [`Catalog::columns`] records.
pub const PROFILED_TABLES: &[&str] = &[
    "apps",
    "conversations",
    "messages",
    "memory_base",
    "job",
    "checkpoints",
    "agent_sessions",
    "agent_messages",
    "sessions",
    "events",
    "app_states",
    "user_states",
];

/// A table a source counts for the summary, with its count query (PostgreSQL syntax, as every
/// query is): a source declares them (`MemorySource::counted_tables`), the store counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountedTable {
    pub table: &'static str,
    pub count_sql: &'static str,
}

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

    /// What `probe` read, if it ran and read anything.
    pub fn probed(&self, probe: &CatalogProbe) -> Option<&str> {
        self.probed.get(probe.name).map(String::as_str)
    }
}

/// The one connection a catalog is read over: a probe before the pool's mode is chosen, or one
/// of the pool's.
pub enum CatalogConnection<'a> {
    Sqlite(&'a mut SqliteConnection),
    Postgres(&'a mut PgConnection),
    Mysql(&'a mut MySqlConnection),
}

/// Runs the same queries over either connection: the catalog queries differ by backend, the
/// marker queries are one text.
macro_rules! read_catalog {
    ($conn:expr, $probes:expr, $tables_sql:expr, $columns_sql:expr, $failed:expr) => {{
        let conn = $conn;
        let tables: Vec<String> = sqlx::query_scalar($tables_sql)
            .fetch_all(&mut *conn)
            .await
            .map_err($failed)?;
        let columns: Vec<(String, String)> = sqlx::query_as($columns_sql)
            .fetch_all(&mut *conn)
            .await
            .map_err($failed)?;
        let mut catalog = Catalog {
            tables: tables.into_iter().collect(),
            ..Catalog::default()
        };
        for (table, column) in columns {
            catalog.columns.entry(table).or_default().insert(column);
        }
        if catalog.has_table("memscope_meta") {
            let meta: Vec<(String, String)> =
                sqlx::query_as("SELECT key, value FROM memscope_meta")
                    .fetch_all(&mut *conn)
                    .await
                    .map_err($failed)?;
            catalog.meta = meta.into_iter().collect();
        }
        for probe in $probes {
            if !catalog.has_table(probe.table) {
                continue;
            }
            let value: Option<Option<String>> = sqlx::query_scalar(probe.sql)
                .fetch_optional(&mut *conn)
                .await
                .map_err($failed)?;
            if let Some(Some(value)) = value {
                catalog.probed.insert(probe.name, value);
            }
        }
        Ok(catalog)
    }};
}

impl CatalogConnection<'_> {
    /// The tables of the database (PostgreSQL: of the current schema), the columns of the
    /// tables whose shape differs between sources, memscope's meta rows and what `probes` read.
    pub async fn read(self, url: &str, probes: &[CatalogProbe]) -> Result<Catalog, StoreError> {
        let failed = |source| StoreError::Query {
            url: url.to_owned(),
            source,
        };
        let profiled = PROFILED_TABLES
            .iter()
            .map(|table| format!("'{table}'"))
            .collect::<Vec<_>>()
            .join(", ");
        match self {
            CatalogConnection::Sqlite(conn) => read_catalog!(
                conn,
                probes,
                "SELECT name FROM sqlite_master WHERE type = 'table'",
                sqlx::AssertSqlSafe(format!(
                    "SELECT t.name, c.name FROM sqlite_master t, pragma_table_info(t.name) c \
                     WHERE t.type = 'table' AND t.name IN ({profiled})"
                )),
                failed
            ),
            // The system catalogs rather than information_schema, whose views cost 3-10 ms a
            // query: most of the time a command took to open a PostgreSQL database.
            CatalogConnection::Postgres(conn) => read_catalog!(
                conn,
                probes,
                "SELECT relname::text FROM pg_class \
                 WHERE relnamespace = current_schema()::regnamespace \
                 AND relkind IN ('r', 'p', 'v', 'm', 'f')",
                sqlx::AssertSqlSafe(format!(
                    "SELECT c.relname::text, a.attname::text FROM pg_attribute a \
                     JOIN pg_class c ON c.oid = a.attrelid \
                     WHERE c.relnamespace = current_schema()::regnamespace \
                     AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname IN ({profiled}) \
                     AND a.attnum > 0 AND NOT a.attisdropped"
                )),
                failed
            ),
            // information_schema names are cast: MySQL 8 returns them as binary strings.
            CatalogConnection::Mysql(conn) => read_catalog!(
                conn,
                probes,
                "SELECT CAST(table_name AS CHAR) FROM information_schema.tables \
                 WHERE table_schema = DATABASE()",
                sqlx::AssertSqlSafe(format!(
                    "SELECT CAST(table_name AS CHAR), CAST(column_name AS CHAR) \
                     FROM information_schema.columns \
                     WHERE table_schema = DATABASE() AND table_name IN ({profiled})"
                )),
                failed
            ),
        }
    }
}

//! An open memory database, the [`Store`]: opening one (read-only unless memscope created it
//! or a write is asked for), creating and migrating memscope's schema, what it is and holds,
//! and the checks and error wrapping every query method shares.

use sqlx::postgres::PgPool;

use super::catalog::Backend;
use super::error::{StoreError, redact_url};
use super::pool::{DbPool, Mode, connect, migrate, probe};
use super::profile::{BaseChange, Catalog, Part, Profile, Sources, catalog_probes};
use super::sql;

/// The schema version this binary creates and understands (`memscope_meta.schema_version`).
pub const SCHEMA_VERSION: i64 = 5;

/// How [`Store::open_among`] may use the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Read-write if memscope created the database, read-only otherwise (a live Dify or Langflow
    /// database is never changed by accident).
    #[default]
    Auto,
    /// Read-write, whoever created the database.
    Write,
    ReadOnly,
}

/// An open memory database. Cloning is cheap and shares the connection pool.
///
/// The rest of memscope opens one with `Store::open` and `Store::init`, which the registry of
/// sources (`sources/mod.rs`) defines over [`Store::open_among`] and [`Store::init_among`]:
/// the store recognises a database among the sources it is handed and never names one.
#[derive(Clone)]
pub struct Store {
    pub(crate) pool: DbPool,
    /// The URL with its password redacted: what every error names.
    pub(crate) url: String,
    pub(crate) read_only: bool,
    pub(crate) catalog: Catalog,
    pub(crate) profile: Profile,
    /// The sources the database was recognised among, for reading its catalog again.
    sources: Sources,
}

impl Catalog {
    fn schema_version(&self, url: &str) -> Result<Option<i64>, StoreError> {
        self.meta
            .get("schema_version")
            .map(|value| {
                value.parse().map_err(|_| StoreError::BadSchemaVersion {
                    url: url.to_owned(),
                    value: value.clone(),
                })
            })
            .transpose()
    }

    /// Tables other than sqlx's own bookkeeping.
    fn has_foreign_tables(&self) -> bool {
        self.tables.iter().any(|t| !t.starts_with("_sqlx"))
    }
}

impl Store {
    /// Opens an existing memory database. Fails when the URL is bad or the server unreachable,
    /// when the database holds no memory tables, or when memscope's schema in it is newer than
    /// this binary. A database memscope did not create opens read-only under [`Access::Auto`].
    pub async fn open_among(
        url: &str,
        access: Access,
        sources: Sources,
    ) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let catalog = probe(url, &redacted, &catalog_probes(sources)).await?;
        let version = catalog.schema_version(&redacted)?;
        if let Some(found) = version.filter(|&v| v > SCHEMA_VERSION) {
            return Err(StoreError::SchemaTooNew {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        // memscope only reads a MySQL server.
        let read_only = Backend::of_url(url) == Some(Backend::Mysql)
            || match access {
                Access::Auto => !catalog.created_by_memscope(),
                Access::Write => false,
                Access::ReadOnly => true,
            };
        let outdated = version.filter(|&v| v < SCHEMA_VERSION);
        if read_only && let Some(found) = outdated {
            return Err(StoreError::SchemaOutdated {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let mode = if read_only {
            Mode::ReadOnly
        } else if catalog.created_by_memscope() {
            Mode::ReadWrite
        } else {
            Mode::ReadWriteForeign
        };
        let pool = connect(url, &redacted, mode).await?;
        let mut store = Store::assemble(pool, redacted, read_only, catalog, sources)?;
        if !read_only && outdated.is_some() {
            store.migrate().await?;
        }
        Ok(store)
    }

    /// A store over `pool`, speaking the dialect of the database the catalog describes.
    fn assemble(
        pool: DbPool,
        url: String,
        read_only: bool,
        catalog: Catalog,
        sources: Sources,
    ) -> Result<Store, StoreError> {
        let Some(profile) = Profile::detect(&catalog, pool.backend(), sources) else {
            return Err(StoreError::NotAMemoryDatabase { url });
        };
        if let Some(reason) = profile.source.unreadable(&catalog) {
            return Err(StoreError::UnreadableLayout {
                url,
                kind: profile.describe(),
                reason: reason.to_owned(),
            });
        }
        Ok(Store {
            pool: pool.with_dialect(profile.dialect),
            url,
            read_only,
            catalog,
            profile,
            sources,
        })
    }

    /// Creates memscope's schema (a SQLite file is created if missing; a PostgreSQL database
    /// must exist) or brings it up to date, and opens the database read-write. Idempotent.
    /// Refuses a database that holds tables memscope did not create.
    pub async fn init_among(url: &str, sources: Sources) -> Result<Store, StoreError> {
        let redacted = redact_url(url);
        let probes = catalog_probes(sources);
        let pool = connect(url, &redacted, Mode::Create).await?;
        let catalog = pool.catalog(&redacted, &probes).await?;
        if !catalog.created_by_memscope() && catalog.has_foreign_tables() {
            pool.close().await;
            return Err(StoreError::ForeignDatabase { url: redacted });
        }
        if let Some(found) = catalog
            .schema_version(&redacted)?
            .filter(|&v| v > SCHEMA_VERSION)
        {
            pool.close().await;
            return Err(StoreError::SchemaTooNew {
                url: redacted,
                found,
                supported: SCHEMA_VERSION,
            });
        }
        migrate(&pool, &redacted).await?;
        let catalog = pool.catalog(&redacted, &probes).await?;
        Store::assemble(pool, redacted, false, catalog, sources)
    }

    async fn migrate(&mut self) -> Result<(), StoreError> {
        migrate(&self.pool, &self.url).await?;
        self.catalog = self
            .pool
            .catalog(&self.url, &catalog_probes(self.sources))
            .await?;
        Ok(())
    }

    /// What kind of database this is and which parts it holds.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Fails with one line saying what this database is and what it lacks, unless it holds
    /// `part`.
    pub fn require(&self, part: Part) -> Result<(), StoreError> {
        if self.profile.has(part) {
            Ok(())
        } else {
            Err(StoreError::Lacks {
                url: self.url.clone(),
                explanation: self.profile.lacks(part),
            })
        }
    }

    /// The text of a PostgreSQL-syntax query in this database's dialect.
    pub(crate) fn sql(&self, postgres_sql: &'static str) -> &'static str {
        sql::dialect_text(self.profile.dialect, postgres_sql)
    }

    pub fn backend(&self) -> Backend {
        self.pool.backend()
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub fn created_by_memscope(&self) -> bool {
        self.catalog.created_by_memscope()
    }

    /// memscope's schema version in the database; `None` for a database memscope did not create.
    pub fn schema_version(&self) -> Option<i64> {
        self.catalog.schema_version(&self.url).ok().flatten()
    }

    /// The database's own identity (`memscope_meta.database_id`, written once by the schema
    /// version 3 migration); `None` for a database memscope did not create.
    pub fn database_id(&self) -> Option<&str> {
        self.catalog.meta.get("database_id").map(String::as_str)
    }

    /// The SQLite file the database is, when it is one.
    pub fn database_file(&self) -> Option<std::path::PathBuf> {
        match &self.pool {
            DbPool::Sqlite(..) => super::pool::sqlite_path(&self.url).map(Into::into),
            DbPool::Postgres(..) | DbPool::Mysql(..) => None,
        }
    }

    /// The database URL with its password redacted.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the database has this table (Dify-only and Langflow-only databases lack some).
    pub fn has_table(&self, table: &str) -> bool {
        self.catalog.has_table(table)
    }

    /// What the database was found to hold when it was opened.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The SQLite pool, for the reads a source makes in its own SQL.
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        match &self.pool {
            DbPool::Sqlite(pool, _) => Some(pool),
            DbPool::Postgres(..) | DbPool::Mysql(..) => None,
        }
    }

    /// The PostgreSQL pool, where memory-base KB vectors live on PostgreSQL (pgvector).
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match &self.pool {
            DbPool::Postgres(pool, _) => Some(pool),
            DbPool::Sqlite(..) | DbPool::Mysql(..) => None,
        }
    }

    /// Closes every connection and waits for them: a SQLite file read in WAL mode gets its
    /// `-wal` and `-shm` removed before this returns, not whenever a worker thread gets to it.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Refuses a write on a read-only database, and on a database an app made (Langflow's):
    /// these writers keep memscope's own schema's formats (its lease table, its own
    /// knowledge-base layout), which the app would not accept. Its databases get its source's
    /// writers (`sources/langflow/writes.rs`), in the app's formats, guarded by
    /// [`Store::ensure_writable_in_place`].
    pub(super) fn ensure_writable(&self) -> Result<(), StoreError> {
        self.ensure_writable_in_place()?;
        if !self.profile.capabilities().memscope_writes {
            return Err(StoreError::ForeignWrite {
                url: self.url.clone(),
                why: format!(
                    "memscope does not write its own tables in {}; it makes only the writes \
                     {} itself makes",
                    self.profile.describe(),
                    self.profile.source.name()
                ),
            });
        }
        Ok(())
    }

    /// Refuses creating or deleting a memory base where memscope does not (naming the app's
    /// own endpoint that does), then on a read-only database.
    pub fn ensure_base_change(&self, change: BaseChange) -> Result<(), StoreError> {
        if let Some(why) = self.profile.refuses_base_change(change) {
            return Err(StoreError::ForeignWrite {
                url: self.url.clone(),
                why,
            });
        }
        self.ensure_writable_in_place()
    }

    /// Refuses a write on a read-only database: for the writes made in the database's own
    /// formats (ids through the dialect, instants as the app keeps them), which Langflow's
    /// databases take too.
    pub(crate) fn ensure_writable_in_place(&self) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                url: self.url.clone(),
            });
        }
        Ok(())
    }

    /// Why a memory-base read or write has nothing to work on here: a MySQL database holds
    /// Dify's tables only (the profile never lists memory bases for one).
    pub(crate) fn no_memory_bases_on_mysql(&self) -> StoreError {
        self.lacks(Part::MemoryBases)
    }

    /// The error for a read of a part this database does not hold.
    pub(crate) fn lacks(&self, part: Part) -> StoreError {
        StoreError::Lacks {
            url: self.url.clone(),
            explanation: self.profile.lacks(part),
        }
    }

    /// Wraps a driver error with the database it happened on.
    pub(crate) fn query_failed(&self, source: sqlx::Error) -> StoreError {
        StoreError::Query {
            url: self.url.clone(),
            source,
        }
    }

    /// Runs `statements` (PostgreSQL syntax, in this database's dialect), each with `value` bound
    /// as `$1`, in one transaction; returns the rows the last one affected.
    pub(crate) async fn run_in_one_transaction(
        &self,
        statements: &[&'static str],
        value: &str,
    ) -> Result<u64, StoreError> {
        on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            let mut last = 0;
            for &statement in statements {
                last = sqlx::query(self.sql(statement))
                    .bind(value)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(last)
        }
        .await)
        .map_err(|e| self.query_failed(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_is_read_from_the_scheme() {
        assert_eq!(Backend::of_url("sqlite:///tmp/x.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of_url("sqlite:x.db"), Some(Backend::Sqlite));
        assert_eq!(
            Backend::of_url("postgres://u@h/db"),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Backend::of_url("postgresql://u@h/db"),
            Some(Backend::Postgres)
        );
        assert_eq!(Backend::of_url("mysql://u@h/db"), Some(Backend::Mysql));
        assert_eq!(Backend::of_url("mariadb://u@h/db"), Some(Backend::Mysql));
        assert_eq!(Backend::of_url("/tmp/x.db"), None);
    }

    fn catalog(meta: &[(&str, &str)]) -> Catalog {
        Catalog {
            meta: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Catalog::default()
        }
    }

    #[test]
    fn schema_version_is_parsed_or_reported() {
        let url = "sqlite:x.db";
        assert_eq!(catalog(&[]).schema_version(url).unwrap(), None);
        assert_eq!(
            catalog(&[("schema_version", "3")])
                .schema_version(url)
                .unwrap(),
            Some(3)
        );
        assert!(matches!(
            catalog(&[("schema_version", "three")]).schema_version(url),
            Err(StoreError::BadSchemaVersion { .. })
        ));
    }

    #[test]
    fn sqlx_bookkeeping_is_not_foreign() {
        let tables = |names: &[&str]| Catalog {
            tables: names.iter().map(|t| t.to_string()).collect(),
            ..Catalog::default()
        };
        assert!(!tables(&["_sqlx_migrations"]).has_foreign_tables());
        assert!(tables(&["_sqlx_migrations", "users"]).has_foreign_tables());
    }
}

//! Langflow's `postgres` knowledge-base backend (`lfx/base/knowledge_bases/backends/postgres.py`
//! and `naming.py` in Langflow 1.13): every knowledge base is one table, named `lf_` and the
//! first 24 hex digits of a SHA-256 of its owner and name, in the database that
//! `PGVECTOR_CONNECTION_STRING` names (Langflow reads only that variable; `backend_config`
//! cannot point a KB elsewhere). Its columns are `id VARCHAR PRIMARY KEY, embedding vector(N),
//! document VARCHAR, cmetadata JSONB`; the first write creates it, with a GIN index on the
//! metadata and an HNSW cosine index up to 2000 dimensions, under one database-wide advisory
//! lock. The `vector` extension is the operator's: Langflow never creates it, nor does memscope.
//! A KB whose table does not exist yet holds no chunk (Langflow's `count`).

use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Row};

use super::store::{LangflowChunk, StoreFigures};
use crate::kb::rows::{SearchHit, VectorStoreError};

/// The one variable Langflow's postgres backend is configured by.
pub const CONNECTION_VAR: &str = "PGVECTOR_CONNECTION_STRING";

/// Langflow's key for the advisory lock that serialises every table creation of a database.
const TABLE_CREATION_LOCK: i64 = 1_573_678_846_307_946_496;

/// pgvector indexes `vector` columns with HNSW up to this many dimensions.
const HNSW_MAX_DIMENSION: usize = 2000;

/// How long a connection attempt to the vector database may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Langflow's own words when the database lacks the extension.
const MISSING_EXTENSION: &str = "The pgvector 'vector' extension is not installed on this \
     database. Ask your database operator to enable it by running `CREATE EXTENSION vector;` \
     as a superuser. Langflow does not install database extensions, nor does memscope.";

/// The database URL Langflow's postgres backend uses, as sqlx takes it: SQLAlchemy's driver
/// suffix (`postgresql+psycopg://`) removed. `None` when the variable is unset or empty.
pub fn connection_string() -> Option<String> {
    let value = std::env::var(CONNECTION_VAR).ok()?;
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let (scheme, rest) = value.split_once("://")?;
    let scheme = scheme.split_once('+').map_or(scheme, |(base, _)| base);
    Some(format!("{scheme}://{rest}"))
}

/// The table of a knowledge base (`owner_scoped_collection_name`): SHA-256 of
/// `"{len(owner)}:{owner}{len(name)}:{name}"`, owner as a dashed UUID, lengths in characters.
/// `None` when the owner is not a UUID (Langflow refuses such a KB too).
pub fn table_name(owner_id: &str, kb_name: &str) -> Option<String> {
    let owner = uuid::Uuid::parse_str(owner_id)
        .ok()?
        .hyphenated()
        .to_string();
    let payload = format!(
        "{}:{owner}{}:{kb_name}",
        owner.chars().count(),
        kb_name.chars().count()
    );
    let digest = Sha256::digest(payload.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("lf_{}", &hex[..24]))
}

/// Where a knowledge base's chunks are, as shown to the user: the table and the database
/// (host, port and name, never the credentials).
pub fn describe(table: &str) -> String {
    match connection_string().and_then(|url| url.parse::<PgConnectOptions>().ok()) {
        Some(options) => format!(
            "table {table} of PostgreSQL {}:{}/{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or("")
        ),
        None => format!("table {table}"),
    }
}

async fn connect(url: &str, read_only: bool) -> Result<PgConnection, sqlx::Error> {
    let mut options: PgConnectOptions = url.parse()?;
    if read_only {
        options = options.options([("default_transaction_read_only", "on")]);
    }
    tokio::time::timeout(CONNECT_TIMEOUT, options.connect())
        .await
        .map_err(|_| {
            sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
            ))
        })?
}

fn not_configured() -> String {
    format!(
        "its vectors are in Langflow's postgres (pgvector) backend, whose database \
         {CONNECTION_VAR} names; set it as for Langflow to count them"
    )
}

async fn table_exists(connection: &mut PgConnection, table: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
        .bind(table)
        .fetch_one(connection)
        .await
}

/// The chunks of a knowledge base's table, read in a read-only transaction: no table, no
/// extension and no row is created (a missing table is an empty KB, as for Langflow).
pub async fn count_chunks(table: &str) -> Result<i64, String> {
    let url = connection_string().ok_or_else(not_configured)?;
    let unreadable = |e: sqlx::Error| format!("{} cannot be read: {e}", describe(table));
    let mut connection = connect(&url, true).await.map_err(unreadable)?;
    let counted = async {
        if !table_exists(&mut connection, table).await? {
            return Ok(0);
        }
        sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!("SELECT count(*) FROM \"{table}\"")))
            .fetch_one(&mut connection)
            .await
    }
    .await;
    let _ = connection.close().await;
    counted.map_err(unreadable)
}

/// Langflow's postgres backend search: cosine distance (`<=>`, the operator its HNSW index
/// serves), then the chunk id, in a read-only transaction; a table not made yet holds none.
pub async fn search(
    table: &str,
    query: &[f32],
    top_k: usize,
    session_id: Option<&str>,
) -> Result<Vec<SearchHit>, VectorStoreError> {
    let backend = |reason: String| VectorStoreError::LangflowBackend {
        backend: "postgres".to_owned(),
        reason,
    };
    let url = connection_string().ok_or_else(|| backend(not_configured()))?;
    let unreadable = |e: sqlx::Error| backend(format!("{} cannot be read: {e}", describe(table)));
    let mut connection = connect(&url, true).await.map_err(unreadable)?;
    let select = format!(
        "SELECT id, document, cmetadata::text, \
                (embedding <=> CAST($1 AS vector))::float8 AS distance \
         FROM \"{table}\" WHERE $2::text IS NULL OR cmetadata->>'session_id' = $2 \
         ORDER BY distance, id LIMIT $3"
    );
    let read = async {
        if !table_exists(&mut connection, table).await? {
            return Ok(Vec::new());
        }
        sqlx::query_as::<_, (String, Option<String>, String, f64)>(AssertSqlSafe(select))
            .bind(vector_text(query))
            .bind(session_id)
            .bind(i64::try_from(top_k).unwrap_or(i64::MAX))
            .fetch_all(&mut connection)
            .await
    }
    .await;
    let _ = connection.close().await;
    Ok(read
        .map_err(unreadable)?
        .into_iter()
        .map(|(id, document, metadata, distance)| {
            super::layout::hit(id, document.unwrap_or_default(), &metadata, distance)
        })
        .collect())
}

/// pgvector's text form of a vector: `[x,y,…]`.
fn vector_text(vector: &[f32]) -> String {
    let parts: Vec<String> = vector.iter().map(f32::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// The `N` of a `vector(N)` column type.
fn vector_dimension(type_text: &str) -> Option<usize> {
    type_text
        .strip_prefix("vector(")?
        .strip_suffix(')')?
        .parse()
        .ok()
}

/// A knowledge base's table in Langflow's postgres backend, open for writing.
pub struct LangflowPgStore {
    connection: PgConnection,
    table: String,
    /// The dimension the table was checked (or created) for.
    ready_for: Option<usize>,
}

impl LangflowPgStore {
    /// Connects to the backend's database; the table itself is made at the first write.
    pub async fn open(owner_id: &str, kb_name: &str) -> Result<LangflowPgStore, VectorStoreError> {
        let table = table_name(owner_id, kb_name).ok_or_else(|| {
            unavailable(format!(
                "its owner {owner_id} is not a UUID, so it has no table"
            ))
        })?;
        let url = connection_string().ok_or_else(|| unavailable(not_configured()))?;
        let connection =
            connect(&url, false)
                .await
                .map_err(|source| VectorStoreError::Postgres {
                    kb: describe(&table),
                    source,
                })?;
        Ok(LangflowPgStore {
            connection,
            table,
            ready_for: None,
        })
    }

    fn failed(&self, source: sqlx::Error) -> VectorStoreError {
        VectorStoreError::Postgres {
            kb: describe(&self.table),
            source,
        }
    }

    /// A statement on the table. Its name is `lf_` and 24 hex digits (`table_name`): nothing
    /// to escape.
    fn sql(&self, template: &str) -> String {
        template.replace("{table}", &self.table)
    }

    /// Langflow's `_ensure_embedding_table`: the typed table and its indexes, created once under
    /// the database-wide lock; a table of another dimension is refused.
    async fn ensure_table(&mut self, dimension: usize) -> Result<(), VectorStoreError> {
        if self.ready_for == Some(dimension) {
            return Ok(());
        }
        let create = self.sql(&format!(
            "CREATE TABLE IF NOT EXISTS \"{{table}}\" (id VARCHAR PRIMARY KEY, \
             embedding vector({dimension}), document VARCHAR, cmetadata JSONB)"
        ));
        let gin = self.sql(
            "CREATE INDEX IF NOT EXISTS \"{table}_cmeta_gin\" ON \"{table}\" \
             USING gin (cmetadata jsonb_path_ops)",
        );
        let hnsw = self.sql(
            "CREATE INDEX IF NOT EXISTS \"{table}_hnsw\" ON \"{table}\" \
             USING hnsw (embedding vector_cosine_ops)",
        );
        let table = self.table.clone();
        let checked = async {
            let mut tx = self.connection.begin().await?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(TABLE_CREATION_LOCK)
                .execute(&mut *tx)
                .await?;
            let extension: Option<String> =
                sqlx::query_scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                    .fetch_optional(&mut *tx)
                    .await?;
            if extension.is_none() {
                return Ok(Err(None));
            }
            sqlx::query(AssertSqlSafe(create)).execute(&mut *tx).await?;
            let existing: Option<String> = sqlx::query_scalar(
                "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a \
                 WHERE a.attrelid = to_regclass($1) AND a.attname = 'embedding' \
                 AND a.attnum > 0 AND NOT a.attisdropped",
            )
            .bind(&table)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(found) = existing.as_deref().and_then(vector_dimension)
                && found != dimension
            {
                return Ok(Err(Some(found)));
            }
            sqlx::query(AssertSqlSafe(gin)).execute(&mut *tx).await?;
            if dimension <= HNSW_MAX_DIMENSION {
                sqlx::query(AssertSqlSafe(hnsw)).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(Ok(()))
        }
        .await
        .map_err(|e| self.failed(e))?;
        match checked {
            Ok(()) => {
                self.ready_for = Some(dimension);
                Ok(())
            }
            Err(None) => Err(unavailable(MISSING_EXTENSION.to_owned())),
            Err(Some(found)) => Err(VectorStoreError::Dimension {
                store: describe(&self.table),
                found,
                expected: dimension,
            }),
        }
    }

    /// Writes chunks in one transaction, as Langflow's `_upsert_rows`: a known id is replaced.
    pub async fn upsert(&mut self, chunks: &[LangflowChunk]) -> Result<(), VectorStoreError> {
        let Some(dimension) = LangflowChunk::dimension_of(chunks, || describe(&self.table))? else {
            return Ok(());
        };
        self.ensure_table(dimension).await?;
        let insert = self.sql(
            "INSERT INTO \"{table}\" (id, embedding, document, cmetadata) \
             VALUES ($1, $2::vector, $3, $4::jsonb) ON CONFLICT (id) DO UPDATE SET \
             embedding = excluded.embedding, document = excluded.document, \
             cmetadata = excluded.cmetadata",
        );
        let written = async {
            let mut tx = self.connection.begin().await?;
            for chunk in chunks {
                sqlx::query(AssertSqlSafe(insert.clone()))
                    .bind(&chunk.id)
                    .bind(vector_text(&chunk.vector))
                    .bind(&chunk.content)
                    .bind(&chunk.metadata)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await;
        written.map_err(|e| self.failed(e))
    }

    /// Deletes what one job wrote (Langflow's `delete_by({"job_id": …})`).
    pub async fn delete_job(&mut self, job_id: &str) -> Result<u64, VectorStoreError> {
        let filter = serde_json::json!({ "job_id": job_id }).to_string();
        let delete = self.sql("DELETE FROM \"{table}\" WHERE cmetadata @> CAST($1 AS jsonb)");
        self.delete(delete, Some(filter)).await
    }

    /// The jobs whose chunks of a session the table holds (the metadata's `job_id`).
    pub async fn session_jobs(
        &mut self,
        session_id: &str,
    ) -> Result<Vec<String>, VectorStoreError> {
        let table = self.table.clone();
        let select = self.sql(
            "SELECT DISTINCT cmetadata->>'job_id' FROM \"{table}\" \
             WHERE cmetadata->>'session_id' = $1 AND cmetadata ? 'job_id'",
        );
        let read = async {
            if !table_exists(&mut self.connection, &table).await? {
                return Ok(Vec::new());
            }
            sqlx::query_scalar(AssertSqlSafe(select))
                .bind(session_id)
                .fetch_all(&mut self.connection)
                .await
        }
        .await;
        read.map_err(|e| self.failed(e))
    }

    /// Empties the table (its indexes stay, as Langflow made them).
    pub async fn delete_all(&mut self) -> Result<u64, VectorStoreError> {
        let delete = self.sql("DELETE FROM \"{table}\"");
        self.delete(delete, None).await
    }

    async fn delete(
        &mut self,
        sql: String,
        filter: Option<String>,
    ) -> Result<u64, VectorStoreError> {
        let table = self.table.clone();
        let deleted = async {
            if !table_exists(&mut self.connection, &table).await? {
                return Ok(0);
            }
            let mut query = sqlx::query(AssertSqlSafe(sql));
            if let Some(filter) = filter {
                query = query.bind(filter);
            }
            query
                .execute(&mut self.connection)
                .await
                .map(|r| r.rows_affected())
        }
        .await;
        deleted.map_err(|e| self.failed(e))
    }

    /// Chunks, words and characters of every chunk, and the table's size with its indexes
    /// (`pg_total_relation_size`), as Langflow's stats sync counts them.
    pub async fn figures(&mut self) -> Result<StoreFigures, VectorStoreError> {
        let table = self.table.clone();
        let select = self.sql("SELECT document FROM \"{table}\"");
        let read = async {
            if !table_exists(&mut self.connection, &table).await? {
                return Ok((Vec::new(), 0));
            }
            let rows = sqlx::query(AssertSqlSafe(select))
                .fetch_all(&mut self.connection)
                .await?;
            let contents: Vec<String> = rows
                .iter()
                .map(|row| row.get::<Option<String>, _>(0).unwrap_or_default())
                .collect();
            let size: i64 = sqlx::query_scalar(
                "SELECT COALESCE(pg_total_relation_size(to_regclass($1)), 0)::bigint",
            )
            .bind(&table)
            .fetch_one(&mut self.connection)
            .await?;
            Ok((contents, size))
        }
        .await;
        let (contents, size_bytes) = read.map_err(|e| self.failed(e))?;
        Ok(StoreFigures::of(&contents, size_bytes))
    }

    pub async fn close(self) {
        let _ = self.connection.close().await;
    }
}

fn unavailable(reason: String) -> VectorStoreError {
    VectorStoreError::LangflowBackend {
        backend: "postgres".to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_langflows_owner_scoped_name() {
        // Langflow 1.13: owner_scoped_collection_name(UUID("e7305111-…"), "notes_0123abcd"),
        // computed with Python's hashlib as Langflow does.
        let owner = "e7305111-5d44-4bd0-a3c6-0d7b4a4ff1a5";
        let name = table_name(owner, "notes_0123abcd").unwrap();
        assert_eq!(name, "lf_9217df99e3e210bdb9dc3767");
        assert_eq!(
            table_name("e73051115d444bd0a3c60d7b4a4ff1a5", "notes_0123abcd"),
            Some(name),
            "compact ids name the same table"
        );
        assert_eq!(table_name("not-a-uuid", "notes"), None);
        // Python's len() counts characters, not bytes.
        assert_eq!(
            table_name(owner, "mémoire_ab").as_deref(),
            Some("lf_b815a96b3bc1857ba40de3a5")
        );
    }

    #[test]
    fn vectors_and_column_types_in_pgvectors_text_form() {
        assert_eq!(vector_text(&[1.0, -2.5, 0.125]), "[1,-2.5,0.125]");
        assert_eq!(vector_dimension("vector(16)"), Some(16));
        assert_eq!(vector_dimension("vector"), None);
        assert_eq!(vector_dimension("text"), None);
    }
}

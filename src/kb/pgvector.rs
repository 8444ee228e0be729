//! The vector store on PostgreSQL: the chunks of every knowledge base of a memory database in
//! one pgvector table of that database, keyed by KB (`{username}/{kb_name}`), with the KB's
//! dimension in a second table. The tables are created on first use, in the connection's
//! current schema; the `vector` type and the `<=>` (cosine distance) operator are named with
//! the schema the extension was installed in, so a `search_path` without it still works.
//! Search is an exact scan of the KB's rows.

use sqlx::{AssertSqlSafe, PgPool};

use super::rows::{ChunkRecord, Column, HitRow, SearchHit, StoreStats, VectorStoreError};

/// Chunks written per statement.
const UPSERT_BATCH: usize = 1000;

pub struct PgVectors {
    pool: PgPool,
    kb: String,
    dimension: usize,
    /// The extension's schema, quoted: `"public"`.
    vector_schema: String,
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// pgvector's text form of a vector: `[x,y,…]`.
fn vector_text(vector: &[f32]) -> String {
    let mut text = String::with_capacity(vector.len() * 12 + 2);
    text.push('[');
    for (i, x) in vector.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&x.to_string());
    }
    text.push(']');
    text
}

/// The schema of the `vector` extension, installing it when the server has it and the user may
/// (a superuser). A missing extension is [`VectorStoreError::MissingPgvector`].
async fn vector_schema(pool: &PgPool) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT n.nspname::text FROM pg_extension e \
         JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
    )
    .fetch_optional(pool)
    .await
}

async fn ensure_extension(pool: &PgPool, kb: &str) -> Result<String, VectorStoreError> {
    let failed = |source| VectorStoreError::Postgres {
        kb: kb.to_owned(),
        source,
    };
    if let Some(schema) = vector_schema(pool).await.map_err(failed)? {
        return Ok(quote_ident(&schema));
    }
    match sqlx::query("CREATE EXTENSION IF NOT EXISTS vector")
        .execute(pool)
        .await
    {
        Ok(_) => {}
        // Another process created it meanwhile.
        Err(_) if vector_schema(pool).await.ok().flatten().is_some() => {}
        Err(source) => return Err(VectorStoreError::MissingPgvector { source }),
    }
    let schema = vector_schema(pool).await.map_err(failed)?;
    Ok(quote_ident(&schema.unwrap_or_else(|| "public".into())))
}

/// Whether this database has memscope's KB tables (in the current schema).
async fn tables_exist(pool: &PgPool) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT to_regclass('memscope_kb_chunk') IS NOT NULL")
        .fetch_one(pool)
        .await
}

impl PgVectors {
    fn failed(&self, source: sqlx::Error) -> VectorStoreError {
        VectorStoreError::Postgres {
            kb: self.kb.clone(),
            source,
        }
    }

    /// Opens KB `kb`, creating the tables and its row for `dimension` if needed.
    pub async fn open_or_create(
        pool: &PgPool,
        kb: &str,
        dimension: usize,
    ) -> Result<PgVectors, VectorStoreError> {
        let mut store = PgVectors {
            pool: pool.clone(),
            kb: kb.to_owned(),
            dimension,
            vector_schema: ensure_extension(pool, kb).await?,
        };
        store.create_tables().await?;
        let found: i32 = sqlx::query_scalar(
            "INSERT INTO memscope_kb (kb, dimension) VALUES ($1, $2) \
             ON CONFLICT (kb) DO UPDATE SET kb = excluded.kb RETURNING dimension",
        )
        .bind(kb)
        .bind(dimension as i32)
        .fetch_one(pool)
        .await
        .map_err(|e| store.failed(e))?;
        if found as usize != dimension {
            return Err(VectorStoreError::Dimension {
                store: format!("pgvector KB {kb}"),
                found: found as usize,
                expected: dimension,
            });
        }
        store.dimension = dimension;
        Ok(store)
    }

    /// Opens KB `kb`; `None` when it has no row (never written, or dropped).
    pub async fn open_existing(
        pool: &PgPool,
        kb: &str,
    ) -> Result<Option<PgVectors>, VectorStoreError> {
        let failed = |source| VectorStoreError::Postgres {
            kb: kb.to_owned(),
            source,
        };
        if !tables_exist(pool).await.map_err(failed)? {
            return Ok(None);
        }
        let dimension: Option<i32> =
            sqlx::query_scalar("SELECT dimension FROM memscope_kb WHERE kb = $1")
                .bind(kb)
                .fetch_optional(pool)
                .await
                .map_err(failed)?;
        let Some(dimension) = dimension else {
            return Ok(None);
        };
        Ok(Some(PgVectors {
            pool: pool.clone(),
            kb: kb.to_owned(),
            dimension: dimension as usize,
            vector_schema: ensure_extension(pool, kb).await?,
        }))
    }

    /// Deletes KB `kb`'s chunks and row.
    pub async fn drop_kb(pool: &PgPool, kb: &str) -> Result<(), VectorStoreError> {
        let failed = |source| VectorStoreError::Postgres {
            kb: kb.to_owned(),
            source,
        };
        if !tables_exist(pool).await.map_err(failed)? {
            return Ok(());
        }
        let mut tx = pool.begin().await.map_err(failed)?;
        for sql in [
            "DELETE FROM memscope_kb_chunk WHERE kb = $1",
            "DELETE FROM memscope_kb WHERE kb = $1",
        ] {
            sqlx::query(sql)
                .bind(kb)
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
        tx.commit().await.map_err(failed)
    }

    /// Creates the tables once per database; concurrent creators wait on an advisory lock.
    async fn create_tables(&self) -> Result<(), VectorStoreError> {
        if tables_exist(&self.pool).await.map_err(|e| self.failed(e))? {
            return Ok(());
        }
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext('memscope_kb_tables'))")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS memscope_kb (
                 kb text PRIMARY KEY,
                 dimension integer NOT NULL,
                 created_at timestamptz NOT NULL DEFAULT now()
             );
             CREATE TABLE IF NOT EXISTS memscope_kb_chunk (
                 kb text NOT NULL,
                 chunk_id text NOT NULL,
                 message_id text NOT NULL,
                 session_id text NOT NULL,
                 job_id text NOT NULL,
                 content text NOT NULL,
                 metadata jsonb NOT NULL,
                 words integer NOT NULL,
                 characters integer NOT NULL,
                 embedding {}.vector NOT NULL,
                 PRIMARY KEY (kb, chunk_id)
             );
             CREATE INDEX IF NOT EXISTS memscope_kb_chunk_job ON memscope_kb_chunk (kb, job_id);
             CREATE INDEX IF NOT EXISTS memscope_kb_chunk_session
                 ON memscope_kb_chunk (kb, session_id);",
            self.vector_schema
        );
        sqlx::raw_sql(AssertSqlSafe(ddl))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub async fn upsert(&self, chunks: &[ChunkRecord]) -> Result<(), VectorStoreError> {
        let sql = format!(
            "INSERT INTO memscope_kb_chunk (kb, chunk_id, message_id, session_id, job_id, \
             content, metadata, words, characters, embedding) \
             SELECT $1, u.c, u.m, u.s, u.j, u.t, u.md::jsonb, u.w, u.ch, u.e::{}.vector \
             FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::text[], $8::int4[], $9::int4[], $10::text[]) AS u(c, m, s, j, t, md, w, ch, e) \
             ON CONFLICT (kb, chunk_id) DO UPDATE SET job_id = excluded.job_id, \
             content = excluded.content, metadata = excluded.metadata, words = excluded.words, \
             characters = excluded.characters, embedding = excluded.embedding",
            self.vector_schema
        );
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        for batch in chunks.chunks(UPSERT_BATCH) {
            let column = |f: fn(&ChunkRecord) -> String| batch.iter().map(f).collect::<Vec<_>>();
            sqlx::query(AssertSqlSafe(sql.as_str()))
                .bind(&self.kb)
                .bind(column(|c| c.chunk_id.clone()))
                .bind(column(|c| c.message_id.clone()))
                .bind(column(|c| c.session_id.clone()))
                .bind(column(|c| c.job_id.clone()))
                .bind(column(|c| c.content.clone()))
                .bind(column(|c| c.metadata.to_string()))
                .bind(batch.iter().map(|c| c.words() as i32).collect::<Vec<_>>())
                .bind(
                    batch
                        .iter()
                        .map(|c| c.characters() as i32)
                        .collect::<Vec<_>>(),
                )
                .bind(column(|c| vector_text(&c.embedding)))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
        }
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub(super) async fn delete_where(
        &self,
        column: Column,
        value: &str,
    ) -> Result<u64, VectorStoreError> {
        let sql = format!(
            "DELETE FROM memscope_kb_chunk WHERE kb = $1 AND {} = $2",
            column.name()
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(&self.kb)
            .bind(value)
            .execute(&self.pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(|e| self.failed(e))
    }

    pub async fn stats(&self) -> Result<StoreStats, VectorStoreError> {
        sqlx::query_as::<_, (i64, i64, i64, i64)>(
            "SELECT count(*), count(DISTINCT message_id), coalesce(sum(words), 0)::bigint, \
             coalesce(sum(characters), 0)::bigint FROM memscope_kb_chunk WHERE kb = $1",
        )
        .bind(&self.kb)
        .fetch_one(&self.pool)
        .await
        .map(StoreStats::from)
        .map_err(|e| self.failed(e))
    }

    pub async fn chunks_per_message(&self) -> Result<Vec<(String, i64)>, VectorStoreError> {
        sqlx::query_as(
            "SELECT message_id, count(*) FROM memscope_kb_chunk WHERE kb = $1 \
             GROUP BY message_id ORDER BY message_id",
        )
        .bind(&self.kb)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.failed(e))
    }

    pub async fn search(
        &self,
        query: &[f32],
        top_k: usize,
        session_id: Option<&str>,
    ) -> Result<Vec<SearchHit>, VectorStoreError> {
        let schema = &self.vector_schema;
        let sql = format!(
            "SELECT chunk_id, message_id, session_id, content, metadata::text AS metadata, \
             (embedding OPERATOR({schema}.<=>) $2::{schema}.vector)::float8 AS distance \
             FROM memscope_kb_chunk WHERE kb = $1 AND ($3::text IS NULL OR session_id = $3) \
             ORDER BY distance, chunk_id LIMIT $4"
        );
        let rows: Vec<HitRow> = sqlx::query_as(AssertSqlSafe(sql))
            .bind(&self.kb)
            .bind(vector_text(query))
            .bind(session_id)
            .bind(top_k as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(SearchHit::from).collect())
    }

    /// The pool is the memory database's own: nothing to close.
    pub async fn close(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_and_identifiers_are_written_as_postgres_reads_them() {
        assert_eq!(vector_text(&[1.0, -0.5, 0.25]), "[1,-0.5,0.25]");
        assert_eq!(vector_text(&[]), "[]");
        assert_eq!(quote_ident("public"), "\"public\"");
        assert_eq!(quote_ident("we\"ird"), "\"we\"\"ird\"");
    }
}

//! `checkpoints prune`: the plan (per thread: checkpoints, writes, PostgreSQL blobs nothing
//! kept references any more, bytes) from the rows' keys and sizes, and the prune itself in one
//! transaction: every deleted row goes to the archive file (`archive.rs`), flushed to disk
//! before the commit, so a kill leaves the database as before or as after and the archive
//! restores what went. The checkpoints chosen are `decode::prune`'s.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use sqlx::Row;

use super::archive::{ArchiveError, ArchiveWriter, KeptCheckpoints, Origin, pause_point};
use super::read::LangGraphPool;
use super::saver::{LangGraphDb, LangGraphError};
use crate::sources::checkpoint_prune::{PrunePlan, PruneRequest, RestoredArchive, ThreadPrune};
use crate::sources::langgraph::decode::prune::{CheckpointKey, Selection, select};
use crate::store::CancelFlag;

/// Why a prune or a restore failed; the database is as it was.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error(transparent)]
    Read(#[from] LangGraphError),
    #[error("no thread {0} in this database")]
    UnknownThread(String),
    #[error(
        "thread {0} uses a DeltaChannel, whose value is rebuilt from older checkpoints' writes: \
         memscope does not prune it"
    )]
    DeltaChannel(String),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// Stopped before its commit (Ctrl-C): the transaction rolled back, the partial archive
    /// removed.
    #[error("interrupted: nothing was deleted")]
    Interrupted,
    #[error("{0}")]
    Query(#[from] sqlx::Error),
}

/// The keys of the rows behind a thread's figures, which only this module reads: a front end
/// shows the figures, and [`LangGraphDb::prune`] deletes by the keys of its own plan.
#[derive(Debug)]
struct PruneKeys {
    selection: Selection,
    blob_keys: Vec<(String, String, String)>,
    /// The checkpoints the thread keeps, newest first: the archive records them as the proof
    /// of the database its rows belong to.
    kept: Vec<CheckpointKey>,
}

/// A plan with the keys of each of its threads' rows, in the plan's order.
struct Planned {
    plan: PrunePlan,
    keys: Vec<PruneKeys>,
}

impl Planned {
    fn threads(&self) -> impl Iterator<Item = (&ThreadPrune, &PruneKeys)> {
        self.plan.threads.iter().zip(&self.keys)
    }
}

/// `(ns, id, bytes)` of a checkpoint.
type SizeRow = (String, String, i64);
/// `(ns, id, writes, bytes)` of a checkpoint's writes.
type WritesRow = (String, String, i64, i64);
/// Row sizes of one thread: `(ns, id) → bytes` of checkpoints, `(ns, id) → (writes, bytes)`.
type Sizes = (
    HashMap<CheckpointKey, i64>,
    HashMap<CheckpointKey, (i64, i64)>,
);

impl LangGraphDb {
    /// What a prune would delete.
    pub async fn prune_plan(&self, request: &PruneRequest) -> Result<PrunePlan, PruneError> {
        Ok(self.planned(request).await?.plan)
    }

    async fn planned(&self, request: &PruneRequest) -> Result<Planned, PruneError> {
        let all: Vec<String> = self
            .pool
            .threads()
            .await
            .map_err(|e| self.failed(e))?
            .into_iter()
            .map(|t| t.thread_id)
            .collect();
        let chosen = if request.threads.is_empty() {
            all
        } else {
            let known: HashSet<&String> = all.iter().collect();
            if let Some(unknown) = request.threads.iter().find(|t| !known.contains(t)) {
                return Err(PruneError::UnknownThread(unknown.clone()));
            }
            request.threads.clone()
        };
        let mut threads = Vec::new();
        let mut keys = Vec::new();
        for thread in chosen {
            let (rows, _) = self
                .pool
                .thread_rows(&thread)
                .await
                .map_err(|e| self.failed(e))?;
            if rows
                .iter()
                .any(|r| r.metadata.get("counters_since_delta_snapshot").is_some())
            {
                return Err(PruneError::DeltaChannel(thread));
            }
            let selection = select(&rows, request.rule);
            if selection.deleted.is_empty() {
                continue;
            }
            let (checkpoint_bytes, writes) = self.pool.sizes(&thread).await?;
            let deleted: HashSet<&CheckpointKey> = selection.deleted.iter().collect();
            let blob_keys = self.pool.garbage_blobs(&thread, &deleted).await?;
            let (write_count, write_bytes) = deleted
                .iter()
                .filter_map(|key| writes.get(*key))
                .fold((0, 0), |(n, b), (wn, wb)| (n + wn, b + wb));
            let blob_bytes: i64 = blob_keys.iter().map(|(_, _, _, bytes)| bytes).sum();
            let mut kept: Vec<CheckpointKey> = rows
                .iter()
                .map(|r| (r.checkpoint_ns.clone(), r.checkpoint_id.clone()))
                .filter(|key| !deleted.contains(key))
                .collect();
            kept.sort_by(|a, b| b.1.cmp(&a.1));
            threads.push(ThreadPrune {
                thread_id: thread,
                checkpoints_before: rows.len(),
                checkpoints: selection.deleted.len(),
                writes: write_count,
                blobs: blob_keys.len(),
                bytes: deleted
                    .iter()
                    .filter_map(|key| checkpoint_bytes.get(*key))
                    .sum::<i64>()
                    + write_bytes
                    + blob_bytes,
            });
            keys.push(PruneKeys {
                blob_keys: blob_keys
                    .into_iter()
                    .map(|(ns, c, v, _)| (ns, c, v))
                    .collect(),
                selection,
                kept,
            });
        }
        let plan = PrunePlan {
            saver: self.pool.saver().name(),
            keep_last: request.rule.keep_last,
            before: request.before.clone(),
            checkpoints: threads.iter().map(|t| t.checkpoints).sum(),
            writes: threads.iter().map(|t| t.writes).sum(),
            blobs: threads.iter().map(|t| t.blobs).sum(),
            bytes: threads.iter().map(|t| t.bytes).sum(),
            threads,
        };
        Ok(Planned { plan, keys })
    }

    /// Where a plan's rows come from, as its archive records it.
    fn origin(&self, planned: &Planned) -> Origin {
        Origin {
            database: crate::store::absolute_url(self.url()),
            threads: planned
                .threads()
                .map(|(t, keys)| KeptCheckpoints {
                    thread_id: t.thread_id.clone(),
                    kept: keys.kept.clone(),
                })
                .collect(),
        }
    }

    /// Prunes in one transaction, every deleted row archived to `archive` first (the file is
    /// complete and on disk before the commit). Only the planned keys are deleted, so a run
    /// saving meanwhile keeps its rows. `stop` set before the archive is complete (Ctrl-C)
    /// rolls back and removes the partial archive: [`PruneError::Interrupted`].
    pub async fn prune(
        &self,
        request: &PruneRequest,
        archive: &Path,
        stop: &CancelFlag,
    ) -> Result<PrunePlan, PruneError> {
        let stopped = || {
            if stop.is_cancelled() {
                Err(PruneError::Interrupted)
            } else {
                Ok(())
            }
        };
        match &self.pool {
            LangGraphPool::Sqlite(pool) => {
                let planned = self.planned(request).await?;
                stopped()?;
                let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let mut writer =
                    ArchiveWriter::create(archive, self.pool.saver(), self.origin(&planned))?;
                for (thread, keys) in planned.threads() {
                    let id = thread.thread_id.as_str();
                    for (ns, checkpoint) in &keys.selection.orphaned {
                        let row = sqlx::query(
                            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints \
                             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
                        )
                        .bind(id)
                        .bind(ns)
                        .bind(checkpoint)
                        .fetch_one(&mut *tx)
                        .await?;
                        writer.sqlite_parent(&row)?;
                        sqlx::query(
                            "UPDATE checkpoints SET parent_checkpoint_id = NULL \
                             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
                        )
                        .bind(id)
                        .bind(ns)
                        .bind(checkpoint)
                        .execute(&mut *tx)
                        .await?;
                    }
                    for (ns, checkpoint) in &keys.selection.deleted {
                        for table in ["writes", "checkpoints"] {
                            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                                "DELETE FROM {table} WHERE thread_id = ?1 AND checkpoint_ns = ?2 \
                                 AND checkpoint_id = ?3 RETURNING *"
                            )))
                            .bind(id)
                            .bind(ns)
                            .bind(checkpoint)
                            .fetch_all(&mut *tx)
                            .await?;
                            for row in &rows {
                                writer.sqlite_row(table, row)?;
                            }
                        }
                        pause_point("while-archiving", stop).await;
                        stopped()?;
                    }
                }
                writer.finish()?;
                crate::sources::langgraph::archive::fault_point("before-commit");
                tx.commit().await?;
                Ok(planned.plan)
            }
            LangGraphPool::Postgres(pool) => {
                let planned = self.planned(request).await?;
                stopped()?;
                let mut tx = pool.begin().await?;
                let mut writer =
                    ArchiveWriter::create(archive, self.pool.saver(), self.origin(&planned))?;
                for (thread, keys) in planned.threads() {
                    let id = thread.thread_id.as_str();
                    for (ns, checkpoint) in &keys.selection.orphaned {
                        let old: Option<String> = sqlx::query_scalar(
                            "UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM checkpoints o \
                             WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3 \
                             AND o.thread_id = c.thread_id AND o.checkpoint_ns = c.checkpoint_ns \
                             AND o.checkpoint_id = c.checkpoint_id \
                             RETURNING json_build_object('thread_id', o.thread_id, 'checkpoint_ns', \
                             o.checkpoint_ns, 'checkpoint_id', o.checkpoint_id, \
                             'parent_checkpoint_id', o.parent_checkpoint_id)::text",
                        )
                        .bind(id)
                        .bind(ns)
                        .bind(checkpoint)
                        .fetch_optional(&mut *tx)
                        .await?;
                        if let Some(old) = old {
                            writer.postgres_parent(&old)?;
                        }
                    }
                    let mut by_ns: HashMap<&str, Vec<&str>> = HashMap::new();
                    for (ns, checkpoint) in &keys.selection.deleted {
                        by_ns.entry(ns).or_default().push(checkpoint);
                    }
                    for (ns, ids) in &by_ns {
                        for table in ["checkpoint_writes", "checkpoints"] {
                            let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                                "DELETE FROM {table} t WHERE thread_id = $1 AND checkpoint_ns = $2 \
                                 AND checkpoint_id = ANY($3) RETURNING row_to_json(t)::text"
                            )))
                            .bind(id)
                            .bind(ns)
                            .bind(ids)
                            .fetch_all(&mut *tx)
                            .await?;
                            for row in &rows {
                                writer.postgres_row(table, row)?;
                            }
                        }
                        pause_point("while-archiving", stop).await;
                        stopped()?;
                    }
                    for (ns, channel, version) in &keys.blob_keys {
                        let rows: Vec<String> = sqlx::query_scalar(
                            "DELETE FROM checkpoint_blobs t WHERE thread_id = $1 AND checkpoint_ns = $2 \
                             AND channel = $3 AND version = $4 RETURNING row_to_json(t)::text",
                        )
                        .bind(id)
                        .bind(ns)
                        .bind(channel)
                        .bind(version)
                        .fetch_all(&mut *tx)
                        .await?;
                        for row in &rows {
                            writer.postgres_row("checkpoint_blobs", row)?;
                        }
                        stopped()?;
                    }
                }
                writer.finish()?;
                crate::sources::langgraph::archive::fault_point("before-commit");
                tx.commit().await?;
                Ok(planned.plan)
            }
        }
    }

    /// Puts every row of an archive back, byte for byte, in one transaction, when this is the
    /// database it came from and its rows are not here already.
    pub async fn restore(&self, archive: &Path) -> Result<RestoredArchive, PruneError> {
        let here = crate::store::absolute_url(self.url());
        Ok(super::restore::restore(&self.pool, &here, archive).await?)
    }

    /// `VACUUM` (SQLite) or `VACUUM` of the saver's tables (PostgreSQL), giving the freed space
    /// back to the file system.
    pub async fn vacuum(&self) -> Result<(), PruneError> {
        match &self.pool {
            LangGraphPool::Sqlite(pool) => {
                sqlx::query("VACUUM").execute(pool).await?;
            }
            LangGraphPool::Postgres(pool) => {
                sqlx::query("VACUUM checkpoints, checkpoint_writes, checkpoint_blobs")
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
    }
}

impl LangGraphPool {
    /// A thread's row sizes, as `info` counts bytes.
    async fn sizes(&self, thread: &str) -> sqlx::Result<Sizes> {
        let (checkpoints, writes): (Vec<SizeRow>, Vec<WritesRow>) =
            match self {
                LangGraphPool::Sqlite(pool) => (
                    sqlx::query_as(
                        "SELECT checkpoint_ns, checkpoint_id, \
                         COALESCE(LENGTH(checkpoint), 0) + COALESCE(LENGTH(metadata), 0) \
                         FROM checkpoints WHERE thread_id = ?1",
                    )
                    .bind(thread)
                    .fetch_all(pool)
                    .await?,
                    sqlx::query_as(
                        "SELECT checkpoint_ns, checkpoint_id, COUNT(*), COALESCE(SUM(LENGTH(value)), 0) \
                         FROM writes WHERE thread_id = ?1 GROUP BY checkpoint_ns, checkpoint_id",
                    )
                    .bind(thread)
                    .fetch_all(pool)
                    .await?,
                ),
                LangGraphPool::Postgres(pool) => (
                    sqlx::query_as(
                        "SELECT checkpoint_ns, checkpoint_id, \
                         (pg_column_size(checkpoint) + pg_column_size(metadata))::int8 \
                         FROM checkpoints WHERE thread_id = $1",
                    )
                    .bind(thread)
                    .fetch_all(pool)
                    .await?,
                    sqlx::query_as(
                        "SELECT checkpoint_ns, checkpoint_id, COUNT(*), \
                         COALESCE(SUM(octet_length(blob)), 0)::int8 \
                         FROM checkpoint_writes WHERE thread_id = $1 GROUP BY checkpoint_ns, checkpoint_id",
                    )
                    .bind(thread)
                    .fetch_all(pool)
                    .await?,
                ),
            };
        Ok((
            checkpoints
                .into_iter()
                .map(|(ns, id, bytes)| ((ns, id), bytes))
                .collect(),
            writes
                .into_iter()
                .map(|(ns, id, n, bytes)| ((ns, id), (n, bytes)))
                .collect(),
        ))
    }

    /// PostgresSaver's blobs that the deleted checkpoints name and no kept one does, with their
    /// sizes: `(ns, channel, version, bytes)`. SqliteSaver keeps none.
    async fn garbage_blobs(
        &self,
        thread: &str,
        deleted: &HashSet<&CheckpointKey>,
    ) -> sqlx::Result<Vec<(String, String, String, i64)>> {
        let LangGraphPool::Postgres(pool) = self else {
            return Ok(Vec::new());
        };
        let references = sqlx::query(
            "SELECT c.checkpoint_ns, c.checkpoint_id, v.key, v.value \
             FROM checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v \
             WHERE c.thread_id = $1",
        )
        .bind(thread)
        .fetch_all(pool)
        .await?;
        let mut freed: HashSet<(String, String, String)> = HashSet::new();
        let mut kept: HashSet<(String, String, String)> = HashSet::new();
        for row in references {
            let key: CheckpointKey = (row.try_get(0)?, row.try_get(1)?);
            let blob = (key.0.clone(), row.try_get(2)?, row.try_get(3)?);
            if deleted.contains(&key) {
                freed.insert(blob);
            } else {
                kept.insert(blob);
            }
        }
        let blobs: Vec<(String, String, String, i64)> = sqlx::query_as(
            "SELECT checkpoint_ns, channel, version, COALESCE(octet_length(blob), 0)::int8 \
             FROM checkpoint_blobs WHERE thread_id = $1 ORDER BY checkpoint_ns, channel, version",
        )
        .bind(thread)
        .fetch_all(pool)
        .await?;
        Ok(blobs
            .into_iter()
            .filter(|(ns, channel, version, _)| {
                let key = (ns.clone(), channel.clone(), version.clone());
                freed.contains(&key) && !kept.contains(&key)
            })
            .collect())
    }
}

//! The per-(memory base, session) sync lock: a PostgreSQL advisory lock, a SQLite lease row
//! kept renewed, or on Langflow's SQLite the knowledge base's file lock.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;

use crate::memory::memory_base::advisory_lock_key;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::owners;
use crate::store::pool::DbPool;
use crate::store::profile::LockStyle;

/// Holds the per-(memory base, session) sync lock until released (or the process dies).
pub struct SessionLock {
    name: String,
    /// Who holds it, as [`Store::sweep_abandoned_jobs`] checks: the lease's owner on SQLite,
    /// the backend pid holding the advisory lock on PostgreSQL.
    holder: String,
    held: HeldLock,
}

enum HeldLock {
    /// A session-level advisory lock lives on its connection, which is closed (not returned to
    /// the pool) when the lock is dropped, so the lock can never leak to another pool user.
    Advisory {
        connection: PoolConnection<sqlx::Postgres>,
        key: i64,
    },
    Lease {
        pool: sqlx::SqlitePool,
        owner: String,
    },
    /// Langflow's SQLite database has no cross-process session lock (Langflow serialises a
    /// session in its own process); the sync holds the knowledge base's file lock instead.
    KbFileLock,
}

impl Store {
    /// Takes the per-(base, session) lock without waiting: `None` when someone holds it. On
    /// PostgreSQL an advisory lock; on SQLite a lease row valid for `lease`, which the holder
    /// renews with [`SessionLock::heartbeat`].
    pub async fn try_lock_session(
        &self,
        lock_name: &str,
        lease: Duration,
    ) -> Result<Option<SessionLock>, StoreError> {
        let app_keys = self.profile.capabilities().locks == LockStyle::AppKeys;
        if app_keys {
            self.ensure_writable_in_place()?;
        } else {
            self.ensure_writable()?;
        }
        match &self.pool {
            DbPool::Sqlite(..) if app_keys => Ok(Some(SessionLock {
                name: lock_name.to_owned(),
                holder: owners::job_owner(),
                held: HeldLock::KbFileLock,
            })),
            DbPool::Postgres(pool, _) => {
                let mut connection = pool.acquire().await.map_err(|e| self.query_failed(e))?;
                connection.close_on_drop();
                // Langflow's own key on its database: its ingestion and memscope's exclude
                // each other.
                let key = if app_keys {
                    owners::session_lock_key(lock_name)
                } else {
                    advisory_lock_key(lock_name)
                };
                let (locked, backend): (bool, i32) =
                    sqlx::query_as("SELECT pg_try_advisory_lock($1), pg_backend_pid()")
                        .bind(key)
                        .fetch_one(&mut *connection)
                        .await
                        .map_err(|e| self.query_failed(e))?;
                Ok(locked.then(|| SessionLock {
                    name: lock_name.to_owned(),
                    holder: backend.to_string(),
                    held: HeldLock::Advisory { connection, key },
                }))
            }
            DbPool::Sqlite(pool, _) => {
                let owner = lease_owner();
                let now = epoch_ms(Utc::now());
                self.break_dead_lease(pool, lock_name).await?;
                let taken = sqlx::query(
                    "INSERT INTO memscope_sync_lease (lock_name, owner, expires_at_ms) \
                     VALUES (?, ?, ?) ON CONFLICT (lock_name) DO UPDATE SET \
                     owner = excluded.owner, expires_at_ms = excluded.expires_at_ms, job_id = NULL \
                     WHERE memscope_sync_lease.expires_at_ms < ?",
                )
                .bind(lock_name)
                .bind(&owner)
                .bind(now + lease.as_millis() as i64)
                .bind(now)
                .execute(pool)
                .await
                .map_err(|e| self.query_failed(e))?
                .rows_affected();
                Ok((taken == 1).then(|| SessionLock {
                    name: lock_name.to_owned(),
                    holder: owner.clone(),
                    held: HeldLock::Lease {
                        pool: pool.clone(),
                        owner,
                    },
                }))
            }
            DbPool::Mysql(..) => Err(self.no_memory_bases_on_mysql()),
        }
    }
}

/// A new lease owner: unique, and naming its host and process so that a process of the same
/// host can tell when the holder died.
fn lease_owner() -> String {
    format!(
        "{}@{}:{}",
        uuid::Uuid::new_v4(),
        owners::host_name(),
        std::process::id()
    )
}

/// Whether a lease's owner is a process of this host that stopped.
fn owner_is_dead(owner: &str) -> bool {
    let Some((rest, pid)) = owner.rsplit_once(':') else {
        return false;
    };
    let Some((_, host)) = rest.split_once('@') else {
        return false;
    };
    host == owners::host_name()
        && pid
            .parse()
            .is_ok_and(|pid| owners::process_alive(pid) == Some(false))
}

impl Store {
    /// Deletes a session's lease whose holder was a process of this host that stopped (killed):
    /// its session need not stay blocked until the lease expires.
    async fn break_dead_lease(
        &self,
        pool: &sqlx::SqlitePool,
        lock_name: &str,
    ) -> Result<(), StoreError> {
        let owner: Option<String> =
            sqlx::query_scalar("SELECT owner FROM memscope_sync_lease WHERE lock_name = ?")
                .bind(lock_name)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.query_failed(e))?;
        if let Some(owner) = owner.filter(|owner| owner_is_dead(owner)) {
            sqlx::query("DELETE FROM memscope_sync_lease WHERE lock_name = ? AND owner = ?")
                .bind(lock_name)
                .bind(&owner)
                .execute(pool)
                .await
                .map_err(|e| self.query_failed(e))?;
        }
        Ok(())
    }
}

fn epoch_ms(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

impl SessionLock {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Renews a SQLite lease; `false` when it was lost (it expired and someone else took it).
    /// Advisory locks need no renewal.
    pub async fn heartbeat(&mut self, lease: Duration) -> Result<bool, sqlx::Error> {
        match &self.held {
            HeldLock::Advisory { .. } | HeldLock::KbFileLock => Ok(true),
            HeldLock::Lease { pool, owner } => {
                let renewed = sqlx::query(
                    "UPDATE memscope_sync_lease SET expires_at_ms = ? \
                     WHERE lock_name = ? AND owner = ?",
                )
                .bind(epoch_ms(Utc::now()) + lease.as_millis() as i64)
                .bind(&self.name)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected();
                Ok(renewed == 1)
            }
        }
    }

    /// Releases the lock. Dropping it instead releases it too (an advisory lock's connection
    /// closes), except that a lease then lasts until it expires.
    pub async fn release(self) -> Result<(), sqlx::Error> {
        match self.held {
            HeldLock::KbFileLock => Ok(()),
            HeldLock::Advisory {
                mut connection,
                key,
            } => {
                sqlx::query("SELECT pg_advisory_unlock($1)")
                    .bind(key)
                    .execute(&mut *connection)
                    .await?;
                Ok(())
            }
            HeldLock::Lease { pool, owner } => {
                sqlx::query("DELETE FROM memscope_sync_lease WHERE lock_name = ? AND owner = ?")
                    .bind(&self.name)
                    .bind(&owner)
                    .execute(&pool)
                    .await?;
                Ok(())
            }
        }
    }
}

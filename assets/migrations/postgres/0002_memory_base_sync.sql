-- memscope: memory-base syncs (schema version 2).

-- The per-(memory base, session) sync lease on SQLite, which has no advisory locks. A holder
-- renews expires_at_ms while it works; a holder that died (SIGKILL) loses the lease when it
-- expires. PostgreSQL uses pg_try_advisory_lock instead; the table exists there too so both
-- schemas stay alike.
CREATE TABLE memscope_sync_lease (
    lock_name varchar PRIMARY KEY,
    owner varchar NOT NULL,
    job_id uuid NULL,
    expires_at_ms bigint NOT NULL
);

-- Running and queued jobs of a memory base (cancel on delete, the jobs list).
CREATE INDEX ix_job_asset_status ON job (asset_id, status);

UPDATE memscope_meta SET value = '2' WHERE key = 'schema_version';

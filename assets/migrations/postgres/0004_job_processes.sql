-- memscope: who runs each ingestion job (schema version 4).

-- A memscope process that creates an ingestion job records here how to tell whether it is
-- still alive: the lock it holds (lock_name; holder is the SQLite lease's owner or the
-- PostgreSQL backend pid holding the advisory lock) and its host and pid. Whoever lists jobs
-- next marks a queued or running job whose holder is gone as failed and keeps the reason here:
-- Langflow's job table has no column for it. Jobs memscope did not create have no row and are
-- left alone.
CREATE TABLE memscope_job_process (
    job_id varchar PRIMARY KEY,
    lock_name varchar NOT NULL,
    holder varchar NOT NULL,
    host varchar NOT NULL,
    pid bigint NOT NULL,
    ended_reason varchar NULL
);

UPDATE memscope_meta SET value = '4' WHERE key = 'schema_version';

-- memscope: indexes for conversation search over message text (schema version 5).

-- Trigram GIN indexes (pg_trgm) on LOWER(query) and LOWER(answer): the very expressions the
-- search's LIKE tests, so PostgreSQL answers `LOWER(m.query) LIKE '%text%'` from the index and
-- results are the same as a scan's. pg_trgm ships with PostgreSQL's contrib package and is a
-- trusted extension (a database owner may create it); where it is installed already, in any
-- schema, that copy is used. A server without it, or a role that may not create it, still
-- migrates: `message_search` then says `scan`, and the search scans the messages.
DO $$
DECLARE
    trgm_schema name;
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    SELECT n.nspname INTO trgm_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
    EXECUTE format(
        'CREATE INDEX message_query_trgm_idx ON messages USING gin (LOWER(query) %I.gin_trgm_ops)',
        trgm_schema);
    EXECUTE format(
        'CREATE INDEX message_answer_trgm_idx ON messages USING gin (LOWER(answer) %I.gin_trgm_ops)',
        trgm_schema);
    INSERT INTO memscope_meta (key, value) VALUES ('message_search', 'trigram');
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'memscope: no trigram index on message text (%); search scans messages', SQLERRM;
    INSERT INTO memscope_meta (key, value) VALUES ('message_search', 'scan');
END
$$;

UPDATE memscope_meta SET value = '5' WHERE key = 'schema_version';

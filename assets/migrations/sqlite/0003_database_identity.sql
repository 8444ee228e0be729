-- Schema version 3: every memscope database records its own identity, a random id written once.
-- Files that belong to one database (its memory bases' knowledge-base directories) are placed by
-- this id, so two databases never share, overwrite or delete each other's files.
INSERT INTO memscope_meta (key, value)
SELECT 'database_id', lower(hex(randomblob(16)))
WHERE NOT EXISTS (SELECT 1 FROM memscope_meta WHERE key = 'database_id');
UPDATE memscope_meta SET value = '3' WHERE key = 'schema_version';

-- memscope: an index for conversation search over message text (schema version 5).

-- A trigram full-text index on messages.query and messages.answer. It stores no text of its own
-- (external content: it reads the text back from messages), and the triggers below keep it in
-- step with every insert, update and delete. It records which rows hold each trigram, not where
-- (detail none: a third of the size, and inserts twice as fast, as positions would cost); the
-- search asks for the rows holding every trigram of its text, folded for case, and re-checks
-- each with its case-insensitive LIKE, so results are the same as a scan's. Searches shorter
-- than three characters have no trigram and scan. The index is keyed by the messages' rowid, which only VACUUM could renumber
-- (memscope never runs it); after a manual VACUUM run
-- `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    query,
    answer,
    content = 'messages',
    tokenize = 'trigram case_sensitive 0',
    detail = 'none'
);

CREATE TRIGGER messages_fts_after_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, query, answer) VALUES (new.rowid, new.query, new.answer);
END;

CREATE TRIGGER messages_fts_after_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, query, answer)
    VALUES ('delete', old.rowid, old.query, old.answer);
END;

CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF query, answer ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, query, answer)
    VALUES ('delete', old.rowid, old.query, old.answer);
    INSERT INTO messages_fts (rowid, query, answer) VALUES (new.rowid, new.query, new.answer);
END;

-- Index the messages an older database already holds.
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

-- How the search finds message text: read when the database is opened.
INSERT INTO memscope_meta (key, value) VALUES ('message_search', 'fts5-trigram');

UPDATE memscope_meta SET value = '5' WHERE key = 'schema_version';

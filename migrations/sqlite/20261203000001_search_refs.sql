-- The search index found by key. An FTS5 table finds rows only by its words and its rowid: a
-- delete by one of its UNINDEXED columns (ref_id, message_id, …) read the whole index, once
-- per indexed text. Each entry now has a row here, whose id is the entry's FTS5 rowid, with
-- ordinary indexes on what entries are removed by; removing the row removes the entry
-- (search_refs_unindex). Existing entries are carried over with their rowids.
CREATE TABLE search_refs (
    id INTEGER PRIMARY KEY,
    ref_id TEXT NOT NULL UNIQUE,
    message_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    user_id TEXT NOT NULL
);
CREATE INDEX search_refs_by_message ON search_refs (message_id);
CREATE INDEX search_refs_by_conversation ON search_refs (conversation_id);
CREATE INDEX search_refs_by_user ON search_refs (user_id);

INSERT OR IGNORE INTO search_refs (id, ref_id, message_id, conversation_id, user_id)
    SELECT rowid, ref_id, message_id, conversation_id, user_id FROM search_index;
-- A duplicate of a key (none is expected) would otherwise stay in the index for good.
DELETE FROM search_index WHERE rowid NOT IN (SELECT id FROM search_refs);

CREATE TRIGGER search_refs_unindex AFTER DELETE ON search_refs BEGIN
    DELETE FROM search_index WHERE rowid = old.id;
END;

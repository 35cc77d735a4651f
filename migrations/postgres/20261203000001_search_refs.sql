-- The search index found by key: entries are removed by message and by conversation (a
-- discarded turn, an edit that drops what followed, the purge), which read the whole table
-- without these. ref_id is the primary key and user_id has its index already. The SQLite
-- file of this version adds search_refs instead (its FTS5 table cannot be indexed).
CREATE INDEX search_index_by_message ON search_index (message_id);
CREATE INDEX search_index_by_conversation ON search_index (conversation_id);

-- Search entries written as a turn opens and ends wait here, on their reference, until a drain
-- writes them into the FTS5 table many at a time (once a second, before any search, and when
-- the store opens, so none is lost to a crash). Each commit that touched the FTS5 table flushed
-- a segment of its own and merged; a turn wrote three. pending_body is the text to index, kind
-- its kind; NULL once indexed. The PostgreSQL index is written as before.
ALTER TABLE search_refs ADD COLUMN kind TEXT;
ALTER TABLE search_refs ADD COLUMN pending_body TEXT;
CREATE INDEX search_refs_pending ON search_refs (id) WHERE pending_body IS NOT NULL;

-- Links that show a snapshot of a conversation to whoever has them. The token is kept only as
-- its SHA-256; the snapshot is the conversation as the link shows it (JSON), and `files` the
-- owner's attachments it shows, in order (JSON). A link goes with its conversation and its
-- user; deleting the conversation deletes its links too (the store does it at once, before
-- the purge).
CREATE TABLE shares (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    thinking INTEGER NOT NULL DEFAULT 0,
    files INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL,
    messages BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    file_ids TEXT NOT NULL,
    -- The snapshot's formulas typeset and code highlighted (JSON), taken with it.
    dressing TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX shares_by_conversation ON shares (conversation_id);
CREATE INDEX shares_by_user ON shares (user_id, created_at);

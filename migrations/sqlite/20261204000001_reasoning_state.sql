-- The opaque reasoning state an answer version came with (signed thinking blocks, encrypted
-- reasoning items, thought signatures), kept beside it to send back on the next turn to the
-- provider, model and upstream that produced it, and nowhere else: no page, export or log
-- reads this table. `items` is a JSON array; `bytes` its length, for the per-conversation cap.
CREATE TABLE reasoning_states (
    version_id TEXT PRIMARY KEY REFERENCES message_versions (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    upstream TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    items TEXT NOT NULL
);
CREATE INDEX reasoning_states_by_conversation ON reasoning_states (conversation_id, created_at);

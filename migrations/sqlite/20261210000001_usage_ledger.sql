-- The usage ledger (issue #46): one line per turn, whatever became of its chat (deleting a chat
-- does not give its spending back). Tokens as the provider counted them, or estimated from the
-- streamed characters (estimated = 1); cost in millionths of the price table's currency, at the
-- prices of the moment, none when the model had no price.
CREATE TABLE usage_ledger (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT,
    conversation_id TEXT,
    version_id TEXT,
    model TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL,
    thinking_ms INTEGER NOT NULL,
    total_ms INTEGER NOT NULL,
    cost_micros INTEGER,
    currency TEXT,
    outcome TEXT NOT NULL
);
CREATE INDEX usage_ledger_by_user ON usage_ledger (user_id, at_ms);
CREATE INDEX usage_ledger_by_time ON usage_ledger (at_ms);

-- A reader's own limits, set by an administrator; without a row the default
-- (PONDER_QUOTA) holds. limits is the text form (tokens/day=200000, cost/month=5.50); an
-- empty text is no limit at all for this reader.
CREATE TABLE user_quotas (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    limits TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

-- Ponder's first schema (SQLite). The PostgreSQL file of the same version holds the same
-- tables. Times are milliseconds since the Unix epoch; ids are opaque text; flags are integers
-- (0 or 1), which both engines read the same way.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    identity TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX sessions_by_user ON sessions (user_id);

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX workspaces_by_user ON workspaces (user_id);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    model TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    rev BIGINT NOT NULL DEFAULT 0,
    deleted_at BIGINT,
    import_key TEXT
);
CREATE INDEX conversations_by_list ON conversations (user_id, workspace_id, updated_at);
CREATE UNIQUE INDEX conversations_by_import ON conversations (user_id, import_key);

CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    role TEXT NOT NULL,
    active_version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX messages_by_conversation ON messages (conversation_id, position);

CREATE TABLE message_versions (
    id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    retryable INTEGER,
    model TEXT,
    finish_reason TEXT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    reasoning_tokens BIGINT,
    created_at BIGINT NOT NULL,
    -- Last, for the same reason as thinking_blocks.text.
    content TEXT NOT NULL,
    UNIQUE (message_id, idx)
);

CREATE TABLE thinking_blocks (
    id TEXT PRIMARY KEY,
    version_id TEXT NOT NULL REFERENCES message_versions (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    kind TEXT NOT NULL,
    chars BIGINT NOT NULL,
    words BIGINT NOT NULL,
    started_at BIGINT,
    duration_ms BIGINT,
    token_count BIGINT,
    reader_open INTEGER,
    interrupted INTEGER NOT NULL DEFAULT 0,
    -- Last: SQLite reads a row's columns in order, so a header read never walks the overflow
    -- pages of a long reasoning text stored before it.
    text TEXT NOT NULL,
    UNIQUE (version_id, idx)
);

CREATE TABLE preferences (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    thinking TEXT,
    locale TEXT,
    theme TEXT,
    default_model TEXT,
    PRIMARY KEY (user_id, workspace_id)
);

-- Full-text search over finished answers and thinking, written by the application when a
-- message version reaches its final state.
CREATE VIRTUAL TABLE search_index USING fts5 (
    body,
    kind UNINDEXED,
    ref_id UNINDEXED,
    message_id UNINDEXED,
    conversation_id UNINDEXED,
    user_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);

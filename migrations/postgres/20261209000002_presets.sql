-- Presets (issue #45): a named bundle of model, reasoning settings, sampling parameters and
-- instructions. A reader's own (shared = 0), or offered to everyone by an administrator
-- (shared = 1; user_id is who made it).
CREATE TABLE presets (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    shared INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL,
    model TEXT,
    thinking INTEGER,
    effort TEXT,
    temperature DOUBLE PRECISION,
    top_p DOUBLE PRECISION,
    max_tokens BIGINT,
    instructions TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX presets_by_user ON presets (user_id);
CREATE INDEX presets_shared ON presets (shared);

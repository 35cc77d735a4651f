-- The turns running now, with their owner: with several replicas, "Answer now" that lands on
-- another replica than the one running the turn finds it here and is passed on by NOTIFY.
-- Written on PostgreSQL only (SQLite serves one process); the table exists in both so that
-- the schemas stay one.
CREATE TABLE running_turns (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    started_at BIGINT NOT NULL
);

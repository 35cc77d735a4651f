-- Resumable turns. A stored answer names the turn writing it, so a page that opens the
-- conversation while it streams joins that turn (GET /api/turn/events).
ALTER TABLE message_versions ADD COLUMN turn_id TEXT;

-- With several replicas on PostgreSQL: which replica runs each turn and which answer it writes,
-- when it ended (kept a while for viewers that reconnect late) and when a viewer on another
-- replica last watched it; each replica's heartbeat, so the survivors find the turns of one that
-- died; and every event of a running turn, numbered, read by viewers on the other replicas.
-- Written on PostgreSQL only (SQLite serves one process, where the events stay in memory); the
-- tables exist in both so that the schemas stay one.
ALTER TABLE running_turns ADD COLUMN replica TEXT NOT NULL DEFAULT '';
ALTER TABLE running_turns ADD COLUMN version_id TEXT;
ALTER TABLE running_turns ADD COLUMN ended_at BIGINT;
ALTER TABLE running_turns ADD COLUMN watched_at BIGINT;

CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

-- UNLOGGED: the events are a relay, not a record (the answer is saved in message_versions);
-- they skip the write-ahead log, and a crash of PostgreSQL empties the table.
CREATE UNLOGGED TABLE turn_events (
    turn_id TEXT NOT NULL REFERENCES running_turns (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    frame TEXT NOT NULL,
    last BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (turn_id, seq)
);

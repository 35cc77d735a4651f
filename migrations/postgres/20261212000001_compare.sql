-- Comparisons (issue #49): one question to several models, each answer a version of one
-- assistant message. `compared` marks the versions a comparison started, `picked` the one the
-- reader chose (at most one per message), `rating` the reader's thumbs (1 up, -1 down).
ALTER TABLE message_versions ADD COLUMN compared INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message_versions ADD COLUMN picked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message_versions ADD COLUMN rating INTEGER;

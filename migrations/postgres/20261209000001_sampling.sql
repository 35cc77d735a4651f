-- The sampling parameters a reader set (issue #45): kept with the conversation (its next turn
-- asks with them, on any device) and with each answer version (regenerate asks as it did).
-- NULL: not set, nothing was sent.
ALTER TABLE conversations ADD COLUMN temperature DOUBLE PRECISION;
ALTER TABLE conversations ADD COLUMN top_p DOUBLE PRECISION;
ALTER TABLE conversations ADD COLUMN max_tokens BIGINT;
ALTER TABLE message_versions ADD COLUMN temperature DOUBLE PRECISION;
ALTER TABLE message_versions ADD COLUMN top_p DOUBLE PRECISION;
ALTER TABLE message_versions ADD COLUMN max_tokens BIGINT;

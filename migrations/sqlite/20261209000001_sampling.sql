-- The sampling parameters a reader set (issue #45): kept with the conversation (its next turn
-- asks with them, on any device) and with each answer version (regenerate asks as it did).
-- NULL: not set, nothing was sent.
ALTER TABLE conversations ADD COLUMN temperature REAL;
ALTER TABLE conversations ADD COLUMN top_p REAL;
ALTER TABLE conversations ADD COLUMN max_tokens INTEGER;
ALTER TABLE message_versions ADD COLUMN temperature REAL;
ALTER TABLE message_versions ADD COLUMN top_p REAL;
ALTER TABLE message_versions ADD COLUMN max_tokens INTEGER;

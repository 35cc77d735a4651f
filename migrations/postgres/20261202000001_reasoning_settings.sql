-- The reasoning settings a turn was asked with, kept on each answer and, as the settings the
-- next turn starts from, on its conversation (with the conversation's model, already there).
-- Expand only: older servers ignore the new columns.
ALTER TABLE conversations ADD COLUMN thinking INTEGER;
ALTER TABLE conversations ADD COLUMN effort TEXT;
ALTER TABLE message_versions ADD COLUMN thinking INTEGER;
ALTER TABLE message_versions ADD COLUMN effort TEXT;

-- Organising conversations (issue #45): pinned ones stay on top of the list (pinned_at: when,
-- NULL: not pinned), and tags (a JSON list of at most 10 names) filter it.
ALTER TABLE conversations ADD COLUMN pinned_at INTEGER;
ALTER TABLE conversations ADD COLUMN tags TEXT;

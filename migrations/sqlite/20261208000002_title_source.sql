-- Who made a conversation's title (issue #45): 'auto' (its first words, or a mark), 'model'
-- (written by the model after the first answer) or 'reader' (renamed). A model's title never
-- replaces a reader's.
ALTER TABLE conversations ADD COLUMN title_source TEXT NOT NULL DEFAULT 'auto';

-- A reader's own choice about titles by the model (issue #45): 'model' or 'off'; NULL follows
-- the server's PONDER_TITLES. Kept in the preferences of the reader's first workspace.
ALTER TABLE preferences ADD COLUMN titles TEXT;

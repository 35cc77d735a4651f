-- What was read from inside a file: a PDF's page count and text (sent as text to a model that
-- reads no documents), and whether an image was written again smaller on upload (served inline).
ALTER TABLE attachments ADD COLUMN pages BIGINT;
ALTER TABLE attachments ADD COLUMN text TEXT;
ALTER TABLE attachments ADD COLUMN reencoded BIGINT NOT NULL DEFAULT 0;

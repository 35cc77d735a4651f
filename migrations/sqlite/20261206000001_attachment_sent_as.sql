-- How each file of a reader's message went to the model the first time it was sent
-- (`image`, `document` or `text`), for the chip under the message.
ALTER TABLE version_attachments ADD COLUMN sent_as TEXT;

-- System instructions (issue #45): the reader's own, a workspace's and a conversation's, each
-- NULL when unset; and on each answer version the combined text it was asked with ('' when
-- there was none, NULL for versions made before instructions existed), so answering again
-- uses the same. A shared link says whether its snapshot shows the chat's own instructions.
ALTER TABLE users ADD COLUMN instructions TEXT;
ALTER TABLE workspaces ADD COLUMN instructions TEXT;
ALTER TABLE conversations ADD COLUMN instructions TEXT;
ALTER TABLE message_versions ADD COLUMN instructions TEXT;
ALTER TABLE shares ADD COLUMN instructions INTEGER NOT NULL DEFAULT 0;

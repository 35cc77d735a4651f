-- Files readers attach to messages. The bytes are kept once per user and content (`sha256`),
-- however often they are attached; each attachment keeps the name the reader gave it and what
-- its bytes were found to be (kind, type, an image's size). A user's files go with the user.
CREATE TABLE attachment_blobs (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    bytes BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, sha256)
);
CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    sha256 TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    mime TEXT NOT NULL,
    size BIGINT NOT NULL,
    width BIGINT,
    height BIGINT,
    created_at BIGINT NOT NULL,
    FOREIGN KEY (user_id, sha256) REFERENCES attachment_blobs (user_id, sha256) ON DELETE CASCADE
);
CREATE INDEX attachments_by_user ON attachments (user_id, created_at);
-- The files sent with a reader's message version, in the order they were attached.
CREATE TABLE version_attachments (
    version_id TEXT NOT NULL REFERENCES message_versions (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    attachment_id TEXT NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    PRIMARY KEY (version_id, position)
);
CREATE INDEX version_attachments_by_attachment ON version_attachments (attachment_id);

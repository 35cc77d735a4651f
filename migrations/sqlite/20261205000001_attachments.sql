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

-- Who became the first admin: one row at most (id = 1), claimed in the transaction that
-- creates the first user, so two first visits at once cannot both become admin (the second
-- finds the row taken). Filled here when users exist already.
CREATE TABLE first_admin (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    user_id TEXT NOT NULL,
    claimed_at BIGINT NOT NULL
);
INSERT INTO first_admin (id, user_id, claimed_at)
    SELECT 1, id, created_at FROM users ORDER BY created_at, id LIMIT 1;

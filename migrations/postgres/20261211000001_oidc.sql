-- Single sign-on (PONDER_AUTH=oidc). A person the identity provider signs in is its issuer and
-- subject, never their e-mail: one row links that pair to the user it became.
CREATE TABLE oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    signed_in_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_by_user ON oidc_identities (user_id);

-- A sign-in on its way through the provider: kept on the server (so any replica can finish it),
-- keyed by the digest of the browser's one-time cookie, taken once.
CREATE TABLE oidc_logins (
    browser_hash TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    nonce TEXT NOT NULL,
    verifier TEXT NOT NULL,
    return_to TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX oidc_logins_by_age ON oidc_logins (created_at);

-- The ID token a session was opened with, for the provider's sign-out (`id_token_hint`).
ALTER TABLE sessions ADD COLUMN id_token TEXT;

-- People: accounts with roles, the sessions they hold, and the append-only log of security
-- events. Accounts are disabled, never deleted (evidence names them); a role is one of three.

CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY,
    -- Letters, digits, '.', '_' and '-'; unique whatever the case.
    name          TEXT NOT NULL UNIQUE COLLATE NOCASE
                  CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
    -- An Argon2id PHC string; never a password.
    password_hash TEXT NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
    disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at    TEXT NOT NULL
);

CREATE TRIGGER accounts_never_deleted BEFORE DELETE ON accounts
BEGIN
    SELECT RAISE(ABORT, 'accounts are disabled, never deleted');
END;

-- A disabled account stays disabled.
CREATE TRIGGER accounts_stay_disabled BEFORE UPDATE OF disabled ON accounts
WHEN OLD.disabled = 1 AND NEW.disabled = 0
BEGIN
    SELECT RAISE(ABORT, 'a disabled account cannot be enabled again');
END;

CREATE TABLE account_roles (
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    role       TEXT NOT NULL CHECK (role IN ('author', 'reviewer', 'admin')),
    PRIMARY KEY (account_id, role)
) WITHOUT ROWID;

-- Sessions of tower-sessions: the record as JSON, its expiry as Unix seconds.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    data        BLOB NOT NULL,
    expiry_unix INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_expiry ON sessions (expiry_unix);

-- Every login success and failure, logout, lockout, account creation, role change, password
-- change and disable: time, the account (id when it exists; the name as given), the remote
-- address and the outcome. Append-only.
CREATE TABLE security_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    at           TEXT NOT NULL,
    event        TEXT NOT NULL CHECK (event IN (
                     'login', 'logout', 'lockout', 'account_created', 'roles_changed',
                     'password_changed', 'account_disabled', 'session_refused')),
    account_id   INTEGER REFERENCES accounts (id),
    account_name TEXT NOT NULL,
    actor_id     INTEGER REFERENCES accounts (id),
    remote_addr  TEXT,
    outcome      TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
    detail       TEXT
);
CREATE INDEX security_events_by_name ON security_events (account_name COLLATE NOCASE, at);

CREATE TRIGGER security_events_no_update BEFORE UPDATE ON security_events
BEGIN
    SELECT RAISE(ABORT, 'security_events is append-only');
END;

CREATE TRIGGER security_events_no_delete BEFORE DELETE ON security_events
BEGIN
    SELECT RAISE(ABORT, 'security_events is append-only');
END;

-- Signatures only the signer can make: a password an administrator set is temporary (it must be
-- replaced by the account's own before anything else works, and it expires); the time the
-- owner last chose their password is kept for the signature; roles have an append-only history
-- (who granted what, when), which the audit replays; and the admin role manages accounts only.

-- Whether the current password was set by someone else (an administrator, the command line),
-- when such a temporary password stops working, when the password was last set by anyone, and
-- when its owner last chose it.
ALTER TABLE accounts ADD COLUMN password_temporary INTEGER NOT NULL DEFAULT 0
    CHECK (password_temporary IN (0, 1));
ALTER TABLE accounts ADD COLUMN password_expires_at TEXT;
ALTER TABLE accounts ADD COLUMN password_set_at TEXT;
ALTER TABLE accounts ADD COLUMN password_set_by_owner_at TEXT;

-- Passwords set before this migration may have been chosen by an administrator: every account
-- chooses its own at its next login (no expiry, so nobody is locked out by the upgrade).
UPDATE accounts SET password_temporary = 1, password_set_at = created_at;

-- A password the owner chose is never temporary and names when it was chosen; a temporary one
-- does not claim to be the owner's.
CREATE TRIGGER accounts_password_origin BEFORE UPDATE OF password_hash ON accounts
WHEN (NEW.password_temporary = 0 AND NEW.password_set_by_owner_at IS NOT NEW.password_set_at)
  OR (NEW.password_temporary = 1 AND NEW.password_expires_at IS NULL)
  OR NEW.password_set_at IS NULL
BEGIN
    SELECT RAISE(ABORT, 'a new password is either the owner''s own (set_by_owner_at = set_at) or temporary with an expiry');
END;

-- Who acted, by name, on security events (an account name, or "command line: <os user>").
ALTER TABLE security_events ADD COLUMN actor_name TEXT;

-- Every grant and revocation of a role: which account, which role, when, and who did it.
CREATE TABLE account_role_history (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    role       TEXT NOT NULL CHECK (role IN ('author', 'reviewer', 'admin')),
    change     TEXT NOT NULL CHECK (change IN ('granted', 'revoked')),
    at         TEXT NOT NULL,
    actor_id   INTEGER REFERENCES accounts (id),
    actor_name TEXT NOT NULL
);
CREATE INDEX account_role_history_by_account ON account_role_history (account_id, role, at);

CREATE TRIGGER account_role_history_no_update BEFORE UPDATE ON account_role_history
BEGIN
    SELECT RAISE(ABORT, 'account_role_history is append-only');
END;

CREATE TRIGGER account_role_history_no_delete BEFORE DELETE ON account_role_history
BEGIN
    SELECT RAISE(ABORT, 'account_role_history is append-only');
END;

-- The roles held before this migration, granted when their account was created.
INSERT INTO account_role_history (account_id, role, change, at, actor_id, actor_name)
SELECT r.account_id, r.role, 'granted', a.created_at, NULL, 'before role history (migration 8)'
FROM account_roles r JOIN accounts a ON a.id = r.account_id
ORDER BY a.created_at, r.account_id, r.role;

-- A role is held only as its history says: granted by its latest history row, given up only
-- after a revocation row.
CREATE TRIGGER account_roles_granted_in_history BEFORE INSERT ON account_roles
WHEN coalesce((SELECT change FROM account_role_history
               WHERE account_id = NEW.account_id AND role = NEW.role
               ORDER BY seq DESC LIMIT 1), '') <> 'granted'
BEGIN
    SELECT RAISE(ABORT, 'a role is given only with its grant in account_role_history');
END;

CREATE TRIGGER account_roles_revoked_in_history BEFORE DELETE ON account_roles
WHEN coalesce((SELECT change FROM account_role_history
               WHERE account_id = OLD.account_id AND role = OLD.role
               ORDER BY seq DESC LIMIT 1), '') <> 'revoked'
BEGIN
    SELECT RAISE(ABORT, 'a role is taken away only with its revocation in account_role_history');
END;

-- Separation of duties: the admin role manages accounts only, never with author or reviewer.
-- (Accounts that held both before this migration keep them until an admin changes their roles;
-- they cannot sign, and the accounts page says so.)
CREATE TRIGGER account_roles_admin_alone BEFORE INSERT ON account_roles
WHEN (NEW.role = 'admin' AND EXISTS (
        SELECT 1 FROM account_roles WHERE account_id = NEW.account_id AND role <> 'admin'))
  OR (NEW.role <> 'admin' AND EXISTS (
        SELECT 1 FROM account_roles WHERE account_id = NEW.account_id AND role = 'admin'))
BEGIN
    SELECT RAISE(ABORT, 'separation of duties: an account cannot hold admin together with author or reviewer');
END;

CREATE TRIGGER accounts_inserted_with_password_origin BEFORE INSERT ON accounts
WHEN NEW.password_set_at IS NULL
  OR (NEW.password_temporary = 0 AND NEW.password_set_by_owner_at IS NOT NEW.password_set_at)
  OR (NEW.password_temporary = 1 AND NEW.password_expires_at IS NULL)
BEGIN
    SELECT RAISE(ABORT, 'an account is created with its own password (set_by_owner_at = set_at) or a temporary one with an expiry');
END;

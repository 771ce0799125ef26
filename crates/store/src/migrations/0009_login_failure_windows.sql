-- Failed logins without unbounded logs. Anonymous requests must not grow the append-only
-- security log by a row each: repeated login failures (and lockouts) of one name, with one
-- reason, within one fixed window are ONE security_events row whose repeat_count grows and
-- whose last_at follows the latest. Only those two columns of such a row may change, and only
-- forwards; every other row stays exactly as written.

ALTER TABLE security_events ADD COLUMN repeat_count INTEGER NOT NULL DEFAULT 1
    CHECK (repeat_count >= 1);
ALTER TABLE security_events ADD COLUMN last_at TEXT;

DROP TRIGGER security_events_no_update;
CREATE TRIGGER security_events_no_update BEFORE UPDATE ON security_events
WHEN NOT (
    OLD.event IN ('login', 'lockout') AND OLD.outcome = 'failure'
    AND NEW.seq IS OLD.seq AND NEW.at IS OLD.at AND NEW.event IS OLD.event
    AND NEW.account_id IS OLD.account_id AND NEW.account_name IS OLD.account_name
    AND NEW.actor_id IS OLD.actor_id AND NEW.actor_name IS OLD.actor_name
    AND NEW.remote_addr IS OLD.remote_addr
    AND NEW.outcome IS OLD.outcome AND NEW.detail IS OLD.detail
    AND NEW.repeat_count > OLD.repeat_count
    AND NEW.last_at IS NOT NULL AND NEW.last_at >= coalesce(OLD.last_at, OLD.at)
)
BEGIN
    SELECT RAISE(ABORT, 'security_events is append-only (only a login failure row''s repeat_count grows)');
END;

-- Where a login stands for one name from one client address: failures in the current run
-- (counted from window_start) and the lockout it earned. A working table, not evidence (the
-- security log above is): a success from the address deletes its row, and rows whose window
-- and lockout have both passed are deleted as new failures arrive. Lockout is per name AND
-- address, so an attacker's failures lock the name for the attacker's address only.
CREATE TABLE login_failure_windows (
    account_name TEXT NOT NULL COLLATE NOCASE
                 CHECK (length(account_name) BETWEEN 1 AND 64),
    -- The client's address as the server saw it ('' when unknown, e.g. the command line).
    client       TEXT NOT NULL CHECK (length(client) <= 64),
    window_start TEXT NOT NULL,
    failures     INTEGER NOT NULL CHECK (failures >= 0),
    locked_until TEXT,
    PRIMARY KEY (account_name, client)
) WITHOUT ROWID;
CREATE INDEX login_failure_windows_by_start ON login_failure_windows (window_start);

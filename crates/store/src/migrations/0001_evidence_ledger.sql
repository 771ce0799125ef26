-- The evidence ledger: append-only, each record naming its predecessor's hash.
CREATE TABLE evidence_ledger (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL,
    record_hash   TEXT NOT NULL UNIQUE CHECK (length(record_hash) = 64),
    previous_hash TEXT NOT NULL CHECK (length(previous_hash) = 64),
    record        BLOB NOT NULL,
    appended_at   TEXT NOT NULL
);

CREATE TRIGGER evidence_ledger_refuses_update BEFORE UPDATE ON evidence_ledger
BEGIN
    SELECT RAISE(ABORT, 'the evidence ledger is append-only: UPDATE refused');
END;

CREATE TRIGGER evidence_ledger_refuses_delete BEFORE DELETE ON evidence_ledger
BEGIN
    SELECT RAISE(ABORT, 'the evidence ledger is append-only: DELETE refused');
END;

-- Approval, reproduction and history. A revision records who made it and the revision it
-- revises (both as its creation record says); Verified → Approved becomes an edge, allowed only
-- with its revision_lifecycle `approved` record naming an `approval` record by someone other
-- than the author; signing attempts join the security log.

-- Who made the revision and which one it revises, as its `created` record names them (the
-- history filters and shows both without reading the ledger).
ALTER TABLE revisions ADD COLUMN author_name TEXT;
ALTER TABLE revisions ADD COLUMN parent_id TEXT REFERENCES revisions (id);

-- The triggers that refuse every other row change go while the existing rows are filled in.
DROP TRIGGER revisions_change_only_by_promotion;
DROP TRIGGER revisions_version_moves_by_one;
UPDATE revisions SET author_name = coalesce((
    SELECT json_extract(e.record, '$.actor.account_name') FROM evidence_ledger e
    WHERE e.kind = 'revision_lifecycle' AND json_extract(e.record, '$.revision_id') = +revisions.id
      AND json_extract(e.record, '$.event') = 'created'), 'unknown');

CREATE TRIGGER revisions_version_moves_by_one BEFORE UPDATE ON revisions
WHEN NEW.version <> OLD.version + 1
BEGIN
    SELECT RAISE(ABORT, 'a revision change must move its version on by one');
END;

DROP TRIGGER revisions_insert_as_created;
CREATE TRIGGER revisions_insert_as_created BEFORE INSERT ON revisions
WHEN NEW.status NOT IN ('draft', 'experimental_draft')
  OR NEW.version IS NOT 1
  OR NEW.pending_image_hash IS NOT NULL
  OR NEW.pending_analytical_hash IS NOT NULL
  OR NEW.author_name IS NULL
  OR NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    WHERE e.kind = 'revision_lifecycle'
      AND json_extract(e.record, '$.revision_id') = +NEW.id
      AND json_extract(e.record, '$.event') = 'created'
      AND json_extract(e.record, '$.to_status') = NEW.status
      AND json_extract(e.record, '$.version') = 1
      AND json_extract(e.record, '$.spec_hash') = NEW.spec_hash
      AND json_extract(e.record, '$.actor.account_name') IS NEW.author_name
      AND json_extract(e.record, '$.parent_revision_id') IS NEW.parent_id
  )
BEGIN
    SELECT RAISE(ABORT, 'a revision is inserted only as draft or experimental_draft at version 1, after its revision_lifecycle created record naming its author and parent');
END;

-- (`+NEW.id`: without the column's affinity the ledger's index on the revision id is used.)
-- A row changes only by its two edges, each with its record; nothing else of it changes.
CREATE TRIGGER revisions_change_only_by_promotion BEFORE UPDATE ON revisions
WHEN NEW.id IS NOT OLD.id
  OR NEW.spec_hash IS NOT OLD.spec_hash
  OR NEW.script_hash IS NOT OLD.script_hash
  OR NEW.snapshot_id IS NOT OLD.snapshot_id
  OR NEW.snapshot_hash IS NOT OLD.snapshot_hash
  OR NEW.request_hash IS NOT OLD.request_hash
  OR NEW.created_at IS NOT OLD.created_at
  OR NEW.inputs IS NOT OLD.inputs
  OR NEW.author_name IS NOT OLD.author_name
  OR NEW.parent_id IS NOT OLD.parent_id
  OR NOT (
    -- Draft → Verified: the accepted bundle's hashes, bound once.
    (OLD.status = 'draft' AND NEW.status = 'verified'
      AND EXISTS (
        SELECT 1 FROM artifact_bundles b
        WHERE b.revision_id = NEW.id
          AND b.png_hash = NEW.pending_image_hash
          AND NEW.pending_analytical_hash IS NOT NULL
      ))
    -- Verified → Approved: the approved record naming an approval of this version, signed
    -- by a reviewer that did not create the revision (not the same account, nor, for a
    -- revision made on the command line, an account named as its operating-system user).
    OR (OLD.status = 'verified' AND NEW.status = 'approved'
      AND NEW.pending_image_hash IS OLD.pending_image_hash
      AND NEW.pending_analytical_hash IS OLD.pending_analytical_hash
      AND EXISTS (
        SELECT 1 FROM evidence_ledger l
        JOIN evidence_ledger a ON a.record_hash = json_extract(l.record, '$.approval_hash')
        WHERE l.kind = 'revision_lifecycle'
          AND json_extract(l.record, '$.revision_id') = +NEW.id
          AND json_extract(l.record, '$.event') = 'approved'
          AND json_extract(l.record, '$.version') = NEW.version
          AND a.kind = 'approval'
          AND json_extract(a.record, '$.revision_id') = +NEW.id
          AND json_extract(a.record, '$.decision') = 'approved'
          AND json_extract(a.record, '$.revision_version') = OLD.version
          AND EXISTS (
            SELECT 1 FROM json_each(a.record, '$.signer.roles') WHERE value = 'reviewer'
          )
          AND NOT EXISTS (
            SELECT 1 FROM evidence_ledger c
            WHERE c.kind = 'revision_lifecycle'
              AND json_extract(c.record, '$.revision_id') = +NEW.id
              AND json_extract(c.record, '$.event') = 'created'
              AND (json_extract(c.record, '$.actor.account_id')
                       IS json_extract(a.record, '$.signer.account_id')
                   OR lower(json_extract(c.record, '$.actor.account_name'))
                       = lower(json_extract(a.record, '$.signer.account_name')))
          )
      ))
  )
BEGIN
    SELECT RAISE(ABORT, 'a revision changes only from draft to verified (with its accepted bundle) or from verified to approved (with its approved record naming an approval by someone other than its author), and nothing else of it changes');
END;

-- The history reads these indexes only, never the rows (whose `inputs` can be large): one
-- covering every column its filters and order need, one for the author list, and the lineage.
CREATE INDEX revisions_history ON revisions (created_at DESC, id, status, author_name, spec_hash);
CREATE INDEX revisions_by_author ON revisions (author_name);
CREATE INDEX revisions_by_spec ON revisions (spec_hash);
CREATE INDEX revisions_by_parent ON revisions (parent_id);
CREATE INDEX specs_by_content ON specs (content_hash);

-- Signing attempts (good or bad) and the lockout of signing join the security log: the table
-- is made again with the two new events (SQLite cannot widen a CHECK in place).
CREATE TABLE security_events_v2 (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    at           TEXT NOT NULL,
    event        TEXT NOT NULL CHECK (event IN (
                     'login', 'logout', 'lockout', 'account_created', 'roles_changed',
                     'password_changed', 'account_disabled', 'session_refused',
                     'signing', 'signing_lockout')),
    account_id   INTEGER REFERENCES accounts (id),
    account_name TEXT NOT NULL,
    actor_id     INTEGER REFERENCES accounts (id),
    remote_addr  TEXT,
    outcome      TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
    detail       TEXT
);
INSERT INTO security_events_v2 SELECT * FROM security_events;
DROP TABLE security_events;
ALTER TABLE security_events_v2 RENAME TO security_events;
CREATE INDEX security_events_by_name ON security_events (account_name COLLATE NOCASE, at);
-- A revision page lists its signing attempts: only those events are read.
CREATE INDEX security_events_by_event ON security_events (event);

CREATE TRIGGER security_events_no_update BEFORE UPDATE ON security_events
BEGIN
    SELECT RAISE(ABORT, 'security_events is append-only');
END;

CREATE TRIGGER security_events_no_delete BEFORE DELETE ON security_events
BEGIN
    SELECT RAISE(ABORT, 'security_events is append-only');
END;

-- Raw SQL must not be able to make a state the evidence does not explain. Every allowed insert
-- and change of a revision or an attempt is listed here, each needing the evidence record that
-- explains it (appended first, in the same transaction); everything else is refused:
--   revisions: inserted as draft or experimental_draft at version 1 with its `created` record;
--              changed only from draft to verified (the promotion, with its `verified` record,
--              checked by migrations 2 and 3); never deleted. Statuses that no code reaches
--              yet (approved) are refused until their issue adds the edge and its record.
--   attempts:  inserted active, with an owner and a lease, at the revision's version, for a
--              draft revision, with its `started` record; ended once, as failed (with its
--              `failed` record and reason) or succeeded (with its `succeeded` record and an
--              accepted bundle); never deleted.
--   uploads and specs are never deleted.

-- The rules below (and those of migration 3) find a row's records by the ids inside them: these
-- indexes make each lookup a search instead of a scan of the whole ledger.
CREATE INDEX evidence_ledger_by_revision
    ON evidence_ledger (json_extract(record, '$.revision_id'), kind);
CREATE INDEX evidence_ledger_by_attempt
    ON evidence_ledger (json_extract(record, '$.attempt_id'), kind);

-- Who runs an attempt (host, pid and the process's start time) and until when it holds it:
-- recovery ends only attempts whose owner is gone or whose lease has expired.
ALTER TABLE attempts ADD COLUMN owner TEXT;
ALTER TABLE attempts ADD COLUMN lease_until TEXT;

CREATE TRIGGER revisions_insert_as_created BEFORE INSERT ON revisions
WHEN NEW.status NOT IN ('draft', 'experimental_draft')
  OR NEW.version IS NOT 1
  OR NEW.pending_image_hash IS NOT NULL
  OR NEW.pending_analytical_hash IS NOT NULL
  OR NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    WHERE e.kind = 'revision_lifecycle'
      AND json_extract(e.record, '$.revision_id') = NEW.id
      AND json_extract(e.record, '$.event') = 'created'
      AND json_extract(e.record, '$.to_status') = NEW.status
      AND json_extract(e.record, '$.version') = 1
      AND json_extract(e.record, '$.spec_hash') = NEW.spec_hash
  )
BEGIN
    SELECT RAISE(ABORT, 'a revision is inserted only as draft or experimental_draft at version 1, after its revision_lifecycle created record');
END;

CREATE TRIGGER revisions_change_only_by_promotion BEFORE UPDATE ON revisions
WHEN NOT (OLD.status = 'draft' AND NEW.status = 'verified')
  OR NEW.id IS NOT OLD.id
  OR NEW.spec_hash IS NOT OLD.spec_hash
  OR NEW.script_hash IS NOT OLD.script_hash
  OR NEW.snapshot_id IS NOT OLD.snapshot_id
  OR NEW.snapshot_hash IS NOT OLD.snapshot_hash
  OR NEW.request_hash IS NOT OLD.request_hash
  OR NEW.created_at IS NOT OLD.created_at
  OR NEW.inputs IS NOT OLD.inputs
  OR NOT EXISTS (
    SELECT 1 FROM artifact_bundles b
    WHERE b.revision_id = NEW.id
      AND b.png_hash = NEW.pending_image_hash
      AND NEW.pending_analytical_hash IS NOT NULL
  )
BEGIN
    SELECT RAISE(ABORT, 'a revision changes only from draft to verified, with its accepted bundle''s hashes and nothing else changed (no other status is reachable yet)');
END;

CREATE TRIGGER revisions_are_never_deleted BEFORE DELETE ON revisions
BEGIN
    SELECT RAISE(ABORT, 'a revision is never deleted');
END;

CREATE TRIGGER attempts_insert_as_started BEFORE INSERT ON attempts
WHEN NEW.state IS NOT 'active'
  OR NEW.reason IS NOT NULL
  OR NEW.ended_at IS NOT NULL
  OR NEW.owner IS NULL
  OR NEW.lease_until IS NULL
  OR NOT EXISTS (
    SELECT 1 FROM revisions r
    WHERE r.id = NEW.revision_id AND r.status = 'draft' AND r.version = NEW.captured_version
  )
  OR NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    WHERE e.kind = 'execution_attempt'
      AND json_extract(e.record, '$.attempt_id') = NEW.id
      AND json_extract(e.record, '$.revision_id') = NEW.revision_id
      AND json_extract(e.record, '$.event') = 'started'
      AND json_extract(e.record, '$.fingerprint') = NEW.fingerprint
      AND json_extract(e.record, '$.captured_version') = NEW.captured_version
  )
BEGIN
    SELECT RAISE(ABORT, 'an attempt is inserted only active, with an owner and a lease, at its draft revision''s version, after its execution_attempt started record');
END;

CREATE TRIGGER attempts_end_only_with_their_record BEFORE UPDATE ON attempts
WHEN NEW.id IS NOT OLD.id
  OR NEW.revision_id IS NOT OLD.revision_id
  OR NEW.fingerprint IS NOT OLD.fingerprint
  OR NEW.captured_version IS NOT OLD.captured_version
  OR NEW.started_at IS NOT OLD.started_at
  OR NEW.owner IS NOT OLD.owner
  OR NEW.lease_until IS NOT OLD.lease_until
  OR NOT (
    (NEW.state = 'failed' AND NEW.reason IS NOT NULL AND NEW.ended_at IS NOT NULL
      AND EXISTS (
        SELECT 1 FROM evidence_ledger e
        WHERE e.kind = 'execution_attempt'
          AND json_extract(e.record, '$.attempt_id') = NEW.id
          AND json_extract(e.record, '$.event') = 'failed'
          AND json_extract(e.record, '$.reason') = NEW.reason
      ))
    OR (NEW.state = 'succeeded' AND NEW.reason IS NULL AND NEW.ended_at IS NOT NULL
      AND EXISTS (
        SELECT 1 FROM evidence_ledger e
        WHERE e.kind = 'execution_attempt'
          AND json_extract(e.record, '$.attempt_id') = NEW.id
          AND json_extract(e.record, '$.event') = 'succeeded'
      ))
  )
BEGIN
    SELECT RAISE(ABORT, 'an attempt ends once, as failed or succeeded, after its execution_attempt record, and nothing else of it changes');
END;

CREATE TRIGGER attempts_are_never_deleted BEFORE DELETE ON attempts
BEGIN
    SELECT RAISE(ABORT, 'an attempt is never deleted');
END;

CREATE TRIGGER uploads_are_never_deleted BEFORE DELETE ON uploads
BEGIN
    SELECT RAISE(ABORT, 'an upload is never deleted');
END;

CREATE TRIGGER specs_are_never_deleted BEFORE DELETE ON specs
BEGIN
    SELECT RAISE(ABORT, 'a confirmed spec is never deleted');
END;

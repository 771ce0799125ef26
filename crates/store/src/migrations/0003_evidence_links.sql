-- Every row change of the governed path now has its evidence record in the same transaction,
-- and the database checks that the rows and the records agree: a bundle row must name its
-- artifact_bundle record (same revision, attempt, verification and artifacts, and the
-- revision's own script and snapshot), a succeeded attempt must have an accepted bundle, and a
-- promotion to verified must have its revision_lifecycle record naming that bundle.

-- Source metadata and profile warnings (JSON), set when the revision is created; the
-- revision_context record repeats them.
ALTER TABLE revisions ADD COLUMN inputs BLOB;

ALTER TABLE artifact_bundles ADD COLUMN environment_hash TEXT;
ALTER TABLE artifact_bundles ADD COLUMN record_hash TEXT REFERENCES evidence_ledger (record_hash);

CREATE TRIGGER artifact_bundles_need_their_record BEFORE INSERT ON artifact_bundles
WHEN NEW.record_hash IS NULL OR NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    WHERE e.record_hash = NEW.record_hash
      AND e.kind = 'artifact_bundle'
      AND json_extract(e.record, '$.revision_id') = NEW.revision_id
      AND json_extract(e.record, '$.attempt_id') = NEW.attempt_id
      AND json_extract(e.record, '$.verification_hash') = NEW.verification_hash
      AND json_extract(e.record, '$.artifacts.script.sha256') = NEW.script_hash
      AND json_extract(e.record, '$.artifacts.plot.sha256') = NEW.png_hash
      AND json_extract(e.record, '$.artifacts.statistics.sha256') = NEW.statistics_hash
      AND json_extract(e.record, '$.artifacts.environment.sha256') = NEW.environment_hash
      AND json_extract(e.record, '$.artifacts.snapshot.sha256') = NEW.snapshot_id
) OR NOT EXISTS (
    SELECT 1 FROM revisions r
    WHERE r.id = NEW.revision_id
      AND r.script_hash = NEW.script_hash
      AND r.snapshot_id = NEW.snapshot_id
)
BEGIN
    SELECT RAISE(ABORT, 'an artifact bundle needs its artifact_bundle evidence record naming the same revision, attempt, verification and artifacts, and the revision''s own script and snapshot');
END;

CREATE TRIGGER attempts_succeeded_needs_bundle BEFORE UPDATE OF state ON attempts
WHEN NEW.state = 'succeeded'
 AND NOT EXISTS (SELECT 1 FROM artifact_bundles b WHERE b.attempt_id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'an attempt succeeds only with an accepted artifact bundle');
END;

CREATE TRIGGER revisions_verified_needs_lifecycle BEFORE UPDATE OF status ON revisions
WHEN NEW.status = 'verified' AND OLD.status <> 'verified' AND NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    JOIN artifact_bundles b ON b.revision_id = NEW.id
    WHERE e.kind = 'revision_lifecycle'
      AND json_extract(e.record, '$.revision_id') = NEW.id
      AND json_extract(e.record, '$.event') = 'verified'
      AND json_extract(e.record, '$.version') = NEW.version
      AND json_extract(e.record, '$.bundle_hash') = b.record_hash
)
BEGIN
    SELECT RAISE(ABORT, 'a revision becomes verified only with its revision_lifecycle evidence naming the accepted bundle');
END;

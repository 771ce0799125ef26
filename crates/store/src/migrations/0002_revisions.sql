-- Uploads, confirmed specs, revisions, execution attempts and accepted artifact bundles.
-- The rules that make a Verified revision trustworthy are enforced here, in the database,
-- not only by the service: see the triggers.

CREATE TABLE uploads (
    content_hash   TEXT PRIMARY KEY CHECK (length(content_hash) = 64),
    classification TEXT NOT NULL CHECK (classification IN ('synthetic', 'deidentified')),
    file_name      TEXT NOT NULL,
    size           INTEGER NOT NULL CHECK (size >= 0),
    stored_at      TEXT NOT NULL
);

CREATE TABLE specs (
    spec_hash    TEXT PRIMARY KEY CHECK (length(spec_hash) = 64),
    content_hash TEXT NOT NULL REFERENCES uploads (content_hash),
    spec         BLOB NOT NULL,
    confirmed_at TEXT NOT NULL
);

CREATE TABLE revisions (
    id                      TEXT PRIMARY KEY CHECK (id GLOB 'rev-*' AND length(id) = 36),
    spec_hash               TEXT NOT NULL REFERENCES specs (spec_hash),
    status                  TEXT NOT NULL
                            CHECK (status IN ('draft', 'experimental_draft', 'verified', 'approved')),
    version                 INTEGER NOT NULL DEFAULT 1,
    script_hash             TEXT NOT NULL CHECK (length(script_hash) = 64),
    snapshot_id             TEXT NOT NULL CHECK (length(snapshot_id) = 64),
    snapshot_hash           TEXT NOT NULL CHECK (length(snapshot_hash) = 64),
    request_hash            TEXT REFERENCES evidence_ledger (record_hash),
    pending_image_hash      TEXT,
    pending_analytical_hash TEXT,
    created_at              TEXT NOT NULL
);

CREATE TABLE attempts (
    id               TEXT PRIMARY KEY CHECK (id GLOB 'att-*' AND length(id) = 36),
    revision_id      TEXT NOT NULL REFERENCES revisions (id),
    fingerprint      TEXT NOT NULL CHECK (length(fingerprint) = 64),
    captured_version INTEGER NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('active', 'succeeded', 'failed')),
    reason           TEXT,
    started_at       TEXT NOT NULL,
    ended_at         TEXT
);

-- At most one active attempt per revision.
CREATE UNIQUE INDEX attempts_one_active_per_revision ON attempts (revision_id)
    WHERE state = 'active';

CREATE TABLE artifact_bundles (
    revision_id       TEXT PRIMARY KEY REFERENCES revisions (id),
    attempt_id        TEXT NOT NULL UNIQUE REFERENCES attempts (id),
    script_hash       TEXT NOT NULL,
    png_hash          TEXT NOT NULL,
    statistics_hash   TEXT NOT NULL,
    snapshot_id       TEXT NOT NULL,
    verification_hash TEXT NOT NULL REFERENCES evidence_ledger (record_hash),
    accepted_at       TEXT NOT NULL
);

-- A terminal attempt stays as it ended.
CREATE TRIGGER attempts_terminal_is_final BEFORE UPDATE ON attempts
WHEN OLD.state <> 'active'
BEGIN
    SELECT RAISE(ABORT, 'a terminal attempt cannot change');
END;

-- An accepted bundle is bound once: never changed, never removed.
CREATE TRIGGER artifact_bundles_refuse_update BEFORE UPDATE ON artifact_bundles
BEGIN
    SELECT RAISE(ABORT, 'an accepted artifact bundle cannot change');
END;
CREATE TRIGGER artifact_bundles_refuse_delete BEFORE DELETE ON artifact_bundles
BEGIN
    SELECT RAISE(ABORT, 'an accepted artifact bundle cannot be removed');
END;

-- A bundle is accepted only for a succeeded-to-be attempt of its revision, with passing
-- verification evidence about that revision and attempt.
CREATE TRIGGER artifact_bundles_need_passing_verification BEFORE INSERT ON artifact_bundles
WHEN NOT EXISTS (
    SELECT 1 FROM attempts a WHERE a.id = NEW.attempt_id AND a.revision_id = NEW.revision_id
) OR NOT EXISTS (
    SELECT 1 FROM evidence_ledger e
    WHERE e.record_hash = NEW.verification_hash
      AND e.kind = 'execution_verification'
      AND json_extract(e.record, '$.passed') = 1
      AND json_extract(e.record, '$.revision_id') = NEW.revision_id
      AND json_extract(e.record, '$.attempt_id') = NEW.attempt_id
)
BEGIN
    SELECT RAISE(ABORT, 'an artifact bundle needs passing verification evidence for its revision and attempt');
END;

-- Every change of a revision moves its version on by exactly one.
CREATE TRIGGER revisions_version_moves_by_one BEFORE UPDATE ON revisions
WHEN NEW.version <> OLD.version + 1
BEGIN
    SELECT RAISE(ABORT, 'a revision change must move its version on by one');
END;

-- Verified only from Draft (never from Experimental/Draft), with an accepted bundle.
CREATE TRIGGER revisions_verified_needs_evidence BEFORE UPDATE OF status ON revisions
WHEN NEW.status = 'verified' AND OLD.status <> 'verified' AND (
    OLD.status <> 'draft'
    OR NOT EXISTS (SELECT 1 FROM artifact_bundles b WHERE b.revision_id = NEW.id)
)
BEGIN
    SELECT RAISE(ABORT, 'a revision becomes verified only from draft, with an accepted artifact bundle and passing verification evidence');
END;

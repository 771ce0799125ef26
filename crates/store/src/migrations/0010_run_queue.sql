-- The durable run queue. Pressing Run (web or command line) is a row here, written in the
-- transaction that answers the person who pressed it, with the idempotency key and who asked.
-- Runners (the server's own, or `adamviz worker` processes elsewhere) claim the oldest queued row
-- with a lease they renew while the run lasts; a row whose runner is lost (its process gone, or
-- its lease expired) goes back to the queue, up to `max_claims` claims. Each claim is an
-- attempt of its own in the evidence, so a lost runner's attempt ends failed and the next
-- claim starts a new one.

CREATE TABLE run_queue (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    revision_id     TEXT NOT NULL REFERENCES revisions (id),
    idempotency_key TEXT NOT NULL,
    requested_by    TEXT NOT NULL,
    requested_at    TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('queued', 'claimed', 'done')),
    claims          INTEGER NOT NULL DEFAULT 0 CHECK (claims >= 0 AND claims <= max_claims),
    max_claims      INTEGER NOT NULL CHECK (max_claims >= 1),
    -- The attempt of the current (or last) claim.
    attempt_id      TEXT NOT NULL CHECK (attempt_id GLOB 'att-*' AND length(attempt_id) = 36),
    -- Who holds the claim: the process (host/pid/start-ticks, see `store::owner`) and its runner.
    runner          TEXT,
    runner_slot     INTEGER,
    phase           TEXT CHECK (phase IN ('preparing', 'running', 'verifying')),
    claimed_at      TEXT,
    lease_until     TEXT,
    -- After a lost runner: why the row went back to the queue.
    requeued_because TEXT,
    ended_at        TEXT,
    outcome         TEXT,
    UNIQUE (revision_id, idempotency_key),
    CHECK (state <> 'claimed' OR (runner IS NOT NULL AND lease_until IS NOT NULL AND phase IS NOT NULL)),
    CHECK ((state = 'done') = (ended_at IS NOT NULL AND outcome IS NOT NULL))
);

-- One open request per revision: a second Run joins the one queued or running.
CREATE UNIQUE INDEX run_queue_one_open_per_revision ON run_queue (revision_id)
    WHERE state <> 'done';

-- Claiming takes the oldest queued row; the position is counted over the queued rows.
CREATE INDEX run_queue_queued ON run_queue (seq) WHERE state = 'queued';

-- A finished request stays as it ended.
CREATE TRIGGER run_queue_done_is_final BEFORE UPDATE ON run_queue
WHEN OLD.state = 'done'
BEGIN
    SELECT RAISE(ABORT, 'a finished run request cannot change');
END;

CREATE TRIGGER run_queue_refuse_delete BEFORE DELETE ON run_queue
BEGIN
    SELECT RAISE(ABORT, 'run requests are never deleted');
END;

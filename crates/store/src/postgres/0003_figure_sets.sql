-- Figure sets: one figure per parameter, confirmed together (see SQLite migration 0012).
CREATE TABLE figure_sets (
    id              TEXT PRIMARY KEY CHECK (id LIKE 'set-%' AND length(id) = 36),
    dataset_hash    TEXT NOT NULL CHECK (length(dataset_hash) = 64),
    question        TEXT NOT NULL,
    shared_answers  TEXT NOT NULL,
    created_by      BIGINT REFERENCES accounts (id),
    created_by_name TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    revises         TEXT REFERENCES figure_sets (id)
);

CREATE TABLE figure_set_members (
    set_id      TEXT NOT NULL REFERENCES figure_sets (id),
    position    INTEGER NOT NULL CHECK (position >= 0),
    parameter   TEXT NOT NULL,
    revision_id TEXT NOT NULL REFERENCES revisions (id),
    PRIMARY KEY (set_id, position),
    UNIQUE (set_id, parameter)
);

CREATE INDEX figure_set_members_by_revision ON figure_set_members (revision_id);

CREATE TRIGGER figure_sets_never_changed BEFORE UPDATE ON figure_sets
    FOR EACH ROW EXECUTE FUNCTION adamviz_refuse('a figure set is never changed');
CREATE TRIGGER figure_sets_never_deleted BEFORE DELETE ON figure_sets
    FOR EACH ROW EXECUTE FUNCTION adamviz_refuse('a figure set is never deleted');
CREATE TRIGGER figure_set_members_never_changed BEFORE UPDATE ON figure_set_members
    FOR EACH ROW EXECUTE FUNCTION adamviz_refuse('a figure set''s member is never changed');
CREATE TRIGGER figure_set_members_never_deleted BEFORE DELETE ON figure_set_members
    FOR EACH ROW EXECUTE FUNCTION adamviz_refuse('a figure set''s member is never deleted');

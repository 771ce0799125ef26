-- Datasets uploaded through the web (and the demo dataset): one row per distinct content, with
-- what the reader found and who uploaded it first. The raw bytes are the object named by the
-- content hash. Rows are never changed or deleted.

CREATE TABLE datasets (
    content_hash     TEXT PRIMARY KEY CHECK (length(content_hash) = 64),
    file_name        TEXT NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    format           TEXT NOT NULL CHECK (format IN ('csv', 'xpt')),
    classification   TEXT NOT NULL CHECK (classification IN ('synthetic', 'deidentified')),
    row_count        INTEGER NOT NULL CHECK (row_count >= 0),
    column_count     INTEGER NOT NULL CHECK (column_count >= 0),
    dataset_name     TEXT,
    size             INTEGER NOT NULL CHECK (size >= 0),
    uploaded_by      INTEGER REFERENCES accounts (id),
    uploaded_by_name TEXT NOT NULL,
    uploaded_at      TEXT NOT NULL
);

CREATE TRIGGER datasets_never_changed BEFORE UPDATE ON datasets
BEGIN
    SELECT RAISE(ABORT, 'a dataset row is never changed');
END;

CREATE TRIGGER datasets_never_deleted BEFORE DELETE ON datasets
BEGIN
    SELECT RAISE(ABORT, 'a dataset row is never deleted');
END;

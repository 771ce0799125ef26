-- Datasets may also be read from CDISC Dataset-JSON v1.1 (`dataset_json`). SQLite cannot change
-- a CHECK constraint in place, so the table is rebuilt with every row copied as it was; dropping
-- the old table drops its two triggers (DROP TABLE fires no DELETE trigger), which are created
-- again unchanged. Nothing references datasets by foreign key.

CREATE TABLE datasets_with_dataset_json (
    content_hash     TEXT PRIMARY KEY CHECK (length(content_hash) = 64),
    file_name        TEXT NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    format           TEXT NOT NULL CHECK (format IN ('csv', 'xpt', 'dataset_json')),
    classification   TEXT NOT NULL CHECK (classification IN ('synthetic', 'deidentified')),
    row_count        INTEGER NOT NULL CHECK (row_count >= 0),
    column_count     INTEGER NOT NULL CHECK (column_count >= 0),
    dataset_name     TEXT,
    size             INTEGER NOT NULL CHECK (size >= 0),
    uploaded_by      INTEGER REFERENCES accounts (id),
    uploaded_by_name TEXT NOT NULL,
    uploaded_at      TEXT NOT NULL
);

INSERT INTO datasets_with_dataset_json
    SELECT content_hash, file_name, format, classification, row_count, column_count,
           dataset_name, size, uploaded_by, uploaded_by_name, uploaded_at
    FROM datasets;

DROP TABLE datasets;

ALTER TABLE datasets_with_dataset_json RENAME TO datasets;

CREATE TRIGGER datasets_never_changed BEFORE UPDATE ON datasets
BEGIN
    SELECT RAISE(ABORT, 'a dataset row is never changed');
END;

CREATE TRIGGER datasets_never_deleted BEFORE DELETE ON datasets
BEGIN
    SELECT RAISE(ABORT, 'a dataset row is never deleted');
END;

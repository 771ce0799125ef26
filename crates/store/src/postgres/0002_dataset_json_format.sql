-- Datasets may also be read from CDISC Dataset-JSON v1.1 (`dataset_json`).
ALTER TABLE datasets DROP CONSTRAINT datasets_format_check;
ALTER TABLE datasets ADD CONSTRAINT datasets_format_check
    CHECK (format IN ('csv', 'xpt', 'dataset_json'));

//! Check 2: every record and schema file against its schema (and the schemas' identity constants).

use super::*;

impl Validation {
    pub(super) fn check_schemas(&mut self, archive: &Archive, manifest: &Manifest) -> Records {
        let before = self.failures.len();
        self.check_schema_files(archive, manifest);
        let records = self.read_records(archive, manifest);
        self.close(
            2,
            before,
            Code::Schema,
            format!(
                "{} records, {} schema files",
                manifest.records.len(),
                manifest.schemas.len()
            ),
        );
        records
    }

    /// Each schema file listed is one this build compiled in, byte for byte.
    fn check_schema_files(&mut self, archive: &Archive, manifest: &Manifest) {
        for schema in &manifest.schemas {
            let known = ALL_SCHEMAS
                .iter()
                .find(|s| format!("schemas/{}", s.file) == schema.path);
            let Some(known) = known else {
                self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    "a schema this build does not know".to_owned(),
                );
                continue;
            };
            match archive.files.get(&schema.path) {
                Some(entry)
                    if entry.sha256 == known.raw_sha256
                        && schema.raw_sha256 == known.raw_sha256
                        && schema.canonical_sha256 == known.canonical_sha256 => {}
                Some(_) => self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    format!(
                        "differs from the compiled-in schema (raw SHA-256 {})",
                        known.raw_sha256
                    ),
                ),
                None => self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    "listed but absent".to_owned(),
                ),
            }
        }
    }

    /// Each record listed, read as JSON, of the kind the manifest says and valid against its
    /// schema; the records that could be read, in manifest order.
    fn read_records(&mut self, archive: &Archive, manifest: &Manifest) -> Records {
        let mut records = Vec::new();
        for (index, entry) in manifest.records.iter().enumerate() {
            let number = Some(index + 1);
            let Some(bytes) = archive.bytes(&entry.path) else {
                self.failure(
                    Code::Schema,
                    number,
                    &entry.path,
                    "listed but absent".to_owned(),
                );
                continue;
            };
            let value: serde_json::Value = match serde_json::from_slice(bytes) {
                Ok(value) => value,
                Err(e) => {
                    self.failure(Code::Schema, number, "$", format!("not JSON: {e}"));
                    continue;
                }
            };
            if value["kind"] != entry.kind.as_str() {
                self.failure(
                    Code::Schema,
                    number,
                    "$.kind",
                    format!(
                        "{} in the record, {} in the manifest",
                        value["kind"], entry.kind
                    ),
                );
            }
            if let Err(e) = check_schema_and_type_of(&entry.kind, &value) {
                self.failure(Code::Schema, number, "$", e.to_string());
            }
            records.push((entry.kind.clone(), value));
        }
        records
    }
}

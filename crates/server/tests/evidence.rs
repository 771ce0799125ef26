//! Evidence records: schema identities, sealing, and a table of named attacks on a sealed
//! record, each refused with its exact error.

use adamviz_engine::compiler::ImageSize;
use adamviz_evidence::{
    execution_request::ExecutionRequest,
    record::{seal, EvidenceError, Unverified},
    schemas::{
        check_schema_identities, SchemaFile, SchemaIdentityError, EXECUTION_REQUEST_V1,
        EXECUTION_REQUEST_V2, EXECUTION_REQUEST_V3, EXECUTION_REQUEST_V4, EXECUTION_REQUEST_V5,
    },
};
use adamviz_model::digest::Sha256Digest;
use serde_json::{json, Value};

fn digest(byte: u8) -> Sha256Digest {
    Sha256Digest::from_bytes([byte; 32])
}

fn request() -> ExecutionRequest {
    ExecutionRequest::new(
        adamviz_model::ids::RevisionId::parse(&format!("rev-{}", "0123456789abcdef".repeat(2)))
            .unwrap(),
        digest(1),
        digest(2),
        digest(3),
        digest(4),
        ImageSize::default(),
        adamviz_engine::compiler::report_text::ReportText {
            title: "a title".to_owned(),
            footnotes: vec!["a footnote".to_owned()],
        },
        "2026-12-03T08:30:00.000000Z".to_owned(),
        adamviz_evidence::actor::Actor::command_line(),
        adamviz_services::provenance::this_build(),
    )
}

#[test]
fn the_compiled_in_schema_identities_hold() {
    check_schema_identities().unwrap();
}

#[test]
fn a_changed_schema_file_is_refused_by_its_identity() {
    let original = &EXECUTION_REQUEST_V1;
    let edited = SchemaFile::new(
        original.file,
        Box::leak(
            original
                .raw
                .replace("version 1", "version 1 ")
                .into_boxed_str(),
        ),
        original.raw_sha256,
        original.canonical_sha256,
    );
    assert!(matches!(
        edited.check_identity(),
        Err(SchemaIdentityError::RawChanged { .. })
    ));
    // Reformatted only: the raw hash changes, the canonical one would not; both are checked.
    let reformatted = SchemaFile::new(
        original.file,
        Box::leak(original.raw.replace("  ", "    ").into_boxed_str()),
        "0000000000000000000000000000000000000000000000000000000000000000",
        original.canonical_sha256,
    );
    assert!(matches!(
        reformatted.check_identity(),
        Err(SchemaIdentityError::RawChanged { .. })
    ));
}

#[test]
fn a_sealed_record_reads_back_verified_from_its_bytes() {
    let previous = digest(9);
    let sealed = seal(request(), previous).unwrap();
    assert_eq!(sealed.record().previous_hash, previous);
    let again = Unverified::<ExecutionRequest>::parse(sealed.canonical())
        .unwrap()
        .verify(&previous)
        .unwrap();
    assert_eq!(again, sealed);
    // The self-hash is the SHA-256 of the canonical form without record_hash.
    let mut value: Value = serde_json::from_slice(sealed.canonical()).unwrap();
    value.as_object_mut().unwrap().remove("record_hash");
    let expected = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        serde_jcs::to_vec(&value).unwrap(),
    ));
    assert_eq!(sealed.record_hash().to_hex(), expected);
}

#[test]
fn a_record_that_breaks_its_schema_is_never_sealed() {
    let mut bad = request();
    // (A malformed revision id can no longer be built at all: `RevisionId` parses.)
    bad.compiler_version = "boxplot-script-v0".to_owned();
    match seal(bad, digest(0)) {
        Err(EvidenceError::Schema { violations, .. }) => {
            assert!(
                violations
                    .iter()
                    .any(|v| v.starts_with("/compiler_version")),
                "{violations:?}"
            )
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
}

/// Named attacks on the bytes of a sealed record and the error each must get.
#[test]
fn attacks_on_a_sealed_record_are_refused_with_their_exact_error() {
    let previous = digest(9);
    let sealed = seal(request(), previous).unwrap();
    let original: Value = serde_json::from_slice(sealed.canonical()).unwrap();
    let edit = |change: &dyn Fn(&mut Value)| {
        let mut value = original.clone();
        change(&mut value);
        serde_jcs::to_vec(&value).unwrap()
    };
    type Check = fn(&EvidenceError) -> bool;
    let attacks: Vec<(&str, Vec<u8>, Sha256Digest, Check)> = vec![
        (
            "change the script hash",
            edit(&|v| v["script_hash"] = json!("ee".repeat(32))),
            previous,
            |e| matches!(e, EvidenceError::SelfHash { .. }),
        ),
        (
            "add an unknown field",
            edit(&|v| v["approved"] = json!(true)),
            previous,
            |e| matches!(e, EvidenceError::Schema { violations, .. } if violations.iter().any(|v| v.contains("approved"))),
        ),
        (
            "drop a required field",
            edit(&|v| {
                v.as_object_mut().unwrap().remove("snapshot_hash");
            }),
            previous,
            |e| matches!(e, EvidenceError::Schema { violations, .. } if violations.iter().any(|v| v.contains("snapshot_hash"))),
        ),
        (
            "uppercase hex",
            edit(&|v| v["spec_hash"] = json!("AB".repeat(32))),
            previous,
            |e| matches!(e, EvidenceError::Schema { violations, .. } if violations.iter().any(|v| v.starts_with("/spec_hash"))),
        ),
        (
            "a local timestamp",
            edit(&|v| v["requested_at"] = json!("2026-12-03T09:30:00+01:00")),
            previous,
            |e| matches!(e, EvidenceError::Schema { violations, .. } if violations.iter().any(|v| v.starts_with("/requested_at"))),
        ),
        (
            "pretty-printed bytes",
            serde_json::to_vec_pretty(&original).unwrap(),
            previous,
            |e| matches!(e, EvidenceError::NotCanonical { .. }),
        ),
        (
            "replayed after another predecessor",
            sealed.canonical().to_vec(),
            digest(8),
            |e| matches!(e, EvidenceError::Chain { .. }),
        ),
        ("not JSON", b"{\"kind\":".to_vec(), previous, |e| {
            matches!(e, EvidenceError::Json(_))
        }),
    ];
    for (name, bytes, expected_previous, check) in attacks {
        let outcome = Unverified::<ExecutionRequest>::parse(&bytes)
            .and_then(|unverified| unverified.verify(&expected_previous));
        match outcome {
            Ok(_) => panic!("{name}: accepted"),
            Err(error) => assert!(check(&error), "{name}: wrong error {error}"),
        }
    }
}

/// The schemas are compiled in (`include_str!`), so a schema file changed after the build
/// cannot stop the binary: this test is what catches it. Every constant equals the file now in
/// `schemas/`, byte for byte and by both identities, and every file there is compiled in.
#[test]
fn the_compiled_in_schemas_are_the_files_in_the_schemas_directory() {
    use adamviz_evidence::schemas::ALL_SCHEMAS;
    use sha2::{Digest, Sha256};
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("schemas");
    for schema in ALL_SCHEMAS {
        let on_disk = std::fs::read_to_string(dir.join(schema.file)).unwrap();
        assert!(
            on_disk == schema.raw,
            "{} differs from the compiled-in text",
            schema.file
        );
        assert_eq!(
            hex::encode(Sha256::digest(on_disk.as_bytes())),
            schema.raw_sha256
        );
        let value: Value = serde_json::from_str(&on_disk).unwrap();
        assert_eq!(
            hex::encode(Sha256::digest(serde_jcs::to_vec(&value).unwrap())),
            schema.canonical_sha256,
            "{}",
            schema.file
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".schema.json"))
        .collect();
    files.sort();
    let mut compiled: Vec<String> = ALL_SCHEMAS.iter().map(|s| s.file.to_owned()).collect();
    compiled.sort();
    assert_eq!(files, compiled, "every schema file is compiled in");
}

/// Records of an older version are read with their own schema, never written.
#[test]
fn older_versions_are_read_and_only_the_current_one_is_written() {
    let sealed = seal(request(), digest(0)).unwrap();
    let mut value: Value = serde_json::to_value(sealed.record()).unwrap();
    assert_eq!(value["schema_version"], "execution-request-v5");
    assert_eq!(value["harness_version"], "execution-harness-v3");
    assert_eq!(value["report"]["footnotes"][0], "a footnote");
    assert_eq!(value["actor"]["via"], "command_line");
    let commit = value["adamviz_source"]["commit"].as_str().unwrap();
    assert!(commit == "unknown" || commit.len() == 40, "{commit}");
    // The same record as v4 wrote it (harness v2, no report) validates against v4, as v3
    // wrote it (no source) against v3, as v2 wrote it (no actor) against v2, and as v1
    // against v1. v5 requires the report.
    value.as_object_mut().unwrap().remove("report");
    let violations = adamviz_evidence::schemas::violations(&EXECUTION_REQUEST_V5, &value).unwrap();
    assert!(
        violations.iter().any(|v| v.contains("report")),
        "{violations:?}"
    );
    value["schema_version"] = json!("execution-request-v4");
    value["harness_version"] = json!("execution-harness-v2");
    let violations = adamviz_evidence::schemas::violations(&EXECUTION_REQUEST_V4, &value).unwrap();
    assert_eq!(violations, Vec::<String>::new());
    // The same record as v3 wrote it (no source) validates against v3, as v2 wrote it (no
    // actor) against v2, and as v1 against v1.
    value.as_object_mut().unwrap().remove("adamviz_source");
    value["schema_version"] = json!("execution-request-v3");
    let violations = adamviz_evidence::schemas::violations(&EXECUTION_REQUEST_V3, &value).unwrap();
    assert_eq!(violations, Vec::<String>::new());
    value.as_object_mut().unwrap().remove("actor");
    value["schema_version"] = json!("execution-request-v2");
    let violations = adamviz_evidence::schemas::violations(&EXECUTION_REQUEST_V2, &value).unwrap();
    assert_eq!(violations, Vec::<String>::new());
    value["schema_version"] = json!("execution-request-v1");
    value["harness_version"] = json!("execution-harness-v1");
    let violations = adamviz_evidence::schemas::violations(&EXECUTION_REQUEST_V1, &value).unwrap();
    assert_eq!(violations, Vec::<String>::new());
    // A new record cannot be written in the old version.
    let mut old = request();
    old.schema_version = "execution-request-v1".to_owned();
    old.harness_version = "execution-harness-v1".to_owned();
    let refused = seal(old, digest(0)).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("new records are written as execution-request-v5"),
        "{refused}"
    );
}

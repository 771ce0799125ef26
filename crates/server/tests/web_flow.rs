//! The browser's flow as plain service functions, with real SQLite, real objects and real R:
//! the form's answers applied to a draft (moves, a changed variable, errors beside their
//! questions, the record question of a vital-signs set), the preview's numbers, the draft
//! page's address, and runs from the web — a double start joins one attempt, many revisions
//! started at once queue at the runner's bound and all become Verified, a Verified or
//! Experimental/Draft revision does not run, and the revision page reads everything back.

#[path = "support/bundle_edit.rs"]
mod bundle_edit;
#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/study_shapes.rs"]
mod study_shapes;

use bundle_edit::*;
use flow_server::*;

use std::path::PathBuf;

use adamviz::api::drafts::{apply_move, DraftAddress};
use adamviz_evidence::dsse::Envelope;
use adamviz_model::revision::{RevisionStatus, RunStatus};
use adamviz_services::{
    bundle::{export_bundle, ExportError, Manifest},
    drafts::{answer_draft, answers_of, preview},
    installation_key::InstallationKey,
    revisions::{revision_detail, RevisionSources},
    runs::{start_run, StartRunError},
};

#[test]
fn the_proposals_confirm_and_the_preview_counts_the_subjects_the_verifier_counts() {
    let pilot = pilot();
    let draft = answer_draft(QUESTION, &pilot.profile, &pilot.table, pilot.digest, None).unwrap();
    assert!(draft.errors.is_empty(), "{:?}", draft.errors);
    let spec = draft.confirmed.expect("the pilot's proposals confirm");
    let preview = preview(&spec, &pilot.table).unwrap();
    let panels: Vec<&str> = preview.panels.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        panels,
        ["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"]
    );
    let baseline = |arm: &str| {
        preview
            .panels
            .iter()
            .find(|(t, _)| t == arm)
            .unwrap()
            .1
            .iter()
            .find(|c| c.statistics.visit == "Baseline")
            .unwrap()
            .clone()
    };
    // DESIGN §4: 86/84/82 subjects at baseline.
    assert_eq!(baseline("Placebo").statistics.n_subjects, 86);
    assert_eq!(baseline("Xanomeline High Dose").statistics.n_subjects, 84);
    assert_eq!(baseline("Xanomeline Low Dose").statistics.n_subjects, 82);
    assert_eq!(preview.y_label, "AVAL (U/L)");
    for (_, cells) in &preview.panels {
        for cell in cells {
            let s = &cell.statistics;
            let (Some(min), Some(max), Some(q1), Some(q3)) = (s.min, s.max, s.q1, s.q3) else {
                continue;
            };
            let (low, high) = (cell.whisker_low.unwrap(), cell.whisker_high.unwrap());
            assert!(
                min <= low && low <= q1 && q3 <= high && high <= max,
                "{s:?}"
            );
            let reach = 1.5 * (q3 - q1);
            for outlier in &cell.outliers {
                assert!(*outlier < q1 - reach || *outlier > q3 + reach);
            }
        }
    }
}

#[test]
fn answers_move_levels_follow_a_new_variable_and_errors_name_their_question() {
    let pilot = pilot();
    let mut answers = proposed(pilot);
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose");
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose");
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose"); // already first
    answers.low_n_threshold = Some("60".to_owned());
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&answers),
    )
    .unwrap();
    let spec = draft.confirmed.expect("confirms");
    assert_eq!(
        spec.treatment.levels,
        ["Xanomeline High Dose", "Placebo", "Xanomeline Low Dose"]
    );
    let low_n = preview(&spec, &pilot.table)
        .unwrap()
        .panels
        .iter()
        .flat_map(|(_, cells)| cells)
        .filter(|c| c.statistics.low_n)
        .count();
    assert!(low_n > 0, "a threshold of 60 marks the late visits low N");

    // The treatment variable changes; the levels listed for TRTA are not applied to TRTP.
    let mut changed = proposed(pilot);
    changed.treatment_variable = Some("TRTP".to_owned());
    changed.treatment_levels = vec!["Placebo".to_owned()];
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&changed),
    )
    .unwrap();
    assert!(draft.errors.is_empty(), "{:?}", draft.errors);
    assert_eq!(draft.answers.levels_of.as_deref(), Some("TRTP"));
    assert_eq!(draft.spec.treatment.levels.len(), 3);

    // Errors beside their questions; nothing confirms.
    let mut wrong = proposed(pilot);
    wrong.visits.clear();
    wrong.low_n_threshold = Some("0".to_owned());
    wrong
        .filters
        .insert("SAFFL".to_owned(), vec!["maybe".to_owned()]);
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&wrong),
    )
    .unwrap();
    assert!(draft.confirmed.is_none());
    let about = |id: &str| {
        draft
            .errors
            .iter()
            .filter(|e| e.question == id)
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(about("visits"), ["at least one is needed"]);
    assert_eq!(
        about("low_n_threshold"),
        ["expected a whole number from 1 to 1000"]
    );
    assert!(
        about("filters")[0].contains("\"maybe\" does not occur in column \"SAFFL\""),
        "{:?}",
        draft.errors
    );
}

#[test]
fn the_record_question_of_a_vital_signs_set_is_proposed_and_a_wrong_answer_is_named() {
    let shape = study_shapes::vital_signs();
    let loaded = load(&study_shapes::csv(&shape));
    let question = "systolic blood pressure by visit and arm";
    let draft = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        None,
    )
    .unwrap();
    let asked = draft
        .questions
        .iter()
        .any(|q| q.id == "records_per_subject_visit");
    assert!(
        asked,
        "several records per subject and visit: the question is asked"
    );
    let mut answers = answers_of(&draft.spec);
    answers.records_per_subject_visit = Some("one".to_owned());
    let refused = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        Some(&answers),
    )
    .unwrap();
    assert!(refused.confirmed.is_none());
    assert!(
        refused
            .errors
            .iter()
            .any(|e| e.question == "records_per_subject_visit"
                && e.message.contains("still have several records")),
        "{:?}",
        refused.errors
    );
    answers.records_per_subject_visit = Some("ATPT=AFTER STANDING FOR 1 MINUTE".to_owned());
    let accepted = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        Some(&answers),
    )
    .unwrap();
    assert!(accepted.errors.is_empty(), "{:?}", accepted.errors);
    assert!(accepted.confirmed.is_some());
}

#[test]
fn the_draft_address_holds_the_answers_and_a_move() {
    let answers = proposed(pilot());
    let address = DraftAddress {
        question: "ALT & friends | 100%".to_owned(),
        answers: Some(answers.clone()),
        move_item: Some("visits:down:Baseline".to_owned()),
        parent: Some("rev-0123456789abcdef0123456789abcdef".to_owned()),
        opened: vec!["visits: the new data has no visit \u{201c}Week 26\u{201d}".to_owned()],
    };
    let href = address.href("abc");
    let query = href.split_once('?').unwrap().1;
    assert_eq!(DraftAddress::parse(query), address);
    // As a browser sends a plain form (brackets escaped, spaces as +).
    let sent = "question=ALT+over+time&answers%5Bvisits%5D%5B%5D=Week+2&answers%5Bvisits%5D%5B%5D=Baseline&move=visits%3Aup%3ABaseline";
    let parsed = DraftAddress::parse(sent);
    assert_eq!(parsed.question, "ALT over time");
    let mut moved = parsed.answers.unwrap();
    apply_move(&mut moved, parsed.move_item.as_deref().unwrap());
    assert_eq!(moved.visits, ["Baseline", "Week 2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_from_the_web_join_queue_and_end_verified() {
    let server = server(1);
    let first = server.revision(None).await;
    let second = server.revision(None).await;
    let third = server.revision(None).await;

    // A double click: the same key twice joins one attempt.
    let attempt = start_run(
        &server.run,
        &first,
        "double-click-key",
        server.actor.clone(),
    )
    .await
    .unwrap();
    let again = start_run(
        &server.run,
        &first,
        "double-click-key",
        server.actor.clone(),
    )
    .await
    .unwrap();
    assert_eq!(attempt, again);
    // Two more at once with one runner slot: they queue (positions), none is refused.
    start_run(
        &server.run,
        &second,
        "second-key-0001",
        server.actor.clone(),
    )
    .await
    .unwrap();
    start_run(&server.run, &third, "third-key-00001", server.actor.clone())
        .await
        .unwrap();
    let positions: Vec<RunStatus> = vec![server.status(&second).await, server.status(&third).await];
    assert!(
        positions
            .iter()
            .any(|s| matches!(s, RunStatus::Queued { .. })),
        "with one slot, a later run waits its turn: {positions:?}"
    );
    if let (RunStatus::Queued { position: a, .. }, RunStatus::Queued { position: b, .. }) =
        (&positions[0], &positions[1])
    {
        assert!(a < b, "{positions:?}");
    }
    for id in [&first, &second, &third] {
        assert_eq!(server.settled(id).await, RunStatus::Verified, "{id}");
    }
    // One attempt for the double click.
    let attempts: i64 = server
        .database
        .call({
            let first = first.clone();
            move |c| {
                c.as_sqlite()
                    .unwrap()
                    .query_row(
                        "SELECT count(*) FROM attempts WHERE revision_id = ?1",
                        [first.as_str()],
                        |row| row.get(0),
                    )
                    .map_err(anyhow::Error::from)
            }
        })
        .await
        .unwrap();
    assert_eq!(attempts, 1);

    // A Verified revision does not run again.
    let refused = start_run(
        &server.run,
        &first,
        "another-key-0001",
        server.actor.clone(),
    )
    .await;
    assert!(
        matches!(refused, Err(StartRunError::NotDraft { .. })),
        "{refused:?}"
    );

    // The revision page reads it all back.
    let sources = RevisionSources {
        database: server.database.clone(),
        objects: server.objects.clone(),
        datasets: server.run.datasets.clone(),
    };
    let viewer = adamviz_model::account::Account {
        id: 7,
        name: "ann".to_owned(),
        roles: vec![adamviz_model::account::Role::Author],
        disabled: false,
        created_at: "2026-12-04T00:00:00Z".to_owned(),
        password_change_required: false,
        password_expires_at: None,
        password_set_by_owner_at: Some("2026-12-04T00:00:00Z".to_owned()),
    };
    let detail = revision_detail(&sources, &first, &viewer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.summary.status, RevisionStatus::Verified);
    assert_eq!(detail.summary.author, "ann");
    assert_eq!(detail.summary.question, QUESTION);
    assert_eq!(detail.checks.len(), 11);
    assert!(
        detail.checks.iter().all(|c| c.passed),
        "{:?}",
        detail.checks
    );
    assert!(!detail.can_run);
    assert!(detail.preview.is_none());
    let names: Vec<&str> = detail.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "script.R",
            "snapshot.csv",
            "statistics.json",
            "plot.png",
            "environment.json",
            "plot.pdf",
            "plot.svg",
            "statistics.csv"
        ]
    );
    let placebo = detail
        .statistics
        .iter()
        .find(|c| c.treatment == "Placebo" && c.visit == "Baseline")
        .unwrap();
    assert_eq!(placebo.n_subjects, 86);
    assert!(detail.script.contains("boxplot"));
    assert!(detail.environment.unwrap().contains("ggplot2"));
    let kinds: Vec<&str> = detail.evidence.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"execution_request"));
    assert!(kinds.contains(&"artifact_bundle") && kinds.contains(&"revision_context"));

    // Its evidence bundle: byte-identical for the same ledger state, signed, complete.
    let dir = tempfile::tempdir().unwrap();
    let key = InstallationKey::load_or_create(dir.path()).unwrap();
    let connection = server.database.connection().unwrap();
    let bundle = export_bundle(&connection, &server.objects, &key, &first).unwrap();
    let again = export_bundle(&connection, &server.objects, &key, &first).unwrap();
    assert_eq!(
        bundle, again,
        "the same revision and ledger state give the same bytes"
    );
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bundle)).unwrap();
    let mut read = |name: &str| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut archive.by_name(name).unwrap(), &mut bytes).unwrap();
        bytes
    };
    let manifest_bytes = read("manifest.json");
    let envelope: Envelope = serde_json::from_slice(&read("manifest.dsse.json")).unwrap();
    assert_eq!(
        adamviz_evidence::dsse::verify(&envelope, &key.public_key()).unwrap(),
        manifest_bytes
    );
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(manifest.revision_id, first.to_string());
    assert_eq!(manifest.signing_key.fingerprint, key.fingerprint());
    let record_kinds: Vec<&str> = manifest.records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(record_kinds, kinds);
    for file in manifest.artifacts.iter() {
        let bytes = read(&file.path);
        assert_eq!(
            adamviz_services::bundle::file_hash(&bytes),
            file.sha256,
            "{}",
            file.path
        );
        assert_eq!(bytes.len() as u64, file.size);
    }
    for record in &manifest.records {
        let value: serde_json::Value = serde_json::from_slice(&read(&record.path)).unwrap();
        assert_eq!(value["record_hash"], record.record_hash.as_str());
    }
    assert_eq!(
        manifest.schemas.len(),
        adamviz_evidence::schemas::ALL_SCHEMAS.len()
    );
    assert!(String::from_utf8(read("README.txt"))
        .unwrap()
        .contains("adamviz evidence validate"));
    drop(archive);
    // A Draft revision has no bundle yet.
    let draft = server.revision(None).await;
    assert!(matches!(
        export_bundle(&connection, &server.objects, &key, &draft),
        Err(ExportError::NotVerified(_))
    ));
}

#[tokio::test]
async fn a_free_scale_revision_is_never_executed() {
    let server = server(1);
    let mut answers = proposed(pilot());
    answers.y_scale = Some("free".to_owned());
    let id = server.revision(Some(answers)).await;
    assert_eq!(server.status(&id).await, RunStatus::NotExecutable);
    let refused = start_run(&server.run, &id, "free-scale-key-1", server.actor.clone()).await;
    assert!(
        matches!(&refused, Err(StartRunError::NotDraft { status, .. }) if *status == "Experimental/Draft"),
        "{refused:?}"
    );
    let bad_key = start_run(&server.run, &id, "short", server.actor.clone()).await;
    assert!(matches!(bad_key, Err(StartRunError::BadKey)));
}

#[tokio::test]
async fn a_failed_run_says_why_and_a_retry_is_a_new_attempt() {
    let server = server_with(1, Some("/nonexistent/Rscript"));
    let id = server.revision(None).await;
    let first = start_run(&server.run, &id, "first-try-key-1", server.actor.clone())
        .await
        .unwrap();
    let failed = server.settled(&id).await;
    let RunStatus::Failed { attempt_id, reason } = &failed else {
        panic!("expected a failure: {failed:?}");
    };
    assert_eq!(attempt_id, &first.to_string());
    assert!(!reason.is_empty());
    // The same key names the ended attempt (nothing runs again); a new key is a retry.
    let same = start_run(&server.run, &id, "first-try-key-1", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(same, first);
    assert!(matches!(
        server.settled(&id).await,
        RunStatus::Failed { .. }
    ));
    let retry = start_run(&server.run, &id, "second-try-key-2", server.actor.clone())
        .await
        .unwrap();
    assert_ne!(retry, first);
    let again = server.settled(&id).await;
    assert!(
        matches!(&again, RunStatus::Failed { attempt_id, .. } if *attempt_id == retry.to_string()),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_validates_offline_and_every_tampering_is_caught_by_its_code() {
    use adamviz_evidence::validate::{validate, Code, Options, Verdict};
    let server = server(1);
    let id = server.revision(None).await;
    start_run(&server.run, &id, "tamper-table-key", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&id).await, RunStatus::Verified);
    // A second person approves it and a second run reproduces it: both records travel.
    let rex = {
        let mut connection = server.database.connection().unwrap();
        let rex = adamviz_services::accounts::create_account(
            &mut connection,
            "rex",
            "correct horse battery",
            &[adamviz_model::account::Role::Reviewer],
            adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
            &adamviz_services::accounts::Operator::setup(),
            None,
            adamviz_services::accounts::now(),
        )
        .unwrap();
        adamviz_services::approvals::sign(
            &mut connection,
            &rex,
            &adamviz_services::approvals::SignRequest {
                revision_id: id.clone(),
                decision: adamviz_evidence::approval::Decision::Approved,
                meaning: Some(adamviz_evidence::approval::SignatureMeaning::Approved),
                comment: None,
                password: "correct horse battery".to_owned(),
                evidence_head_seen: None,
                user_name: None,
            },
            None,
            adamviz_services::accounts::now(),
        )
        .unwrap();
        rex
    };
    adamviz_services::reproduction::reproduce(
        &server.run.execution,
        &id,
        &adamviz_evidence::actor::Actor::web(&rex),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = InstallationKey::load_or_create(dir.path()).unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    let forger = InstallationKey::load_or_create(other_dir.path()).unwrap();
    let bundle = {
        let connection = server.database.connection().unwrap();
        export_bundle(&connection, &server.objects, &key, &id).unwrap()
    };
    let pinned = Options {
        trusted_key: Some(key.public_key()),
        ..Options::default()
    };
    let report = validate(&bundle, &pinned);
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.text());
    assert_eq!(report.checks.len(), 12);
    assert_eq!(report.checks[9].outcome, "pass", "{}", report.text());
    assert_eq!(report.signatures.len(), 1);
    assert!(
        report.signatures[0].starts_with("approved by rex (rex) at ")
            && report.signatures[0].ends_with(", meaning: approved"),
        "{:?}",
        report.signatures
    );
    let original = entries(&bundle);
    let manifest: Manifest = serde_json::from_slice(&original[1].1).unwrap();
    let record_path = |kind: &str| {
        manifest
            .records
            .iter()
            .find(|r| r.kind == kind)
            .unwrap()
            .path
            .clone()
    };

    type Attack = Box<dyn Fn(&mut Vec<(String, Vec<u8>)>)>;
    let attacks: Vec<(&str, Attack, Code, String)> = vec![
        (
            "a byte of the PNG flipped",
            Box::new(|e| {
                let png = entry(e, "artifacts/plot.png");
                let at = png.len() / 2;
                png[at] ^= 1;
            }),
            Code::Artifact,
            "artifacts/plot.png".to_owned(),
        ),
        (
            "a record's field edited",
            Box::new({
                let p = record_path("execution_verification");
                move |e| {
                    let r = entry(e, &p);
                    let mut v: serde_json::Value = serde_json::from_slice(r).unwrap();
                    v["verified_at"] = "2030-01-01T00:00:00Z".into();
                    *r = serde_jcs::to_vec(&v).unwrap();
                }
            }),
            Code::SelfHash,
            "$.record_hash".to_owned(),
        ),
        (
            "an edited record re-sealed",
            Box::new({
                let p = record_path("execution_verification");
                move |e| {
                    let r = entry(e, &p);
                    let mut v: serde_json::Value = serde_json::from_slice(r).unwrap();
                    v["verified_at"] = "2030-01-01T00:00:00Z".into();
                    reseal(&mut v);
                    *r = serde_jcs::to_vec(&v).unwrap();
                }
            }),
            Code::SelfHash,
            "$.record_hash".to_owned(),
        ),
        (
            "a record removed",
            Box::new({
                let p = record_path("execution_attempt");
                let forger = forger.clone();
                move |e| {
                    e.retain(|(n, _)| *n != p);
                    resign(e, &forger, |m| m.records.retain(|r| r.path != p));
                }
            }),
            Code::Link,
            "$".to_owned(),
        ),
        (
            "two records swapped",
            Box::new({
                let (a, b) = (
                    record_path("execution_request"),
                    record_path("artifact_bundle"),
                );
                move |e| {
                    let first = entry(e, &a).clone();
                    let second = std::mem::replace(entry(e, &b), first);
                    *entry(e, &a) = second;
                }
            }),
            Code::SelfHash,
            "$.record_hash".to_owned(),
        ),
        (
            "snapshot.csv with one value changed",
            Box::new(|e| {
                let csv = String::from_utf8(entry(e, "artifacts/snapshot.csv").clone()).unwrap();
                let mut lines: Vec<String> = csv.lines().map(str::to_owned).collect();
                let last = lines.len() - 1;
                let mut fields: Vec<String> = lines[last].split(',').map(str::to_owned).collect();
                let v = fields
                    .iter()
                    .rposition(|f| f.parse::<f64>().is_ok())
                    .unwrap();
                fields[v] = "999".to_owned();
                lines[last] = fields.join(",");
                *entry(e, "artifacts/snapshot.csv") = (lines.join("\n") + "\n").into_bytes();
            }),
            Code::Snapshot,
            "$.snapshot_hash".to_owned(),
        ),
        (
            "statistics.json edited consistently with its own hash",
            Box::new({
                let key = key.clone();
                move |e| {
                    let s = entry(e, "artifacts/statistics.json");
                    let mut v: serde_json::Value = serde_json::from_slice(s).unwrap();
                    v["cells"][0]["median"] = serde_json::json!(1234.5);
                    *s = serde_json::to_vec(&v).unwrap();
                    let (hash, size) = (adamviz_services::bundle::file_hash(s), s.len() as u64);
                    resign(e, &key, |m| {
                        let a = m
                            .artifacts
                            .iter_mut()
                            .find(|a| a.path == "artifacts/statistics.json")
                            .unwrap();
                        a.sha256 = hash;
                        a.size = size;
                    });
                }
            }),
            Code::Statistics,
            "artifacts/statistics.json".to_owned(),
        ),
        (
            "script.R with an extra line",
            Box::new(|e| entry(e, "artifacts/script.R").extend_from_slice(b"cat('hello')\n")),
            Code::Provenance,
            "artifacts/script.R".to_owned(),
        ),
        (
            "the manifest's artifact hash changed to match a swapped artifact",
            Box::new({
                let forger = forger.clone();
                move |e| {
                    let png = entry(e, "artifacts/plot.png");
                    png.push(0);
                    let (hash, size) = (adamviz_services::bundle::file_hash(png), png.len() as u64);
                    resign(e, &forger, |m| {
                        let a = m
                            .artifacts
                            .iter_mut()
                            .find(|a| a.path == "artifacts/plot.png")
                            .unwrap();
                        a.sha256 = hash;
                        a.size = size;
                    });
                }
            }),
            Code::Artifact,
            "artifacts/plot.png".to_owned(),
        ),
        (
            "plot.pdf dropped with its manifest line, the manifest re-signed by the installation",
            Box::new({
                let key = key.clone();
                move |e| {
                    e.retain(|(path, _)| path != "artifacts/plot.pdf");
                    resign(e, &key, |m| {
                        m.artifacts.retain(|a| a.path != "artifacts/plot.pdf")
                    });
                }
            }),
            Code::Artifact,
            "artifacts/plot.pdf".to_owned(),
        ),
        (
            "an unknown extra file",
            Box::new(|e| e.push(("artifacts/extra.txt".to_owned(), b"hello".to_vec()))),
            Code::Artifact,
            "artifacts/extra.txt".to_owned(),
        ),
        (
            "a schema file edited",
            Box::new(|e| {
                let (_, bytes) = e
                    .iter_mut()
                    .find(|(n, _)| n.starts_with("schemas/"))
                    .unwrap();
                bytes.extend_from_slice(b" ");
            }),
            Code::Schema,
            "schemas/".to_owned(),
        ),
        (
            "an approval signed by the revision's author (the ledger rewritten, re-signed)",
            Box::new({
                let key = key.clone();
                let p = record_path("approval");
                let author = server.actor.account_id;
                move |e| forge(e, &key, &p, |v| v["signer"]["account_id"] = author.into())
            }),
            Code::Link,
            "$.signer.account_id".to_owned(),
        ),
        (
            "an approval by an account without the reviewer role",
            Box::new({
                let key = key.clone();
                let p = record_path("approval");
                move |e| {
                    forge(e, &key, &p, |v| {
                        v["signer"]["roles"] = serde_json::json!(["author"])
                    })
                }
            }),
            Code::Link,
            "$.signer.roles".to_owned(),
        ),
        (
            "an approval bound to another evidence head",
            Box::new({
                let key = key.clone();
                let p = record_path("approval");
                move |e| {
                    forge(e, &key, &p, |v| {
                        v["evidence_head"] = "ab".repeat(32).into();
                    })
                }
            }),
            Code::Link,
            "$.evidence_head".to_owned(),
        ),
        (
            "a reproduction whose analytical hash differs",
            Box::new({
                let key = key.clone();
                let p = record_path("reproduction");
                move |e| {
                    forge(e, &key, &p, |v| {
                        v["reproduced"]["analytical_hash"] = "cd".repeat(32).into();
                    })
                }
            }),
            Code::Replay,
            "$.reproduced.analytical_hash".to_owned(),
        ),
        (
            "a zip entry with ../ in its name",
            Box::new(|e| e.push(("../escape.txt".to_owned(), b"x".to_vec()))),
            Code::Invocation,
            "$".to_owned(),
        ),
        (
            "a zip bomb",
            Box::new(|e| e.push(("artifacts/bomb.bin".to_owned(), vec![0u8; 50 << 20]))),
            Code::Invocation,
            "$".to_owned(),
        ),
    ];
    for (attack, apply, code, path) in attacks {
        let mut tampered = original.clone();
        apply(&mut tampered);
        let report = validate(&rezip(&tampered), &pinned);
        assert_eq!(report.verdict, Verdict::Fail, "{attack}: {}", report.text());
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.code == code && f.path.starts_with(&path)),
            "{attack}: expected {code:?} at {path}:\n{}",
            report.text()
        );
    }
    // The report-ready outputs are read, not only hashed: a PDF that is not one and a CSV that
    // no longer holds the statistics are named for what they are.
    let mut tampered = original.clone();
    *entry(&mut tampered, "artifacts/plot.pdf") = b"%PDF-1.5\nnot a document\n%%EOF\n".to_vec();
    let csv = entry(&mut tampered, "artifacts/statistics.csv");
    let text = String::from_utf8(csv.clone()).unwrap();
    *csv = text.replacen(",86,", ",87,", 1).into_bytes();
    let report = validate(&rezip(&tampered), &pinned);
    for (path, words) in [
        ("artifacts/plot.pdf", "does not parse"),
        ("artifacts/statistics.csv", "statistics.json has"),
    ] {
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.code == Code::Artifact && f.path == path && f.message.contains(words)),
            "{path}: expected {words:?}:\n{}",
            report.text()
        );
    }
    // The whole bundle rewritten consistently and re-signed with another key: only a pinned key
    // tells it from the real one, so without one the verdict is never PASS.
    let mut forged = original.clone();
    resign(&mut forged, &forger, |m| {
        m.signing_key.public_key = forger.public_hex();
        m.signing_key.fingerprint = forger.fingerprint();
    });
    let forged = rezip(&forged);
    assert_eq!(
        validate(&forged, &Options::default()).verdict,
        Verdict::ConsistentOriginNotProven
    );
    let report = validate(&forged, &pinned);
    assert!(
        report.failures.iter().any(|f| f.code == Code::Signature),
        "{}",
        report.text()
    );
    // The recorded source commit: found in this checkout, not in an empty repository.
    let commit = adamviz_services::provenance::SOURCE_COMMIT;
    if commit != "unknown" {
        let here = Options {
            repository: Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))),
            ..pinned.clone()
        };
        let report = validate(&bundle, &here);
        assert_eq!(report.verdict, Verdict::Pass, "{}", report.text());
        assert_eq!(report.checks[10].outcome, "pass");
        let empty = tempfile::tempdir().unwrap();
        git2::Repository::init(empty.path()).unwrap();
        let elsewhere = Options {
            repository: Some(empty.path().to_path_buf()),
            ..Options::default()
        };
        let report = validate(&bundle, &elsewhere);
        assert!(
            report.failures.iter().any(|f| f.code == Code::Git),
            "{}",
            report.text()
        );
    }
    // The command line: exit 0 PASS under the trusted key (with --replay: the script re-run in
    // the sandbox), 3 without a key, 5 FAIL, 2 bad invocation; --json is canonical JSON with
    // its own digest.
    let file = dir.path().join("bundle.zip");
    std::fs::write(&file, &bundle).unwrap();
    let key_file = dir.path().join("installation-key.pub");
    std::fs::write(&key_file, key.public_hex()).unwrap();
    let key_path = key_file.to_str().unwrap();
    let validate_cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .arg("evidence")
            .arg("validate")
            .args(args)
            .output()
            .unwrap()
    };
    let path = file.to_str().unwrap();
    let passed = validate_cli(&[path, "--replay", "--trusted-key", key_path]);
    let text = String::from_utf8_lossy(&passed.stdout).into_owned();
    assert_eq!(passed.status.code(), Some(0), "{text}");
    assert!(
        text.contains("replay in the sandbox                    pass"),
        "{text}"
    );
    assert!(text.lines().last().unwrap().starts_with("PASS: "), "{text}");
    let json = validate_cli(&[path, "--json", "--trusted-key", key_path]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["verdict"], "PASS");
    assert_eq!(report["report_sha256"].as_str().unwrap().len(), 64);
    let mut tampered = original.clone();
    let png = entry(&mut tampered, "artifacts/plot.png");
    let at = png.len() / 3;
    png[at] ^= 0x80;
    std::fs::write(&file, rezip(&tampered)).unwrap();
    let failed = validate_cli(&[path]);
    let text = String::from_utf8_lossy(&failed.stdout).into_owned();
    assert_eq!(failed.status.code(), Some(5), "{text}");
    assert!(text.contains("FAIL ARTIFACT artifacts/plot.png"), "{text}");
    assert_eq!(
        validate_cli(&["/nonexistent/bundle.zip"]).status.code(),
        Some(2)
    );
}

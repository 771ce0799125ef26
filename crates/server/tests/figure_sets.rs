//! Figure sets against a real installation (SQLite, objects, the sandboxed R runner): every
//! chemistry parameter of the pilot drafted with one set of shared answers, what is open per
//! parameter, a refusal that writes nothing, a set confirmed and run to Verified with Run all,
//! and its figures signed in one signing session (the first signature with the user name), on
//! SQLite and on a real PostgreSQL.

#[path = "support/bundle_edit.rs"]
mod bundle_edit;
#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/postgres.rs"]
mod postgres;

use std::{collections::BTreeMap, sync::Arc};

use adamviz_evidence::approval::{Decision, SignatureMeaning};
use adamviz_model::{
    account::Role,
    dataset::DatasetSummary,
    figure_set::{MemberAnswerMap, MemberAnswers, SetSummary},
    revision::{RevisionStatus, RunStatus},
};
use adamviz_services::{
    accounts::now,
    approvals::{require_user_name, sign, SignError, SignRequest},
    datasets::{DatasetCache, LoadedDataset},
    figure_sets::{
        confirm_set, draft_set, run_all, set_members, stored_set, SetConfirmed, SetRequest,
    },
    revisions::RevisionSources,
};
use adamviz_store::{figure_sets::get_set, repository::list_revisions};
use flow_server::*;

const SET_QUESTION: &str = "every parameter by visit and arm";
const PASSWORD: &str = "correct horse battery";

fn loaded() -> Arc<LoadedDataset> {
    let pilot = pilot();
    Arc::new(LoadedDataset {
        table: Arc::clone(&pilot.table),
        profile: pilot.profile.clone(),
    })
}

fn summary(server: &Server) -> DatasetSummary {
    DatasetSummary {
        content_hash: server.upload.content_hash.to_hex(),
        file_name: "adlbc.xpt".to_owned(),
        format: "xpt".to_owned(),
        classification: "synthetic".to_owned(),
        rows: pilot().profile.row_count as u64,
        columns: 0,
        dataset_name: Some("ADLBC".to_owned()),
        size: server.upload.size,
        uploaded_by: "ann".to_owned(),
        uploaded_at: "2026-12-07T00:00:00Z".to_owned(),
    }
}

/// The form's answers with only `codes` ticked (every other parameter listed and unticked).
fn only(codes: &[&str]) -> MemberAnswerMap {
    pilot()
        .profile
        .parameters
        .iter()
        .map(|p| {
            let ticked = codes.contains(&p.code.as_str());
            let answers = MemberAnswers {
                listed: Some("1".to_owned()),
                include: ticked.then(|| "1".to_owned()),
                ..MemberAnswers::default()
            };
            (p.code.clone(), answers)
        })
        .collect()
}

#[test]
fn every_chemistry_parameter_is_drafted_with_the_shared_answers_and_its_own_unit() {
    let pilot = pilot();
    let drafted = draft_set(
        SET_QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&proposed(pilot)),
        &BTreeMap::new(),
    )
    .unwrap();
    assert!(
        drafted.shared_errors.is_empty(),
        "{:?}",
        drafted.shared_errors
    );
    // 18 measured chemistry parameters and their 18 derived (×ULN) twins; the twins unticked.
    assert_eq!(drafted.members.len(), 36);
    let included: Vec<&str> = drafted
        .members
        .iter()
        .filter(|m| m.included)
        .map(|m| m.code.as_str())
        .collect();
    assert_eq!(included.len(), 18);
    assert!(included.iter().all(|code| !code.starts_with('_')));
    assert_eq!(
        drafted.confirmed.len(),
        18,
        "every chemistry parameter confirms"
    );
    let unit = |code: &str| {
        drafted
            .members
            .iter()
            .find(|m| m.code == code)
            .map(|m| m.unit.clone())
            .unwrap()
    };
    assert_eq!(unit("ALT"), "U/L");
    assert_eq!(unit("SODIUM"), "mmol/L");
    for (code, spec) in &drafted.confirmed {
        assert_eq!(spec.parameter.as_ref().unwrap().value, *code);
        // The shared answers hold for every figure.
        assert_eq!(spec.visit.visits, drafted.confirmed[0].1.visit.visits);
        assert_eq!(
            spec.treatment.levels,
            drafted.confirmed[0].1.treatment.levels
        );
        assert_eq!(spec.filters, drafted.confirmed[0].1.filters);
    }
    let alt = drafted.members.iter().find(|m| m.code == "ALT").unwrap();
    let preview = alt
        .preview
        .as_ref()
        .expect("a ready parameter has its preview");
    assert_eq!(preview.panels.len(), 3);
    // The shared questions are shown once, without the per-parameter ones.
    let asked: Vec<&str> = drafted.shared.iter().map(|s| s.question.as_str()).collect();
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|q| !q.to_lowercase().contains("unit")),
        "{asked:?}"
    );
}

#[test]
fn a_parameter_with_a_wrong_unit_is_open_and_the_others_stay_ready() {
    let pilot = pilot();
    let mut members = only(&["ALT", "AST"]);
    members.get_mut("ALT").unwrap().unit = Some("mg/dL".to_owned());
    let drafted = draft_set(
        SET_QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&proposed(pilot)),
        &members,
    )
    .unwrap();
    let alt = drafted.members.iter().find(|m| m.code == "ALT").unwrap();
    assert_eq!(alt.errors.len(), 1, "{:?}", alt.errors);
    assert_eq!(alt.errors[0].question, "unit");
    assert!(alt.preview.is_none());
    let ready: Vec<&str> = drafted.confirmed.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(ready, ["AST"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_set_is_confirmed_run_and_signed_in_one_signing_session() {
    a_set_is_confirmed_run_and_signed(server(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_a_set_is_confirmed_run_and_signed_in_one_signing_session() {
    let cluster = postgres::Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = adamviz_store::db::Database::open_postgres(&cluster.url()).unwrap();
    let objects = adamviz_store::objects::ObjectStore::open(&data).unwrap();
    a_set_is_confirmed_run_and_signed(server_on(dir, database, objects, 2, None)).await;
}

async fn a_set_is_confirmed_run_and_signed(server: Server) {
    let dataset = summary(&server);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let author = adamviz_evidence::actor::Actor::web(&ann);
    let request = |members: MemberAnswerMap| SetRequest {
        question: SET_QUESTION.to_owned(),
        shared: Some(proposed(pilot())),
        members,
        revises: None,
    };
    let count = |server: &Server| {
        let connection = server.database.connection().unwrap();
        list_revisions(&connection).unwrap().len()
    };

    // A refusal writes nothing: one open parameter holds up the whole set.
    let mut wrong = only(&["ALT", "AST", "BILI"]);
    wrong.get_mut("BILI").unwrap().unit = Some("mg/dL".to_owned());
    let refused = confirm_set(
        &server.run.execution,
        &dataset,
        loaded(),
        request(wrong),
        &author,
        "2026-12-07T10:00:00Z".to_owned(),
    )
    .await
    .unwrap();
    let SetConfirmed::Refused(errors) = refused else {
        panic!("a wrong unit must refuse the set");
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, "BILI");
    assert_eq!(count(&server), 0, "nothing was written");
    let SetConfirmed::Refused(errors) = confirm_set(
        &server.run.execution,
        &dataset,
        loaded(),
        request(only(&[])),
        &author,
        "2026-12-07T10:00:00Z".to_owned(),
    )
    .await
    .unwrap() else {
        panic!("an empty set must be refused");
    };
    assert!(errors[0].1.message.contains("at least one parameter"));

    // Four figures (one of them a derived ×ULN parameter, whose means near zero carry the
    // rounding of values of magnitude 3): four revisions, linked as a set in parameter order.
    let SetConfirmed::Created(set) = confirm_set(
        &server.run.execution,
        &dataset,
        loaded(),
        request(only(&["ALT", "AST", "BILI", "_ALP"])),
        &author,
        "2026-12-07T10:00:00Z".to_owned(),
    )
    .await
    .unwrap() else {
        panic!("four ready parameters confirm");
    };
    assert_eq!(count(&server), 4);
    let stored = stored_set(&server.database, &set.id)
        .await
        .unwrap()
        .unwrap();
    let codes: Vec<&str> = stored.members.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["ALT", "AST", "BILI", "_ALP"]);
    {
        // Written once: the tables refuse a change.
        let connection = server.database.connection().unwrap();
        let changed = adamviz_store::sql::Sql::execute(
            &connection,
            "UPDATE figure_set_members SET parameter = 'CK' WHERE set_id = ?1",
            &[set.id.to_string().into()],
        );
        assert!(changed.unwrap_err().to_string().contains("never changed"));
        assert_eq!(get_set(&connection, &set.id).unwrap().unwrap(), stored);
    }

    // Run all queues each Draft figure once; all four become Verified.
    assert_eq!(
        run_all(&server.run, &stored, "run-all-key", &author)
            .await
            .unwrap(),
        4
    );
    for (_, id) in &stored.members {
        assert_eq!(server.settled(id).await, RunStatus::Verified);
    }
    assert_eq!(
        run_all(&server.run, &stored, "run-all-again", &author)
            .await
            .unwrap(),
        0,
        "nothing left to run"
    );

    // One signing session: the first signature with the user name, the next with the password.
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    assert!(matches!(
        require_user_name(true, None),
        Err(SignError::UserNameMissing)
    ));
    assert!(matches!(require_user_name(false, None), Ok(())));
    let sign_as = |id: &adamviz_model::ids::RevisionId, decision, user_name: Option<&str>| {
        let mut connection = server.database.connection().unwrap();
        sign(
            &mut connection,
            &rex,
            &SignRequest {
                revision_id: id.clone(),
                decision,
                meaning: Some(SignatureMeaning::Approved),
                comment: (decision == Decision::ChangesRequested)
                    .then(|| "Show the screening visit too.".to_owned()),
                password: PASSWORD.to_owned(),
                evidence_head_seen: None,
                user_name: user_name.map(str::to_owned),
            },
            None,
            now(),
        )
    };
    let ids: Vec<_> = stored.members.iter().map(|(_, id)| id.clone()).collect();
    let refused = sign_as(&ids[0], Decision::Approved, Some("ann")).unwrap_err();
    assert!(matches!(refused, SignError::WrongUserName), "{refused:?}");
    let first = sign_as(&ids[0], Decision::Approved, Some("Rex")).unwrap();
    assert_eq!(first.revision.status, RevisionStatus::Approved);
    let second = sign_as(&ids[1], Decision::Approved, None).unwrap();
    assert_eq!(second.revision.status, RevisionStatus::Approved);
    let sent_back = sign_as(&ids[2], Decision::ChangesRequested, None).unwrap();
    assert_eq!(sent_back.revision.status, RevisionStatus::Verified);
    // Each approval binds its own figure's evidence head.
    assert_ne!(first.approval_hash, second.approval_hash);

    let sources = RevisionSources {
        database: server.database.clone(),
        objects: server.objects.clone(),
        datasets: Arc::new(DatasetCache::new(2)),
    };
    let members = set_members(&sources, &stored, &rex).await.unwrap();
    assert_eq!(members.len(), 4);
    let summary = SetSummary::of(&members);
    assert_eq!(
        (summary.approved, summary.sent_back, summary.verified),
        (2, 1, 1)
    );
    assert_eq!(
        summary.describe(),
        "4 figures: 2 approved, 1 verified, waiting for a signature, 1 sent back"
    );
    assert!(members[2]
        .last_decision
        .as_deref()
        .is_some_and(|d| d.starts_with("Changes requested by rex")));

    the_set_bundle_holds_each_figure_and_is_checked_offline(&server, &stored).await;
}

/// The set bundle: each figure's own bundle and the signed set manifest; the validator passes it
/// under the trusted key and names what is wrong when a figure is changed, dropped, swapped for
/// another revision's, or the manifest signed by another key.
async fn the_set_bundle_holds_each_figure_and_is_checked_offline(
    server: &Server,
    set: &adamviz_store::figure_sets::StoredSet,
) {
    use adamviz_evidence::{
        set_bundle::{validate_set, SetManifest, SET_MANIFEST, SET_MANIFEST_PAYLOAD_TYPE},
        validate::{Options, Verdict},
    };
    use adamviz_services::{
        installation_key::InstallationKey, set_bundle::export_set_for_download,
    };
    use bundle_edit::{entries, entry, rezip};
    let key_dir = tempfile::tempdir().unwrap();
    let key = InstallationKey::load_or_create(key_dir.path()).unwrap();
    let bytes = export_set_for_download(&server.database, &server.objects, Some(&key), set)
        .await
        .unwrap();
    let trusted = Options {
        trusted_key: Some(key.public_key()),
        repository: None,
    };
    let report = validate_set(&bytes, &trusted);
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.text());
    assert_eq!(report.figures.len(), 4);
    assert_eq!(report.set_id.as_deref(), Some(set.id.as_str()));
    let statuses: Vec<_> = report
        .figures
        .iter()
        .map(|f| f.report.signatures.len())
        .collect();
    assert_eq!(
        statuses,
        [1, 1, 1, 0],
        "each figure carries its own signature"
    );
    let untrusted = validate_set(&bytes, &Options::default());
    assert_eq!(untrusted.verdict, Verdict::ConsistentOriginNotProven);

    let files = entries(&bytes);
    let figure_paths: Vec<String> = files
        .iter()
        .map(|(name, _)| name.clone())
        .filter(|name| name.starts_with("figures/"))
        .collect();
    assert_eq!(figure_paths.len(), 4);
    assert!(figure_paths[0].contains("-ALT-rev-"), "{figure_paths:?}");

    // One byte of a figure's bundle changed: its hash no longer matches the set manifest.
    let mut changed = files.clone();
    let figure = entry(&mut changed, &figure_paths[1]);
    let at = figure.len() / 2;
    figure[at] ^= 1;
    let report = validate_set(&rezip(&changed), &trusted);
    assert_eq!(report.verdict, Verdict::Fail);
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.contains("AST") && f.contains("hashes to")),
        "{}",
        report.text()
    );

    // A figure dropped from the archive.
    let dropped: Vec<_> = files
        .iter()
        .filter(|(n, _)| *n != figure_paths[2])
        .cloned()
        .collect();
    let report = validate_set(&rezip(&dropped), &trusted);
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.contains("BILI") && f.contains("absent")),
        "{}",
        report.text()
    );

    // ALT's bundle put in AST's place and the manifest re-signed (by the right key, as an
    // insider could): the bundle is of another revision than the set names.
    let mut swapped = files.clone();
    let alt = entry(&mut swapped, &figure_paths[0]).clone();
    *entry(&mut swapped, &figure_paths[1]) = alt.clone();
    let mut manifest: SetManifest =
        serde_json::from_slice(entry(&mut swapped, SET_MANIFEST)).unwrap();
    manifest.figures[1].bundle.sha256 = adamviz_services::bundle::file_hash(&alt);
    manifest.figures[1].bundle.size = alt.len() as u64;
    let manifest_bytes = serde_jcs::to_vec(&manifest).unwrap();
    let envelope = key.sign(SET_MANIFEST_PAYLOAD_TYPE, &manifest_bytes);
    *entry(&mut swapped, SET_MANIFEST) = manifest_bytes;
    *entry(&mut swapped, "set-manifest.dsse.json") = serde_jcs::to_vec(&envelope).unwrap();
    let report = validate_set(&rezip(&swapped), &trusted);
    assert_eq!(report.verdict, Verdict::Fail);
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.contains("the bundle is of revision")),
        "{}",
        report.text()
    );

    // Signed by another key than the trusted one.
    let forger_dir = tempfile::tempdir().unwrap();
    let forger = InstallationKey::load_or_create(forger_dir.path()).unwrap();
    let mut forged = files.clone();
    let mut manifest: SetManifest =
        serde_json::from_slice(entry(&mut forged, SET_MANIFEST)).unwrap();
    manifest.signing_key.public_key = forger.public_hex();
    manifest.signing_key.fingerprint = forger.fingerprint();
    let manifest_bytes = serde_jcs::to_vec(&manifest).unwrap();
    let envelope = forger.sign(SET_MANIFEST_PAYLOAD_TYPE, &manifest_bytes);
    *entry(&mut forged, SET_MANIFEST) = manifest_bytes;
    *entry(&mut forged, "set-manifest.dsse.json") = serde_jcs::to_vec(&envelope).unwrap();
    let report = validate_set(&rezip(&forged), &trusted);
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.contains("not by the trusted key")),
        "{}",
        report.text()
    );
    assert_eq!(
        validate_set(&rezip(&forged), &Options::default()).verdict,
        Verdict::ConsistentOriginNotProven
    );
}

#[test]
fn a_question_that_names_no_parameter_drafts_a_set_from_the_proposals() {
    // From the dataset page: "every parameter …" with no answers yet; the parameter question
    // belongs to each figure, so nothing shared is open.
    let pilot = pilot();
    let drafted = draft_set(
        SET_QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        None,
        &BTreeMap::new(),
    )
    .unwrap();
    assert!(
        drafted.shared_errors.is_empty(),
        "{:?}",
        drafted.shared_errors
    );
    assert_eq!(drafted.members.len(), 36);
    assert_eq!(drafted.confirmed.len(), 18);
    assert_eq!(drafted.shared_answers.parameter, None);
}

/// A laboratory dataset with chemistry and hematology parameters (PARCAT1), as CSV.
fn mixed_lab_csv() -> Vec<u8> {
    let mut lines =
        vec!["USUBJID,SAFFL,TRTA,TRTAN,PARAMCD,PARAM,PARCAT1,AVISIT,AVISITN,AVAL,AVALU".to_owned()];
    let parameters = [
        (
            "ALT",
            "Alanine Aminotransferase (U/L)",
            "CHEMISTRY",
            "U/L",
            30.0,
        ),
        (
            "AST",
            "Aspartate Aminotransferase (U/L)",
            "CHEMISTRY",
            "U/L",
            28.0,
        ),
        ("HGB", "Hemoglobin (g/dL)", "HEMATOLOGY", "g/dL", 13.5),
        ("WBC", "Leukocytes (10^9/L)", "HEMATOLOGY", "10^9/L", 6.5),
    ];
    let arms = ["Placebo", "Low Dose", "High Dose"];
    for (arm_index, arm) in arms.iter().enumerate() {
        for subject in 0..8 {
            for (code, label, category, unit, centre) in parameters {
                for (visit_index, visit) in ["Baseline", "Week 2", "Week 4"].iter().enumerate() {
                    let value = centre + (subject * 3 + visit_index * 2 + arm_index) as f64 / 10.0;
                    lines.push(format!(
                        "S{arm_index}{subject:02},Y,{arm},{arm_index},{code},\"{label}\",{category},{visit},{},{value},{unit}",
                        visit_index * 2
                    ));
                }
            }
        }
    }
    (lines.join("\n") + "\n").into_bytes()
}

#[test]
fn a_question_naming_a_category_ticks_that_category_only() {
    use adamviz_engine::ingest::{profile::profile_table, read_dataset};
    use adamviz_model::{digest::Sha256Digest, profile::DEFAULT_LOW_N_THRESHOLD};
    let bytes = mixed_lab_csv();
    let table = read_dataset(&bytes).unwrap();
    let digest = Sha256Digest::from_bytes(<sha2::Sha256 as sha2::Digest>::digest(&bytes).into());
    let profile = profile_table(&table, digest, DEFAULT_LOW_N_THRESHOLD);
    let ticked = |question: &str| -> Vec<String> {
        let drafted =
            draft_set(question, &profile, &table, digest, None, &BTreeMap::new()).unwrap();
        assert!(
            drafted.shared_errors.is_empty(),
            "{question}: {:?}",
            drafted.shared_errors
        );
        let chemistry = drafted.members.iter().find(|m| m.code == "ALT").unwrap();
        assert_eq!(chemistry.category.as_deref(), Some("CHEMISTRY"));
        drafted
            .members
            .iter()
            .filter(|m| m.included)
            .map(|m| m.code.clone())
            .collect()
    };
    assert_eq!(
        ticked("all chemistry parameters by visit and arm"),
        ["ALT", "AST"]
    );
    assert_eq!(ticked("Hematology parameters over time"), ["HGB", "WBC"]);
    assert_eq!(
        ticked("every parameter by visit and arm"),
        ["ALT", "AST", "HGB", "WBC"]
    );
}

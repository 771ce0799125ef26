//! A figure set's evidence bundle: each figure's own evidence bundle, unchanged, under
//! `figures/`, and a set manifest (`set-manifest.json`: the set, and per figure its parameter,
//! revision, status, evidence head and the bundle's SHA-256) signed with the installation's key
//! in a DSSE envelope (`set-manifest.dsse.json`). The web crate writes it ([`build`]);
//! [`validate_set`] checks the set manifest's signature, that it names exactly the figures the
//! archive holds with the bytes it holds, and each figure's bundle with the bundle validator,
//! whose figure must be the one the set names, at the evidence head it names.

use std::io::{Cursor, Read, Write};

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bundle_format::{Manifest, ManifestFile, ManifestKey};
use crate::dsse::{self, Envelope};
use crate::validate::{self, Options, Report, Verdict};

/// The set bundle format this build writes.
pub const SET_BUNDLE_FORMAT: &str = "adamviz-figure-set-bundle-v1";
/// The DSSE payload type of the set manifest.
pub const SET_MANIFEST_PAYLOAD_TYPE: &str = "application/vnd.adamviz.figure-set-manifest+json";
/// The set manifest's path in the archive.
pub const SET_MANIFEST: &str = "set-manifest.json";
/// Its signature's path.
pub const SET_MANIFEST_DSSE: &str = "set-manifest.dsse.json";
/// At most this many figures in a set bundle (the validator refuses more before inflating).
pub const MAX_FIGURES: usize = 1_000;
/// At most this many bytes per figure bundle inflated.
pub const MAX_FIGURE_BYTES: u64 = 1 << 30;

/// One figure in the set manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFigure {
    /// The parameter code.
    pub parameter: String,
    /// The revision.
    pub revision_id: String,
    /// Its status when exported (`verified` or `approved`).
    pub status: String,
    /// The last record of its evidence when exported (its bundle's last record).
    pub evidence_head: String,
    /// Its evidence bundle in the archive.
    pub bundle: ManifestFile,
}

/// `set-manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetManifest {
    /// [`SET_BUNDLE_FORMAT`].
    pub format: String,
    /// `set-…`.
    pub set_id: String,
    /// The dataset the figures were drafted on.
    pub dataset_sha256: String,
    /// The question.
    pub question: String,
    /// Who made the set.
    pub created_by: String,
    /// When (canonical UTC).
    pub created_at: String,
    /// The figures with evidence (Verified or Approved), in parameter order.
    pub figures: Vec<SetFigure>,
    /// Figures of the set without evidence yet (Draft), by parameter and revision.
    pub without_evidence: Vec<(String, String)>,
    /// The adamviz version that exported it.
    pub adamviz_version: String,
    /// The key that signs it.
    pub signing_key: ManifestKey,
}

/// One figure to put in a set bundle: its manifest line (without the bundle's file) and its
/// bundle's bytes.
pub struct FigureBundle {
    /// The parameter code.
    pub parameter: String,
    /// The revision.
    pub revision_id: String,
    /// Its status.
    pub status: String,
    /// Its evidence head.
    pub evidence_head: String,
    /// Its evidence bundle (zip).
    pub bytes: Vec<u8>,
}

/// Why a set bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// JSON or zip writing failed.
    #[error("the set bundle could not be written: {0}")]
    Write(String),
}

/// The set bundle as zip bytes. `manifest` carries everything but the figures' bundle files,
/// which are filled from `figures`; `sign` signs the canonical manifest.
pub fn build(
    mut manifest: SetManifest,
    figures: Vec<FigureBundle>,
    sign: impl Fn(&str, &[u8]) -> Envelope,
) -> Result<Vec<u8>, BuildError> {
    let write = |e: &dyn std::fmt::Display| BuildError::Write(e.to_string());
    let mut entries = Vec::with_capacity(figures.len());
    manifest.figures.clear();
    for (index, figure) in figures.into_iter().enumerate() {
        let path = format!(
            "figures/{:03}-{}-{}.zip",
            index + 1,
            safe_name(&figure.parameter),
            figure.revision_id
        );
        manifest.figures.push(SetFigure {
            parameter: figure.parameter,
            revision_id: figure.revision_id,
            status: figure.status,
            evidence_head: figure.evidence_head,
            bundle: ManifestFile {
                path: path.clone(),
                sha256: hex::encode(Sha256::digest(&figure.bytes)),
                size: figure.bytes.len() as u64,
            },
        });
        entries.push((path, figure.bytes));
    }
    let manifest_bytes = serde_jcs::to_vec(&manifest).map_err(|e| write(&e))?;
    let envelope = sign(SET_MANIFEST_PAYLOAD_TYPE, &manifest_bytes);
    let envelope_bytes = serde_jcs::to_vec(&envelope).map_err(|e| write(&e))?;
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    // Stored, not compressed: the figures' bundles are zips already.
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let readme = readme(&manifest);
    let top = [
        ("README.txt".to_owned(), readme.into_bytes()),
        (SET_MANIFEST.to_owned(), manifest_bytes),
        (SET_MANIFEST_DSSE.to_owned(), envelope_bytes),
    ];
    for (path, bytes) in top.iter().chain(entries.iter()) {
        writer
            .start_file(path.as_str(), options)
            .map_err(|e| write(&e))?;
        writer.write_all(bytes).map_err(|e| write(&e))?;
    }
    Ok(writer.finish().map_err(|e| write(&e))?.into_inner())
}

/// A parameter code as part of a file name: letters, digits, `_` and `-`; anything else `_`.
fn safe_name(code: &str) -> String {
    code.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn readme(manifest: &SetManifest) -> String {
    format!(
        "adamviz figure set bundle {}\n\nQuestion: {}\nFigures with evidence: {}; without (not run or not verified): {}\n\n\
         set-manifest.json names each figure's evidence bundle under figures/ with its SHA-256, and\n\
         set-manifest.dsse.json signs it with the installation's key. Check it offline with\n\
         `adamviz evidence validate THIS.zip --trusted-key KEY`: the set manifest's signature,\n\
         that the archive holds exactly the figures it names, and every figure's bundle.\n",
        manifest.set_id,
        manifest.question,
        manifest.figures.len(),
        manifest.without_evidence.len()
    )
}

/// Whether `bytes` look like a set bundle (a zip holding `set-manifest.json`).
pub fn is_set_bundle(bytes: &[u8]) -> bool {
    zip::ZipArchive::new(Cursor::new(bytes))
        .map(|archive| archive.index_for_name(SET_MANIFEST).is_some())
        .unwrap_or(false)
}

/// One figure's outcome in a set bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FigureReport {
    /// The parameter code, as the set manifest names it.
    pub parameter: String,
    /// The revision, as the set manifest names it.
    pub revision_id: String,
    /// The figure bundle's own report.
    pub report: Report,
}

/// The report on a set bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetReport {
    /// SHA-256 of the set bundle's bytes.
    pub bundle_sha256: String,
    /// The set, when the manifest names one.
    pub set_id: Option<String>,
    /// What is wrong with the set itself (its manifest, its signature, its files).
    pub failures: Vec<String>,
    /// Each figure's report, in the manifest's order.
    pub figures: Vec<FigureReport>,
    /// Figures of the set without evidence, as the manifest lists them.
    pub without_evidence: Vec<(String, String)>,
    /// The verdict over the set and every figure.
    pub verdict: Verdict,
    /// The verdict in words.
    pub verdict_meaning: String,
}

impl SetReport {
    /// The exit status, as for one bundle.
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Pass => validate::EXIT_PASS,
            Verdict::ConsistentOriginNotProven => validate::EXIT_ORIGIN_NOT_PROVEN,
            Verdict::Fail => validate::EXIT_FAIL,
        }
    }

    /// The report as text (what came from the bundle made visible, never terminal control).
    pub fn text(&self) -> String {
        use validate::terminal::visible;
        let mut out = format!(
            "figure set bundle {} (SHA-256 {})\n",
            visible(self.set_id.as_deref().unwrap_or("?")),
            self.bundle_sha256
        );
        for failure in &self.failures {
            out.push_str(&format!("  set: FAIL {}\n", visible(failure)));
        }
        for figure in &self.figures {
            out.push_str(&format!(
                "  {:<12} {} {}\n",
                visible(&figure.parameter),
                visible(&figure.revision_id),
                figure.report.verdict.words()
            ));
            for failure in &figure.report.failures {
                out.push_str(&format!(
                    "      {} {}: {}\n",
                    visible(&format!("{:?}", failure.code)),
                    visible(&failure.path),
                    visible(&failure.message)
                ));
            }
        }
        for (parameter, revision) in &self.without_evidence {
            out.push_str(&format!(
                "  {:<12} {} no evidence yet (not verified when exported)\n",
                visible(parameter),
                visible(revision)
            ));
        }
        out.push_str(&format!(
            "{}: {}\n",
            self.verdict.words(),
            self.verdict_meaning
        ));
        out
    }
}

/// Validates a set bundle: the set manifest's format and signature (under the trusted key, when
/// given), that the archive holds exactly the figure bundles it names with the bytes it names,
/// and each figure's bundle with [`validate::validate`], whose revision and last record must be
/// the ones the set manifest names.
pub fn validate_set(bytes: &[u8], options: &Options) -> SetReport {
    let mut report = SetReport {
        bundle_sha256: hex::encode(Sha256::digest(bytes)),
        set_id: None,
        failures: Vec::new(),
        figures: Vec::new(),
        without_evidence: Vec::new(),
        verdict: Verdict::Fail,
        verdict_meaning: String::new(),
    };
    let mut origin_proven = false;
    match read_set(bytes) {
        Err(failure) => report.failures.push(failure),
        Ok((manifest_bytes, envelope_bytes, files)) => {
            check_set(
                &mut report,
                &manifest_bytes,
                &envelope_bytes,
                files,
                options,
                &mut origin_proven,
            );
        }
    }
    let figures_fail = report
        .figures
        .iter()
        .any(|f| f.report.verdict == Verdict::Fail);
    let figures_proven = report
        .figures
        .iter()
        .all(|f| f.report.verdict == Verdict::Pass);
    (report.verdict, report.verdict_meaning) = if !report.failures.is_empty() || figures_fail {
        (
            Verdict::Fail,
            "the set bundle or a figure in it does not hold: see the failures above".to_owned(),
        )
    } else if origin_proven && figures_proven {
        (
            Verdict::Pass,
            "the set manifest and every figure's bundle are signed by the trusted key, and every figure's evidence holds".to_owned(),
        )
    } else {
        (
            Verdict::ConsistentOriginNotProven,
            "the set and every figure hold together and are signed by the key they name; without --trusted-key their origin is not proven".to_owned(),
        )
    };
    report
}

type SetFiles = Vec<(String, Vec<u8>)>;

/// The manifest, its envelope and the figure bundles' bytes; every entry name checked, the
/// figure count and sizes capped before anything is inflated.
fn read_set(bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>, SetFiles), String> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("not a zip archive: {e}"))?;
    if archive.len() > MAX_FIGURES + 3 {
        return Err(format!(
            "the archive has {} entries, more than a set bundle may ({} figures)",
            archive.len(),
            MAX_FIGURES
        ));
    }
    let (mut manifest, mut envelope, mut files) = (None, None, Vec::new());
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| format!("entry {index}: {e}"))?;
        let name = entry.name().to_owned();
        if entry.size() > MAX_FIGURE_BYTES {
            return Err(format!(
                "entry {name:?} declares {} bytes, more than {MAX_FIGURE_BYTES}",
                entry.size()
            ));
        }
        let mut content = Vec::with_capacity(entry.size() as usize);
        (&mut entry)
            .take(MAX_FIGURE_BYTES)
            .read_to_end(&mut content)
            .map_err(|e| format!("entry {name:?}: {e}"))?;
        match name.as_str() {
            SET_MANIFEST => manifest = Some(content),
            SET_MANIFEST_DSSE => envelope = Some(content),
            "README.txt" => {}
            _ => files.push((name, content)),
        }
    }
    let manifest = manifest.ok_or_else(|| format!("{SET_MANIFEST} is absent"))?;
    let envelope = envelope.ok_or_else(|| format!("{SET_MANIFEST_DSSE} is absent"))?;
    Ok((manifest, envelope, files))
}

/// The set's own checks, then each figure's.
fn check_set(
    report: &mut SetReport,
    manifest_bytes: &[u8],
    envelope_bytes: &[u8],
    mut files: SetFiles,
    options: &Options,
    origin_proven: &mut bool,
) {
    let manifest: SetManifest = match serde_json::from_slice(manifest_bytes) {
        Ok(manifest) => manifest,
        Err(e) => {
            report.failures.push(format!("{SET_MANIFEST}: {e}"));
            return;
        }
    };
    report.set_id = Some(manifest.set_id.clone());
    report.without_evidence = manifest.without_evidence.clone();
    if manifest.format != SET_BUNDLE_FORMAT {
        report.failures.push(format!(
            "{SET_MANIFEST}: format {:?}, not {SET_BUNDLE_FORMAT}",
            manifest.format
        ));
    }
    match check_set_signature(&manifest, manifest_bytes, envelope_bytes, options) {
        Ok(proven) => *origin_proven = proven,
        Err(failure) => report.failures.push(failure),
    }
    for figure in &manifest.figures {
        let Some(at) = files
            .iter()
            .position(|(name, _)| *name == figure.bundle.path)
        else {
            report.failures.push(format!(
                "{} ({}): its bundle {} is absent",
                figure.parameter, figure.revision_id, figure.bundle.path
            ));
            continue;
        };
        let (_, bytes) = files.swap_remove(at);
        let digest = hex::encode(Sha256::digest(&bytes));
        if digest != figure.bundle.sha256 || bytes.len() as u64 != figure.bundle.size {
            report.failures.push(format!(
                "{}: {} hashes to {digest} ({} bytes); the set manifest says {} ({} bytes)",
                figure.parameter,
                figure.bundle.path,
                bytes.len(),
                figure.bundle.sha256,
                figure.bundle.size
            ));
        }
        let figure_report = validate::validate(&bytes, options);
        if let Some(failure) = names_other_figure(figure, &bytes, &figure_report) {
            report.failures.push(failure);
        }
        report.figures.push(FigureReport {
            parameter: figure.parameter.clone(),
            revision_id: figure.revision_id.clone(),
            report: figure_report,
        });
    }
    for (name, _) in files {
        report.failures.push(format!(
            "{name}: in the archive but not in the set manifest"
        ));
    }
}

/// The set manifest's DSSE signature under the key it names and, when given, the trusted key;
/// `Ok(true)` when the origin is proven.
fn check_set_signature(
    manifest: &SetManifest,
    manifest_bytes: &[u8],
    envelope_bytes: &[u8],
    options: &Options,
) -> Result<bool, String> {
    let envelope: Envelope =
        serde_json::from_slice(envelope_bytes).map_err(|e| format!("{SET_MANIFEST_DSSE}: {e}"))?;
    if envelope.payload_type != SET_MANIFEST_PAYLOAD_TYPE {
        return Err(format!(
            "{SET_MANIFEST_DSSE}: payload type {:?}, not {SET_MANIFEST_PAYLOAD_TYPE}",
            envelope.payload_type
        ));
    }
    let named: VerifyingKey = dsse::public_key_from_hex(&manifest.signing_key.public_key)
        .map_err(|e| format!("{SET_MANIFEST}#/signing_key: {e}"))?;
    let signer = match &options.trusted_key {
        Some(trusted) if *trusted != named => {
            return Err(format!(
                "the set manifest is signed by {}, not by the trusted key {}",
                dsse::fingerprint(&named),
                dsse::fingerprint(trusted)
            ))
        }
        Some(trusted) => *trusted,
        None => named,
    };
    let payload =
        dsse::verify(&envelope, &signer).map_err(|e| format!("{SET_MANIFEST_DSSE}: {e}"))?;
    if payload != manifest_bytes {
        return Err(format!(
            "{SET_MANIFEST_DSSE}: the signed payload is not {SET_MANIFEST}"
        ));
    }
    Ok(options.trusted_key.is_some())
}

/// Whether the figure's bundle is another figure than the set manifest names: another revision,
/// or evidence that ends at another record than the head the set names.
fn names_other_figure(figure: &SetFigure, bytes: &[u8], report: &Report) -> Option<String> {
    if report.revision_id.as_deref() != Some(figure.revision_id.as_str()) {
        return Some(format!(
            "{}: the bundle is of revision {}, the set manifest names {}",
            figure.parameter,
            report.revision_id.as_deref().unwrap_or("?"),
            figure.revision_id
        ));
    }
    let head = zip::ZipArchive::new(Cursor::new(bytes))
        .ok()
        .and_then(|mut archive| {
            let mut text = Vec::new();
            archive
                .by_name("manifest.json")
                .ok()?
                .take(16 << 20)
                .read_to_end(&mut text)
                .ok()?;
            let manifest: Manifest = serde_json::from_slice(&text).ok()?;
            manifest.records.last().map(|r| r.record_hash.clone())
        });
    match head {
        Some(head) if head == figure.evidence_head => None,
        Some(head) => Some(format!(
            "{}: the bundle's evidence ends at {head}, the set manifest names {}",
            figure.parameter, figure.evidence_head
        )),
        None => Some(format!(
            "{}: the bundle's manifest names no records",
            figure.parameter
        )),
    }
}

//! The offline validator and the reproduction, attacked as a forger, a bomb-maker and a host
//! in trouble would: with real bundles of real Verified revisions (real SQLite, objects and R),
//! the real `adamviz` binary, and the real sandbox for replays and reproductions.
//!
//! - a bundle that agrees with itself is not a PASS unless a key the auditor trusts signed it;
//! - `--replay` never runs a bundle's own script;
//! - a zip bomb (100 entries of about 1 GB of zeros each, every one within the ratio cap) and a
//!   bundle of too many entries are refused before anything is inflated, under `ulimit -v 4G`;
//! - escape sequences in a bundle never reach the auditor's terminal;
//! - a reproduction the host could not run (a signal, memory) records nothing.

#[path = "support/bundle_edit.rs"]
mod bundle_edit;
#[path = "support/flow_server.rs"]
mod flow_server;

use std::{
    io::Write,
    path::Path,
    process::{Command, Output},
    sync::Arc,
    time::Instant,
};

use adamviz_engine::runner::{Runner, RunnerConfig};
use adamviz_evidence::validate::{
    archive::{MAX_ENTRIES, MAX_RATIO, MAX_TOTAL_BYTES},
    report_json, validate, Code, Options, Verdict,
};
use adamviz_model::revision::RunStatus;
use adamviz_services::{
    bundle::{export_bundle, file_hash, Manifest},
    execution::ExecutionService,
    installation_key::InstallationKey,
    reproduction::{reproduce, ReproduceError},
    runs::start_run,
};
use bundle_edit::*;
use flow_server::*;

/// A Verified revision's bundle, signed by a fresh installation key kept in `dir`.
async fn verified_bundle(server: &Server, dir: &Path) -> (Vec<u8>, InstallationKey) {
    let id = server.revision(None).await;
    start_run(&server.run, &id, "validator-attacks", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&id).await, RunStatus::Verified);
    let key = InstallationKey::load_or_create(dir).unwrap();
    let connection = server.database.connection().unwrap();
    let bundle = export_bundle(&connection, &server.objects, &key, &id).unwrap();
    (bundle, key)
}

/// `adamviz evidence validate ARGS…`.
fn validate_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["evidence", "validate"])
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_a_bundle_signed_by_a_key_of_its_own_is_never_a_pass_without_a_trusted_key() {
    let server = server(1);
    let dir = tempfile::tempdir().unwrap();
    let (bundle, key) = verified_bundle(&server, dir.path()).await;
    let forger_dir = tempfile::tempdir().unwrap();
    let forger = InstallationKey::load_or_create(forger_dir.path()).unwrap();
    // The forger's bundle: the genuine one (it could as well be rewritten consistently)
    // re-signed with the forger's own key, which the manifest names. Consistent with itself.
    let mut forged = entries(&bundle);
    resign(&mut forged, &forger, |m| {
        m.signing_key.public_key = forger.public_hex();
        m.signing_key.fingerprint = forger.fingerprint();
    });
    let forged = rezip(&forged);

    let unpinned = validate(&forged, &Options::default());
    assert_eq!(
        unpinned.verdict,
        Verdict::ConsistentOriginNotProven,
        "{}",
        unpinned.text()
    );
    assert!(unpinned.failures.is_empty(), "{}", unpinned.text());
    assert_eq!(unpinned.checks[11].outcome, "not_proven");
    assert_eq!(unpinned.exit_code(), 3);
    // Under the installation's key, the forgery fails by its signature.
    let pinned = Options {
        trusted_key: Some(key.public_key()),
        ..Options::default()
    };
    let report = validate(&forged, &pinned);
    assert_eq!(report.verdict, Verdict::Fail);
    assert!(report.failures.iter().any(|f| f.code == Code::Signature));
    // The genuine bundle: PASS only under the trusted key.
    assert_eq!(validate(&bundle, &pinned).verdict, Verdict::Pass);
    assert_eq!(
        validate(&bundle, &Options::default()).verdict,
        Verdict::ConsistentOriginNotProven
    );

    // The command line: exit 3 and the words without a key, in text and JSON; exit 0 and PASS
    // with the key (as 64 hex digits, or as `adamviz key show` prints it); exit 5 for the
    // forgery under the key.
    let work = tempfile::tempdir().unwrap();
    let forged_path = write(work.path(), "forged.zip", &forged);
    let genuine_path = write(work.path(), "genuine.zip", &bundle);
    let hex_key = write(work.path(), "key.hex", key.public_hex().as_bytes());
    let shown_key = write(
        work.path(),
        "key.show",
        format!(
            "public key  {}\nfingerprint {}\n",
            key.public_hex(),
            key.fingerprint()
        )
        .as_bytes(),
    );
    let output = validate_cli(&[&forged_path]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("CONSISTENT, ORIGIN NOT PROVEN: ") && last.contains("--trusted-key"),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");
    let output = validate_cli(&[&forged_path, "--json"]);
    assert_eq!(output.status.code(), Some(3));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["verdict"], "CONSISTENT_ORIGIN_NOT_PROVEN");
    assert!(json["verdict_meaning"]
        .as_str()
        .unwrap()
        .contains("out of band"));
    for key_file in [&hex_key, &shown_key] {
        let output = validate_cli(&[&genuine_path, "--trusted-key", key_file]);
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(0), "{text}");
        assert!(text.lines().last().unwrap().starts_with("PASS: "), "{text}");
    }
    let output = validate_cli(&[&forged_path, "--trusted-key", &hex_key]);
    assert_eq!(output.status.code(), Some(5), "{}", stdout(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_forged_script_is_never_replayed() {
    let server = server(1);
    let dir = tempfile::tempdir().unwrap();
    let (bundle, key) = verified_bundle(&server, dir.path()).await;
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker");
    // An insider with the key: script.R replaced by code that writes a marker, and every hash
    // made consistent with it (the manifest's artifact, the records naming the script's hash,
    // every record re-sealed and re-linked, the manifest re-signed with the real key).
    let mut forged = entries(&bundle);
    let original = entry(&mut forged, "artifacts/script.R").clone();
    let mut script =
        format!("invisible(file.create({:?}))\n", marker.to_str().unwrap()).into_bytes();
    script.extend_from_slice(&original);
    let (old, new) = (file_hash(&original), file_hash(&script));
    *entry(&mut forged, "artifacts/script.R") = script.clone();
    let manifest: Manifest = serde_json::from_slice(entry(&mut forged, "manifest.json")).unwrap();
    let first = manifest.records[0].path.clone();
    forge_renaming(&mut forged, &key, &first, vec![(old, new.clone())], |_| {});
    resign(&mut forged, &key, |m| {
        let artifact = m
            .artifacts
            .iter_mut()
            .find(|a| a.path == "artifacts/script.R")
            .unwrap();
        artifact.sha256 = new;
        artifact.size = script.len() as u64;
    });
    let forged = rezip(&forged);
    let pinned = Options {
        trusted_key: Some(key.public_key()),
        ..Options::default()
    };
    // Every hash agrees: only the recompilation (check 9) tells the script from the spec's.
    let report = validate(&forged, &pinned);
    let codes: Vec<Code> = report.failures.iter().map(|f| f.code).collect();
    assert!(
        !codes.is_empty() && codes.iter().all(|c| *c == Code::Provenance),
        "{}",
        report.text()
    );

    let bundle_path = write(work.path(), "forged.zip", &forged);
    let key_path = write(work.path(), "key.hex", key.public_hex().as_bytes());
    let output = validate_cli(&[&bundle_path, "--replay", "--trusted-key", &key_path]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(
        text.contains("FAIL REPLAY_REFUSED artifacts/script.R: refused to replay: check 9 failed"),
        "{text}"
    );
    assert!(
        text.contains("replay in the sandbox                    fail           refused to replay"),
        "{text}"
    );
    assert!(!marker.exists(), "the bundle's script ran");

    // The genuine bundle replays: the validator's own compiled script, in the sandbox.
    let genuine = write(work.path(), "genuine.zip", &bundle);
    let output = validate_cli(&[&genuine, "--replay", "--trusted-key", &key_path]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("the script compiled from the spec re-ran in the sandbox"),
        "{text}"
    );
}

/// A zip written by hand: local headers, raw (already deflated) data, central directory.
struct RawZip {
    file: std::io::BufWriter<std::fs::File>,
    offset: u64,
    central: Vec<u8>,
    count: u16,
}

impl RawZip {
    fn create(path: &Path) -> Self {
        Self {
            file: std::io::BufWriter::new(std::fs::File::create(path).unwrap()),
            offset: 0,
            central: Vec::new(),
            count: 0,
        }
    }

    /// One entry: `method` 8 (deflate) or 0 (stored), its CRC and sizes as declared, and its
    /// data as `chunks` repeated.
    fn add(&mut self, name: &str, method: u16, crc: u32, size: u32, chunks: &[(&[u8], usize)]) {
        let packed: usize = chunks.iter().map(|(c, n)| c.len() * n).sum();
        let header = |signature: u32, central: bool| {
            let mut h = Vec::new();
            h.extend_from_slice(&signature.to_le_bytes());
            if central {
                h.extend_from_slice(&20u16.to_le_bytes()); // made by
            }
            for value in [20u16, 0, method, 0, 0x21] {
                h.extend_from_slice(&value.to_le_bytes()); // needed, flags, method, time, date
            }
            for value in [crc, packed as u32, size] {
                h.extend_from_slice(&value.to_le_bytes());
            }
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // extra
            h
        };
        let mut central = header(0x0201_4b50, true);
        for value in [0u16, 0, 0] {
            central.extend_from_slice(&value.to_le_bytes()); // comment, disk, internal
        }
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&(self.offset as u32).to_le_bytes());
        central.extend_from_slice(name.as_bytes());
        self.central.extend_from_slice(&central);
        let mut local = header(0x0403_4b50, false);
        local.extend_from_slice(name.as_bytes());
        self.file.write_all(&local).unwrap();
        for (chunk, times) in chunks {
            for _ in 0..*times {
                self.file.write_all(chunk).unwrap();
            }
        }
        self.offset += (local.len() + packed) as u64;
        self.count += 1;
    }

    fn finish(mut self) {
        self.file.write_all(&self.central).unwrap();
        let mut end = Vec::new();
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        for value in [0u16, 0, self.count, self.count] {
            end.extend_from_slice(&value.to_le_bytes());
        }
        end.extend_from_slice(&(self.central.len() as u32).to_le_bytes());
        end.extend_from_slice(&(self.offset as u32).to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        self.file.write_all(&end).unwrap();
        self.file.flush().unwrap();
    }
}

/// `adamviz evidence validate FILE` under `ulimit -v 4194304` (4 GiB of address space), timed.
fn validate_under_4g(file: &Path) -> (Output, f64) {
    let started = Instant::now();
    let output = Command::new("sh")
        .args([
            "-c",
            "ulimit -v 4194304 && exec \"$0\" evidence validate \"$1\"",
            env!("CARGO_BIN_EXE_adamviz"),
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    (output, started.elapsed().as_secs_f64())
}

#[test]
fn attack_a_zip_bomb_of_100_entries_of_1_gb_of_zeros_is_refused_before_inflating() {
    // 256 KiB of zeros deflated once, flushed to a byte boundary so that the block can be
    // repeated: 3,815 copies and an empty final block are a deflate stream of about 1 GB of
    // zeros at a ratio within the per-entry cap. The same stream is the data of 100 entries.
    const CHUNK: usize = 256 << 10;
    const COPIES: usize = 3_815;
    let zeros = vec![0u8; CHUNK];
    let mut deflate = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(64 << 10);
    deflate
        .compress_vec(&zeros, &mut block, flate2::FlushCompress::Full)
        .unwrap();
    assert_eq!(deflate.total_in(), CHUNK as u64);
    let size = (CHUNK * COPIES) as u64;
    let packed = (block.len() * COPIES + 2) as u64;
    let mut crc = crc32fast::Hasher::new();
    let mut one = crc32fast::Hasher::new();
    one.update(&zeros);
    for _ in 0..COPIES {
        crc.combine(&one);
    }
    let crc = crc.finalize();
    assert!(
        size / packed <= MAX_RATIO,
        "ratio {} exceeds the per-entry cap",
        size / packed
    );
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.zip");
    let started = Instant::now();
    let mut zip = RawZip::create(&bomb);
    for index in 0..100 {
        zip.add(
            &format!("artifacts/zeros-{index:03}.bin"),
            8,
            crc,
            size as u32,
            &[(&block, COPIES), (&[0x03, 0x00], 1)],
        );
    }
    zip.finish();
    println!(
        "bomb: 100 entries of {size} bytes each ({} GB declared), {} bytes on disk, ratio {}:1, made in {:.1} s",
        size * 100 / 1_000_000_000,
        std::fs::metadata(&bomb).unwrap().len(),
        size / packed,
        started.elapsed().as_secs_f64()
    );
    // The stream really is what the entry declares (its first entry inflated here, once).
    {
        let mut archive = zip::ZipArchive::new(std::fs::File::open(&bomb).unwrap()).unwrap();
        let mut first = archive.by_index(0).unwrap();
        let inflated = std::io::copy(&mut first, &mut std::io::sink()).unwrap();
        assert_eq!(inflated, size);
    }

    let (output, seconds) = validate_under_4g(&bomb);
    let text = stdout(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("refused in {seconds:.2} s under ulimit -v 4194304");
    assert_eq!(output.status.code(), Some(2), "{text}{stderr}");
    assert!(
        text.contains("FAIL INVOCATION $: the archive's entries declare"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "more than the cap of {MAX_TOTAL_BYTES} bytes (2 GiB)"
        )),
        "{text}"
    );
    assert!(
        stderr.contains("refused: the archive's entries declare"),
        "{stderr}"
    );
    assert!(seconds < 60.0, "refused in {seconds:.1} s");
}

#[test]
fn attack_a_bundle_of_more_entries_than_the_cap_is_refused_before_inflating() {
    let dir = tempfile::tempdir().unwrap();
    let many = dir.path().join("many.zip");
    let mut zip = RawZip::create(&many);
    for index in 0..=MAX_ENTRIES {
        zip.add(&format!("records/{index:05}.json"), 0, 0, 0, &[]);
    }
    zip.finish();
    let (output, seconds) = validate_under_4g(&many);
    let text = stdout(&output);
    println!("refused in {seconds:.2} s");
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "the archive has {} entries, more than the cap of {MAX_ENTRIES}",
            MAX_ENTRIES + 1
        )),
        "{text}"
    );
}

#[test]
fn attack_an_entry_that_inflates_beyond_its_declared_size_is_cut_off() {
    // An entry declaring 1,000 bytes whose data inflates to 1 GiB of zeros: the declared size
    // passes every cap, so only reading stops it, at the declared size and one byte.
    let zeros = vec![0u8; 256 << 10];
    let mut deflate = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(64 << 10);
    deflate
        .compress_vec(&zeros, &mut block, flate2::FlushCompress::Full)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let liar = dir.path().join("liar.zip");
    let mut zip = RawZip::create(&liar);
    let crc = crc32fast::hash(&zeros[..1000]);
    zip.add(
        "artifacts/plot.png",
        8,
        crc,
        1000,
        &[(&block, 4096), (&[0x03, 0x00], 1)],
    );
    zip.finish();
    let (output, seconds) = validate_under_4g(&liar);
    let text = stdout(&output);
    let refusal = text
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .unwrap_or_default();
    println!("refused in {seconds:.2} s: {refusal}");
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("FAIL INVOCATION $: entry \"artifacts/plot.png\": "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_escape_sequences_in_a_bundle_never_reach_the_terminal() {
    let server = server(1);
    let dir = tempfile::tempdir().unwrap();
    let (bundle, key) = verified_bundle(&server, dir.path()).await;
    let mut tampered = entries(&bundle);
    // An entry whose name clears the screen, retitles the window and starts a line that says
    // PASS; a listed artifact whose path does the same with a carriage return and colours.
    let name = "artifacts/\u{1b}[2J\u{1b}]0;owned\u{7}x\nPASS: all good.txt";
    tampered.push((name.to_owned(), b"hello".to_vec()));
    let listed = "artifacts/\u{1b}[32m\rPASS\u{1b}[0m\u{202e}txt.R";
    resign(&mut tampered, &key, |m| {
        let mut artifact = m.artifacts[0].clone();
        artifact.path = listed.to_owned();
        m.artifacts.push(artifact);
    });
    let report = validate(
        &rezip(&tampered),
        &Options {
            trusted_key: Some(key.public_key()),
            ..Options::default()
        },
    );
    assert_eq!(report.verdict, Verdict::Fail);
    let text = report.text();
    let controls: Vec<char> = text
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || *c == '\u{202e}')
        .collect();
    assert!(controls.is_empty(), "{controls:?} in\n{text}");
    assert!(
        text.contains("FAIL ARTIFACT artifacts/\\x1b[2J\\x1b]0;owned\\x07x\\x0aPASS: all good.txt: a file the manifest does not list"),
        "{text}"
    );
    assert!(
        text.contains("artifacts/\\x1b[32m\\x0dPASS\\x1b[0m\\u{202e}txt.R"),
        "{text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("PASS")),
        "a forged PASS line:\n{text}"
    );
    // JSON stays JSON: the names exactly as they are, escaped by JSON itself.
    let json: serde_json::Value = serde_json::from_slice(&report_json(&report).unwrap()).unwrap();
    let paths: Vec<&str> = json["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert!(
        paths.contains(&name) && paths.contains(&listed),
        "{paths:?}"
    );
}

/// An execution service over `server`'s database and objects, its runner's config edited.
fn limited(server: &Server, edit: impl FnOnce(&mut RunnerConfig)) -> ExecutionService {
    let mut config = RunnerConfig::new();
    config.work_root = server._dir.path().join("work");
    edit(&mut config);
    ExecutionService::new(
        server.database.clone(),
        server.objects.clone(),
        Arc::new(Runner::new(config)),
    )
}

fn reproduction_records(server: &Server) -> i64 {
    let connection = server.database.connection().unwrap();
    connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT count(*) FROM evidence_ledger WHERE kind = 'reproduction'",
            [],
            |row| row.get(0),
        )
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reproduction_the_host_kills_or_starves_records_nothing() {
    let server = server(1);
    let id = server.revision(None).await;
    start_run(&server.run, &id, "host-limits", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&id).await, RunStatus::Verified);
    // A file-size limit smaller than the plot: the kernel ends R with SIGXFSZ.
    let small_files = limited(&server, |c| c.limits.file_size_bytes = 16 << 10);
    let error = reproduce(&small_files, &id, &server.actor)
        .await
        .unwrap_err();
    println!("file-size limit: {error}");
    assert!(
        matches!(&error, ReproduceError::NotRun(m) if m.contains("signal")),
        "{error}"
    );
    assert_eq!(reproduction_records(&server), 0);
    // An address space too small for R's packages: R cannot allocate and stops.
    let small_memory = limited(&server, |c| c.limits.address_space_bytes = 256 << 20);
    let error = reproduce(&small_memory, &id, &server.actor)
        .await
        .unwrap_err();
    println!("address-space limit: {error}");
    assert!(matches!(&error, ReproduceError::NotRun(_)), "{error}");
    assert!(
        error.to_string().contains("nothing was recorded"),
        "{error}"
    );
    assert_eq!(reproduction_records(&server), 0);
    // The same revision on a host that can run it reproduces, and that is recorded.
    let outcome = reproduce(&server.run.execution, &id, &server.actor)
        .await
        .unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(reproduction_records(&server), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_with_any_failed_reproduction_fails_even_after_a_later_success() {
    let server = server(1);
    let id = server.revision(None).await;
    start_run(&server.run, &id, "any-failed", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&id).await, RunStatus::Verified);
    // The stored script corrupted on disk: a failed reproduction, recorded. Then repaired: a
    // reproduction that succeeds, recorded after it.
    let revision = {
        let connection = server.database.connection().unwrap();
        adamviz_store::repository::get_revision(&connection, &id)
            .unwrap()
            .unwrap()
    };
    let script = server.objects.path_of(
        &adamviz_model::digest::Sha256Digest::try_from(revision.script_hash.clone()).unwrap(),
    );
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&script, permissions).unwrap();
    let genuine = std::fs::read(&script).unwrap();
    let mut tampered = genuine.clone();
    tampered.extend_from_slice(b"# tampered\n");
    std::fs::write(&script, &tampered).unwrap();
    let failed = reproduce(&server.run.execution, &id, &server.actor)
        .await
        .unwrap();
    assert!(!failed.failures.is_empty());
    std::fs::write(&script, &genuine).unwrap();
    let later = reproduce(&server.run.execution, &id, &server.actor)
        .await
        .unwrap();
    assert!(later.failures.is_empty(), "{:?}", later.failures);
    assert_eq!(reproduction_records(&server), 2);

    let dir = tempfile::tempdir().unwrap();
    let key = InstallationKey::load_or_create(dir.path()).unwrap();
    let bundle = {
        let connection = server.database.connection().unwrap();
        export_bundle(&connection, &server.objects, &key, &id).unwrap()
    };
    let report = validate(
        &bundle,
        &Options {
            trusted_key: Some(key.public_key()),
            ..Options::default()
        },
    );
    assert_eq!(report.verdict, Verdict::Fail, "{}", report.text());
    assert!(
        report
            .failures
            .iter()
            .any(|f| f.code == Code::Replay && f.path == "$.outcome"),
        "{}",
        report.text()
    );
    assert_eq!(report.checks[9].outcome, "fail");
}

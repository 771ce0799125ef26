//! Editing an evidence bundle as a forger would: its entries unzipped and zipped again, a
//! record re-sealed, later records re-linked, the manifest re-signed with any key.
#![allow(dead_code)]

use adamviz_services::{bundle::Manifest, installation_key::InstallationKey};

/// The entries of a zip, in order.
pub fn entries(bundle: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bundle)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut entry = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            (entry.name().to_owned(), bytes)
        })
        .collect()
}

/// A zip of `entries`.
pub fn rezip(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in entries {
        writer.start_file(name.as_str(), options).unwrap();
        std::io::Write::write_all(&mut writer, bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

pub fn entry<'a>(entries: &'a mut [(String, Vec<u8>)], name: &str) -> &'a mut Vec<u8> {
    &mut entries.iter_mut().find(|(n, _)| n == name).unwrap().1
}

pub fn reseal(record: &mut serde_json::Value) {
    use sha2::{Digest, Sha256};
    record.as_object_mut().unwrap().remove("record_hash");
    let hash = hex::encode(Sha256::digest(serde_jcs::to_vec(record).unwrap()));
    record["record_hash"] = serde_json::Value::String(hash);
}

/// Rewrites the manifest with `edit` and signs it with `key`.
pub fn resign(
    entries: &mut [(String, Vec<u8>)],
    key: &InstallationKey,
    edit: impl FnOnce(&mut Manifest),
) {
    let mut manifest: Manifest = serde_json::from_slice(entry(entries, "manifest.json")).unwrap();
    edit(&mut manifest);
    let bytes = serde_jcs::to_vec(&manifest).unwrap();
    let envelope = key.sign(adamviz_evidence::dsse::MANIFEST_PAYLOAD_TYPE, &bytes);
    *entry(entries, "manifest.json") = bytes;
    *entry(entries, "manifest.dsse.json") = serde_jcs::to_vec(&envelope).unwrap();
}

/// What a forger with the database and the key does: record `path` edited by `edit` and
/// re-sealed, every later record re-linked to the new hashes and re-sealed, the manifest
/// re-signed. Only the meaning of the records can give it away.
pub fn forge(
    entries: &mut [(String, Vec<u8>)],
    key: &InstallationKey,
    path: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) {
    forge_renaming(entries, key, path, Vec::new(), edit)
}

/// [`forge`], with the strings of `renamed` (old, new) also replaced wherever a record from
/// `path` on holds them (e.g. an artifact's hash in every record that names it).
pub fn forge_renaming(
    entries: &mut [(String, Vec<u8>)],
    key: &InstallationKey,
    path: &str,
    renamed: Vec<(String, String)>,
    edit: impl FnOnce(&mut serde_json::Value),
) {
    fn rename(value: &mut serde_json::Value, renamed: &[(String, String)]) {
        match value {
            serde_json::Value::String(text) => {
                if let Some((_, new)) = renamed.iter().find(|(old, _)| old == text) {
                    *text = new.clone();
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| rename(v, renamed)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| rename(v, renamed)),
            _ => {}
        }
    }
    let mut manifest: Manifest = serde_json::from_slice(entry(entries, "manifest.json")).unwrap();
    let start = manifest
        .records
        .iter()
        .position(|r| r.path == path)
        .unwrap();
    let mut renamed = renamed;
    let mut edit = Some(edit);
    for record in &mut manifest.records[start..] {
        let bytes = entry(entries, &record.path);
        let mut value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        if let Some(edit) = edit.take() {
            edit(&mut value);
        }
        rename(&mut value, &renamed);
        reseal(&mut value);
        let new = value["record_hash"].as_str().unwrap().to_owned();
        renamed.push((record.record_hash.clone(), new.clone()));
        record.record_hash = new;
        *bytes = serde_jcs::to_vec(&value).unwrap();
    }
    resign(entries, key, |m| *m = manifest);
}

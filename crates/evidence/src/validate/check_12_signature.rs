//! Check 12: the manifest's DSSE signature, under the key the manifest names and, when given, the
//! key the auditor trusts.

use super::*;

impl Validation {
    pub(super) fn check_signature(
        &mut self,
        archive: &Archive,
        manifest: &Manifest,
        manifest_bytes: &[u8],
        options: &Options,
    ) {
        let before = self.failures.len();
        let mut detail = String::new();
        let envelope = archive
            .bytes("manifest.dsse.json")
            .ok_or_else(|| "manifest.dsse.json is absent".to_owned())
            .and_then(|b| {
                serde_json::from_slice::<Envelope>(b)
                    .map_err(|e| format!("manifest.dsse.json: {e}"))
            });
        let key =
            dsse::public_key_from_hex(&manifest.signing_key.public_key).map_err(|e| e.to_string());
        match (envelope, key) {
            (Ok(envelope), Ok(key)) => {
                let signer = if let Some(trusted) = &options.trusted_key {
                    if trusted != &key {
                        self.failure(
                            Code::Signature,
                            None,
                            "manifest.json#/signing_key",
                            format!(
                                "signed by {}, not by the trusted key {}",
                                dsse::fingerprint(&key),
                                dsse::fingerprint(trusted)
                            ),
                        );
                    }
                    *trusted
                } else {
                    detail = format!(
                        "signed by {}, the key the manifest names: anyone can sign with a key of their own; the origin is proven only with --trusted-key",
                        dsse::fingerprint(&key)
                    );
                    key
                };
                match dsse::verify(&envelope, &signer) {
                    Ok(payload) if payload == manifest_bytes => {
                        self.origin_proven = options.trusted_key.as_ref() == Some(&key);
                    }
                    Ok(_) => self.failure(
                        Code::Signature,
                        None,
                        "manifest.dsse.json",
                        "the signed payload is not manifest.json".to_owned(),
                    ),
                    Err(e) => {
                        self.failure(Code::Signature, None, "manifest.dsse.json", e.to_string())
                    }
                }
                if detail.is_empty() {
                    detail = format!("signed by the trusted key {}", dsse::fingerprint(&signer));
                }
            }
            (Err(message), _) | (_, Err(message)) => {
                self.failure(Code::Signature, None, "manifest.dsse.json", message)
            }
        }
        self.close(12, before, Code::Signature, detail);
        if options.trusted_key.is_none() {
            if let Some(check) = self.checks.last_mut().filter(|c| c.outcome == "pass") {
                check.outcome = "not_proven";
            }
        }
    }
}

//! DSSE envelopes (the in-toto / Sigstore "Dead Simple Signing Envelope"): a payload, its type
//! and Ed25519 signatures over the pre-authentication encoding
//! `PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body`. The evidence bundle's
//! manifest is signed this way with the installation's key.

use base64::{engine::general_purpose::STANDARD, Engine as _};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The payload type of a bundle manifest.
pub const MANIFEST_PAYLOAD_TYPE: &str = "application/vnd.adamviz.evidence-manifest+json";

/// One signature: the key's id (its fingerprint) and the signature, base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSignature {
    /// `sha256:` and the SHA-256 of the raw public key, hex.
    pub keyid: String,
    /// The Ed25519 signature over the PAE, base64.
    pub sig: String,
}

/// The envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The payload, base64.
    pub payload: String,
    /// Its media type.
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// The signatures.
    pub signatures: Vec<EnvelopeSignature>,
}

/// Why an envelope does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Not base64.
    #[error("the envelope's {0} is not base64")]
    Base64(&'static str),
    /// No signature by the key looked for.
    #[error("no signature by key {0}")]
    NoSignatureBy(String),
    /// The signature does not match.
    #[error("the signature by key {0} does not match the payload")]
    BadSignature(String),
    /// A key that is not an Ed25519 public key.
    #[error("not an Ed25519 public key: {0}")]
    BadKey(String),
}

/// The pre-authentication encoding of DSSE v1.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The fingerprint of a public key: `sha256:` and 64 hex digits.
pub fn fingerprint(key: &VerifyingKey) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(key.as_bytes())))
}

/// Signs `payload` of `payload_type` with `key`.
pub fn sign(key: &SigningKey, payload_type: &str, payload: &[u8]) -> Envelope {
    let signature = key.sign(&pae(payload_type, payload));
    Envelope {
        payload: STANDARD.encode(payload),
        payload_type: payload_type.to_owned(),
        signatures: vec![EnvelopeSignature {
            keyid: fingerprint(&key.verifying_key()),
            sig: STANDARD.encode(signature.to_bytes()),
        }],
    }
}

/// The envelope's payload bytes.
pub fn payload(envelope: &Envelope) -> Result<Vec<u8>, EnvelopeError> {
    STANDARD
        .decode(&envelope.payload)
        .map_err(|_| EnvelopeError::Base64("payload"))
}

/// Verifies the envelope's signature by `key` and returns the payload.
pub fn verify(envelope: &Envelope, key: &VerifyingKey) -> Result<Vec<u8>, EnvelopeError> {
    let body = payload(envelope)?;
    let id = fingerprint(key);
    let signature = envelope
        .signatures
        .iter()
        .find(|s| s.keyid == id)
        .ok_or_else(|| EnvelopeError::NoSignatureBy(id.clone()))?;
    let bytes: [u8; 64] = STANDARD
        .decode(&signature.sig)
        .map_err(|_| EnvelopeError::Base64("signature"))?
        .try_into()
        .map_err(|_| EnvelopeError::BadSignature(id.clone()))?;
    key.verify(
        &pae(&envelope.payload_type, &body),
        &Signature::from_bytes(&bytes),
    )
    .map_err(|_| EnvelopeError::BadSignature(id))?;
    Ok(body)
}

/// A public key from 64 hex digits.
pub fn public_key_from_hex(text: &str) -> Result<VerifyingKey, EnvelopeError> {
    let bytes: [u8; 32] = hex::decode(text.trim())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| EnvelopeError::BadKey("expected 64 hex digits".to_owned()))?;
    VerifyingKey::from_bytes(&bytes).map_err(|e| EnvelopeError::BadKey(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_is_the_dsse_v1_encoding() {
        // The example of the DSSE protocol description.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
    }

    #[test]
    fn a_signed_envelope_verifies_and_any_change_breaks_it() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let other = SigningKey::from_bytes(&[8; 32]);
        let envelope = sign(&key, MANIFEST_PAYLOAD_TYPE, b"{\"a\":1}");
        assert_eq!(
            verify(&envelope, &key.verifying_key()).unwrap(),
            b"{\"a\":1}"
        );
        assert!(matches!(
            verify(&envelope, &other.verifying_key()),
            Err(EnvelopeError::NoSignatureBy(_))
        ));
        let mut changed = envelope.clone();
        changed.payload = STANDARD.encode(b"{\"a\":2}");
        assert!(matches!(
            verify(&changed, &key.verifying_key()),
            Err(EnvelopeError::BadSignature(_))
        ));
        let mut retyped = envelope;
        retyped.payload_type = "text/plain".to_owned();
        assert!(verify(&retyped, &key.verifying_key()).is_err());
    }
}

//! The two RFC 8785 canonical forms of a record, from one serialization: the whole record
//! (what is stored) and the record without its top-level `record_hash` (what the self-hash
//! covers). A canonical object is `{` + its members in UTF-16 key order joined by `,` + `}`, so
//! serializing each top-level member once (with `serde_jcs`) gives both forms.

use serde_json::Value;
use sha2::{Digest, Sha256};

use adamviz_model::digest::Sha256Digest;

/// Both canonical forms of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalForms {
    /// The whole record.
    pub full: Vec<u8>,
    /// The record without its top-level `record_hash`.
    pub without_hash: Vec<u8>,
}

impl CanonicalForms {
    /// The self-hash: SHA-256 of the form without `record_hash`.
    pub fn self_hash(&self) -> Sha256Digest {
        Sha256Digest::from_bytes(Sha256::digest(&self.without_hash).into())
    }
}

/// Both canonical forms of `value` (for a value that is not an object, the two are equal).
pub fn canonical_forms(value: &Value) -> Result<CanonicalForms, serde_json::Error> {
    let Value::Object(members) = value else {
        let full = serde_jcs::to_vec(value)?;
        return Ok(CanonicalForms {
            without_hash: full.clone(),
            full,
        });
    };
    let mut keys: Vec<&String> = members.keys().collect();
    keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let (mut full, mut without_hash) = (vec![b'{'], vec![b'{']);
    for key in keys {
        let mut member = serde_jcs::to_vec(key)?;
        member.push(b':');
        member.extend(serde_jcs::to_vec(&members[key])?);
        if full.len() > 1 {
            full.push(b',');
        }
        full.extend_from_slice(&member);
        if key != "record_hash" {
            if without_hash.len() > 1 {
                without_hash.push(b',');
            }
            without_hash.extend(member);
        }
    }
    full.push(b'}');
    without_hash.push(b'}');
    Ok(CanonicalForms { full, without_hash })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_equal_serde_jcs_of_the_record_with_and_without_its_hash() {
        let record = serde_json::json!({
            "zeta": [1.5, 1e21, -0.0, "\u{1F600}"],
            "record_hash": "ab",
            "\u{E000}": 1,
            "\u{1F600}": 2,
            "nested": {"record_hash": "kept", "b": null, "a": true},
            "a\"b": "é\n",
        });
        let forms = canonical_forms(&record).unwrap();
        assert_eq!(forms.full, serde_jcs::to_vec(&record).unwrap());
        let mut without = record.clone();
        without.as_object_mut().unwrap().remove("record_hash");
        assert_eq!(forms.without_hash, serde_jcs::to_vec(&without).unwrap());
        let empty = serde_json::json!({});
        assert_eq!(canonical_forms(&empty).unwrap().full, b"{}");
        let only_hash = serde_json::json!({"record_hash": "x"});
        assert_eq!(canonical_forms(&only_hash).unwrap().without_hash, b"{}");
    }
}

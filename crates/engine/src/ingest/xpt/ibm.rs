//! IBM System/360 hexadecimal floating point, the number format of SAS XPORT v5: decoding to a
//! cell (missing markers included) and encoding for test data and fixtures.

use super::*;

/// Converts a 2–8 byte IBM hexadecimal float (missing markers included) to a cell.
///
/// value = (-1)^sign × 0.mantissa(56 bits) × 16^(exponent − 64). The 56-bit mantissa is rounded
/// to f64 once (round half to even) and scaled by an exact power of two, so the result is the
/// correctly rounded double of the stored number.
pub fn ibm_to_numeric(field: &[u8]) -> NumericCell {
    // Nearly every field is 8 bytes: take those with one load instead of a variable-length copy.
    let bytes: [u8; 8] = match <[u8; 8]>::try_from(field) {
        Ok(bytes) => bytes,
        Err(_) => {
            let mut bytes = [0u8; 8];
            bytes[..field.len()].copy_from_slice(field);
            bytes
        }
    };
    if bytes[1..].iter().all(|&b| b == 0) {
        if let Some(missing) = SasMissing::from_marker(bytes[0]) {
            return NumericCell::Missing(missing);
        }
    }
    let negative = bytes[0] & 0x80 != 0;
    let exponent = i32::from(bytes[0] & 0x7f) - 64;
    let mantissa = u64::from_be_bytes([
        0, bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
    ]);
    if mantissa == 0 {
        return NumericCell::Value(0.0);
    }
    // 4·exponent − 56 lies in [−312, 196]: a normal power of two, built exactly from its bits.
    let scale = f64::from_bits(((1023 + 4 * exponent - 56) as u64) << 52);
    let magnitude = mantissa as f64 * scale;
    NumericCell::Value(if negative { -magnitude } else { magnitude })
}

/// Encodes a finite double as an 8-byte IBM float (truncating below the 56-bit mantissa), and a
/// missing value as its marker. The inverse of [`ibm_to_numeric`] for test data and fixtures.
pub fn numeric_to_ibm(cell: NumericCell) -> [u8; 8] {
    let value = match cell {
        NumericCell::Missing(missing) => {
            let marker = match missing {
                SasMissing::Dot => b'.',
                SasMissing::Underscore => b'_',
                SasMissing::Letter(letter) => letter,
            };
            return [marker, 0, 0, 0, 0, 0, 0, 0];
        }
        NumericCell::Value(value) => value,
    };
    if value == 0.0 {
        return [0; 8];
    }
    let sign = if value < 0.0 { 0x80u8 } else { 0 };
    let magnitude = value.abs();
    // Find exponent e with 16^(e-1) <= magnitude < 16^e, then the 56-bit fraction.
    let mut exponent = (magnitude.log2() / 4.0).floor() as i32 + 1;
    let mut fraction = magnitude / 16f64.powi(exponent);
    if fraction >= 1.0 {
        exponent += 1;
        fraction /= 16.0;
    } else if fraction < 1.0 / 16.0 {
        exponent -= 1;
        fraction *= 16.0;
    }
    let mantissa = (fraction * 2f64.powi(56)) as u64;
    let mut bytes = mantissa.to_be_bytes();
    bytes[0] = sign | ((exponent + 64) as u8 & 0x7f);
    bytes
}

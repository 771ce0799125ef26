//! The strict decimal grammar of a numeric CSV cell, checked and converted in one pass (the
//! exact fast path for short numbers, Rust's parser for the rest).

/// How a cell reads as a number.
pub(super) enum NumberShape {
    Finite(f64),
    OutOfRange,
    NonFinite,
    NotANumber,
}

/// Strict decimal grammar: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), surrounding
/// blanks allowed, checked in one pass over the bytes.
///
/// A number of at most 19 digits whose digits make an integer below 2^53, scaled by a power of
/// ten up to 10^22, is computed here as one multiplication or division of two exactly
/// representable doubles, which IEEE 754 rounds correctly: the value Rust's parser gives (the
/// "fast path" of every correct float parser). That covers the cells of a typical ADaM export
/// (days, sequence numbers, results with a few decimals). Any other cell that passes the grammar
/// is handed to Rust's parser (which would also accept `inf` and `NaN`: those are classified
/// apart).
///
/// Long by design: one pass over the bytes as a single state machine, called for every cell.
pub(super) fn number_shape(cell: &[u8]) -> NumberShape {
    /// 10^0 … 10^22, every one exact in a double.
    const POWERS_OF_TEN: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let first = cell.iter().position(|&b| b != b' ').unwrap_or(cell.len());
    let last = cell
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(first, |at| at + 1);
    let bytes = &cell[first..last];
    // The digits read so far, as an integer (exact while there are at most 19 of them).
    let mut mantissa: u64 = 0;
    let digits_from = |mut at: usize, mantissa: &mut u64| {
        while let Some(digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            *mantissa = mantissa
                .wrapping_mul(10)
                .wrapping_add(u64::from(digit - b'0'));
            at += 1;
        }
        at
    };
    let negative = bytes.first() == Some(&b'-');
    let mut at = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let unsigned = &bytes[at..];
    let integer_end = digits_from(at, &mut mantissa);
    let mut mantissa_digits = integer_end - at;
    let mut fraction_digits = 0;
    at = integer_end;
    if bytes.get(at) == Some(&b'.') {
        let fraction_end = digits_from(at + 1, &mut mantissa);
        fraction_digits = fraction_end - (at + 1);
        mantissa_digits += fraction_digits;
        at = fraction_end;
    }
    let mut exponent_ok = true;
    let mut exponent: Option<i64> = Some(0);
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        let exponent_negative = bytes.get(at + 1) == Some(&b'-');
        at += 1 + usize::from(matches!(bytes.get(at + 1), Some(b'+' | b'-')));
        let mut written: u64 = 0;
        let exponent_end = digits_from(at, &mut written);
        exponent_ok = exponent_end > at;
        // More than 4 digits: leave it to the parser (it may still be in range, e.g. 1e-00005).
        exponent = (exponent_end - at <= 4).then(|| {
            let written = written as i64;
            if exponent_negative {
                -written
            } else {
                written
            }
        });
        at = exponent_end;
    }
    if mantissa_digits == 0 || !exponent_ok || at != bytes.len() {
        return if [&b"nan"[..], b"inf", b"infinity"]
            .iter()
            .any(|word| unsigned.eq_ignore_ascii_case(word))
        {
            NumberShape::NonFinite
        } else {
            NumberShape::NotANumber
        };
    }
    let exact = mantissa_digits <= 19 && mantissa < 1 << 53;
    let scale = exponent.map(|e| e - fraction_digits as i64);
    if let Some(scale) = scale.filter(|s| exact && s.abs() <= 22) {
        let whole = mantissa as f64;
        let power = POWERS_OF_TEN[scale.unsigned_abs() as usize];
        let value = if scale >= 0 {
            whole * power
        } else {
            whole / power
        };
        // A product can overflow only beyond 2^53 × 10^22, far below the largest double.
        return NumberShape::Finite(if negative { -value } else { value });
    }
    // The grammar admits ASCII only.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return NumberShape::NotANumber;
    };
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => NumberShape::Finite(value),
        Ok(_) => NumberShape::OutOfRange,
        Err(_) => NumberShape::NotANumber,
    }
}

#[cfg(test)]
mod number_shape_tests {
    use proptest::prelude::*;

    use super::{number_shape, NumberShape};

    /// The grammar as it was first written (split at `e` and `.`): the oracle of the one-pass
    /// [`number_shape`].
    ///
    /// Strict decimal grammar: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), surrounding
    /// blanks allowed. Rust's own parser also accepts `inf` and `NaN`, which are classified apart.
    fn number_shape_reference(cell: &str) -> NumberShape {
        let text = cell.trim_matches(' ');
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        if ["nan", "inf", "infinity"]
            .iter()
            .any(|word| unsigned.eq_ignore_ascii_case(word))
        {
            return NumberShape::NonFinite;
        }
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
            None => (unsigned, None),
        };
        let (integer, fraction) = match mantissa.split_once('.') {
            Some((integer, fraction)) => (integer, Some(fraction)),
            None => (mantissa, None),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let mantissa_ok = digits(integer)
            && fraction.is_none_or(digits)
            && !(integer.is_empty() && fraction.is_none_or(str::is_empty));
        let exponent_ok = exponent.is_none_or(|e| {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
        if !(mantissa_ok && exponent_ok) {
            return NumberShape::NotANumber;
        }
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => NumberShape::Finite(value),
            Ok(_) => NumberShape::OutOfRange,
            Err(_) => NumberShape::NotANumber,
        }
    }

    fn same(a: &NumberShape, b: &NumberShape) -> bool {
        match (a, b) {
            (NumberShape::Finite(x), NumberShape::Finite(y)) => x.to_bits() == y.to_bits(),
            (NumberShape::OutOfRange, NumberShape::OutOfRange)
            | (NumberShape::NonFinite, NumberShape::NonFinite)
            | (NumberShape::NotANumber, NumberShape::NotANumber) => true,
            _ => false,
        }
    }

    #[test]
    fn known_cells() {
        for (cell, finite) in [
            ("1", true),
            (" -2.5e-3 ", true),
            ("+.5", true),
            ("1.", true),
            (".", false),
            ("e5", false),
            ("1e", false),
            ("1e+", false),
            ("1.2.3", false),
            ("0x10", false),
            ("", false),
        ] {
            assert_eq!(
                matches!(number_shape(cell.as_bytes()), NumberShape::Finite(_)),
                finite,
                "{cell:?}"
            );
        }
        assert!(matches!(number_shape(b"-Infinity"), NumberShape::NonFinite));
        assert!(matches!(number_shape(b"nan"), NumberShape::NonFinite));
        assert!(matches!(number_shape(b"1e309"), NumberShape::OutOfRange));
    }

    proptest! {
        // 4,000 cases by default; PROPTEST_CASES sets another number for a longer run.
        #![proptest_config(ProptestConfig::with_cases(
            std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(4000)
        ))]

        #[test]
        fn the_one_pass_grammar_is_the_original_one(cell in "[0-9 .eE+-aAnNiIfFtTyY]{0,8}") {
            let (fast, reference) = (number_shape(cell.as_bytes()), number_shape_reference(&cell));
            prop_assert!(same(&fast, &reference), "{:?}", cell);
        }

        #[test]
        fn commas_found_by_words_are_the_ones_memchr_finds(
            line in proptest::collection::vec(prop_oneof![Just(b','), any::<u8>()], 0..80)
        ) {
            let mut found = Vec::new();
            super::super::lines::for_each_comma(&line, |at| {
                found.push(at);
                Ok::<(), ()>(())
            })
            .unwrap();
            prop_assert_eq!(found, memchr::memchr_iter(b',', &line).collect::<Vec<_>>());
        }

        #[test]
        fn numbers_computed_directly_equal_the_parsers(
            cell in " {0,2}[+-]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][+-]?[0-9]{1,5})? {0,2}"
        ) {
            let (fast, reference) = (number_shape(cell.as_bytes()), number_shape_reference(&cell));
            prop_assert!(same(&fast, &reference), "{:?}", cell);
        }
    }
}

//! Text from a bundle made safe for a terminal. Entry names, paths, field values and messages
//! come from whoever made the bundle; printed raw, an escape sequence could clear the screen,
//! retitle the window, hide a failure or forge a `PASS` line. Every control character (C0, DEL,
//! C1) and every character that reorders text (bidirectional overrides and isolates) is
//! written as a visible escape instead; the JSON report needs none of this (JSON escapes
//! control characters itself).

use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as it is.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character escaped: `\n` → `\x0a`, ESC → `\x1b`, U+202E → `\u{202e}`.
pub fn visible(text: &str) -> String {
    if !text.chars().any(unsafe_char) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_and_reordering_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(visible("artifacts/plot.png"), "artifacts/plot.png");
        assert_eq!(visible("Zoë – ✓"), "Zoë – ✓");
        assert_eq!(
            visible("a\u{1b}[2J\nPASS\r\u{7}\u{9b}\u{202e}gnp"),
            "a\\x1b[2J\\x0aPASS\\x0d\\x07\\x9b\\u{202e}gnp"
        );
    }
}

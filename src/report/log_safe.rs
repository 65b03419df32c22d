//! Text from agents and callers made safe for a log line: control
//! characters (a newline forging a second line, CR, BEL, escape sequences)
//! and the Unicode line and paragraph separators are written as escapes.
//! The JSON log format escapes them already; the text format prints a
//! message as it is.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character and U+2028/U+2029 escaped
/// (`\n`, `\r`, `\t`, `\u{7}`); borrowed when there is none.
pub fn log_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_escapes() {
        assert!(matches!(log_safe("plain ünïcode"), Cow::Borrowed(_)));
        assert_eq!(
            log_safe("a\nb\rc\td\x07e\x1b[31m\u{2028}f"),
            "a\\nb\\rc\\td\\u{7}e\\u{1b}[31m\\u{2028}f"
        );
        assert!(!log_safe("x\ny").contains('\n'));
    }
}

//! Byte-level scanning of JSON text for the cursor: digit runs, the end of
//! a string's plain run, and resolving a string's escapes.

pub(super) fn digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The index of the first `"`, `\\` or control character at or after `i`
/// (or `b.len()`), eight bytes at a time.
#[inline]
pub(super) fn find_special(b: &[u8], i: usize) -> usize {
    find_special_ascii(b, i).0
}

/// `find_special`, and whether every byte from `i` up to the one found is
/// ASCII (then that run is valid UTF-8 without further checking).
#[inline]
pub(super) fn find_special_ascii(b: &[u8], mut i: usize) -> (usize, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bits of the bytes passed so far.
    let mut high = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // A byte is flagged when it is zero after the xor (a quote or a
        // backslash) or below 0x20; the lowest flag is always exact.
        let quote = w ^ (ONES * u64::from(b'"'));
        let slash = w ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote
            | slash.wrapping_sub(ONES) & !slash
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        if flags != 0 {
            let at = flags.trailing_zeros() / 8;
            // The bytes of this word before the flagged one.
            let before = w & u64::MAX.checked_shr(64 - 8 * at).unwrap_or(0);
            return (i + at as usize, (high | before) & HIGH == 0);
        }
        high |= w;
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        high |= u64::from(c);
        i += 1;
    }
    (i, high & HIGH == 0)
}

/// Resolves the escapes of a raw string body the cursor has validated.
pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hi = hex4(&mut chars);
                let c = if (0xD800..0xDC00).contains(&hi) {
                    let rest = chars.as_str();
                    match rest.strip_prefix("\\u") {
                        Some(tail) => {
                            let mut low_chars = tail.chars();
                            let lo = hex4(&mut low_chars);
                            if (0xDC00..0xE000).contains(&lo) {
                                chars = low_chars;
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            } else {
                                None
                            }
                        }
                        None => None,
                    }
                } else {
                    char::from_u32(hi)
                };
                out.push(c.unwrap_or('\u{FFFD}'));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn hex4(chars: &mut std::str::Chars<'_>) -> u32 {
    let mut v = 0;
    for _ in 0..4 {
        v = v * 16 + chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One byte at a time.
    fn naive(b: &[u8], i: usize) -> (usize, bool) {
        let end = (i..b.len())
            .find(|&k| b[k] == b'"' || b[k] == b'\\' || b[k] < 0x20)
            .unwrap_or(b.len().max(i));
        (end, b.get(i..end).unwrap_or_default().is_ascii())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn the_word_scan_agrees_with_the_byte_scan(
            // Mostly plain ASCII, some specials and high bytes, at every
            // place in a word.
            b in proptest::collection::vec(prop_oneof![
                20 => 0x20u8..0x7f,
                1 => Just(b'"'),
                1 => Just(b'\\'),
                1 => 0u8..0x20,
                2 => 0x80u8..=0xff,
            ], 0..40),
            i in 0usize..40,
        ) {
            let i = i.min(b.len());
            prop_assert_eq!(find_special_ascii(&b, i), naive(&b, i));
        }
    }

    #[test]
    fn a_high_byte_after_the_special_does_not_count() {
        let b = b"abcdefg\"\xc3\xa9 more words";
        assert_eq!(find_special_ascii(b, 0), (7, true));
        assert_eq!(find_special_ascii(b"abc\xc3\xa9\"", 0), (5, false));
        assert_eq!(find_special_ascii(b"\xc3\xa9abcdefghij", 2), (12, true));
    }
}

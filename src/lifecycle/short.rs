//! An id kept where it is used: up to `INLINE` bytes are stored in place,
//! longer ones in a box. The registry holds one task id and one context id
//! per task; ids are short (UUIDs are 36 bytes), so a task costs no
//! allocation of its own, and comparing a key reads the slot that holds it
//! rather than a second, cold, heap block.

use std::fmt;

/// Longest id stored in place: a UUID with a short prefix (`task-…`).
const INLINE: usize = 46;

/// A string of any length, stored in place when short.
pub(crate) enum ShortStr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl ShortStr {
    pub(crate) fn new(s: &str) -> ShortStr {
        match s.len() {
            len @ 0..=INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..len].copy_from_slice(s.as_bytes());
                // `len` fits in a byte: INLINE is below 256.
                ShortStr::Inline {
                    len: len as u8,
                    bytes,
                }
            }
            _ => ShortStr::Boxed(s.into()),
        }
    }

    /// The text's bytes (cheaper to compare than `as_str`, which checks
    /// them again).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            ShortStr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            ShortStr::Boxed(s) => s.as_bytes(),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            // Copied from a `str` whole, so always valid UTF-8.
            ShortStr::Inline { .. } => std::str::from_utf8(self.as_bytes()).unwrap_or_default(),
            ShortStr::Boxed(s) => s,
        }
    }

    pub(crate) fn is(&self, s: &str) -> bool {
        self.as_bytes() == s.as_bytes()
    }
}

impl fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for ShortStr {
    fn eq(&self, other: &ShortStr) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for ShortStr {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_stay_in_place_and_long_ones_are_boxed() {
        let uuid = "task-3f6c1c52-8a7e-4c1e-9d2b-5a1f0e7c9b11";
        let cases = ["", "t", uuid, &"x".repeat(INLINE), &"é".repeat(40)];
        for s in cases {
            let id = ShortStr::new(s);
            assert_eq!(id.as_str(), s);
            assert_eq!(id.as_bytes(), s.as_bytes());
            assert!(id.is(s));
            assert!(!id.is(&format!("{s}!")));
            assert_eq!(id, ShortStr::new(s));
            assert_eq!(format!("{id:?}"), format!("{s:?}"));
            let inline = matches!(id, ShortStr::Inline { .. });
            assert_eq!(inline, s.len() <= INLINE, "{s}");
        }
        assert_eq!(std::mem::size_of::<ShortStr>(), 48);
        assert_eq!(std::mem::size_of::<Option<ShortStr>>(), 48);
    }

    #[test]
    fn a_char_is_never_cut_at_the_inline_limit() {
        // 45 ASCII bytes and a 2-byte char: 47 bytes, boxed whole.
        let s = format!("{}é", "a".repeat(INLINE - 1));
        let id = ShortStr::new(&s);
        assert!(matches!(id, ShortStr::Boxed(_)));
        assert_eq!(id.as_str(), s);
    }
}

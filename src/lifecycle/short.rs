//! An id kept where it is used: up to `INLINE` bytes are stored in place,
//! longer ones in a box, and ids over the operator's limit
//! (`analysis.max_id_bytes`) as their first bytes and a SHA-256 of the
//! whole. Ids come from peers and may be of any length; what is kept of one
//! is bounded whatever it is. Two ids compare equal exactly when they are
//! equal (a long one by its digest, which a peer cannot aim a collision at),
//! so no finding rests on a cut id. UUIDs are 36 bytes: a task costs no
//! allocation of its own, and comparing a key reads the slot that holds it.

use std::borrow::Cow;
use std::fmt;

/// Longest id stored in place: a UUID with a short prefix (`task-…`).
const INLINE: usize = 46;

/// The default of `analysis.max_id_bytes`: ids longer than this are kept
/// as a digest and shown cut.
pub const DEFAULT_MAX_ID_BYTES: usize = 256;

/// A string of any length, stored in place when short.
pub(crate) enum ShortStr {
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Boxed(Box<str>),
    /// An id over the limit: shown cut, compared by its digest.
    Long(Box<Long>),
}

/// What is kept of an id over the limit.
pub(crate) struct Long {
    /// Its first bytes, with the cut marked (`cut`).
    shown: Box<str>,
    len: usize,
    digest: [u8; 32],
}

fn sha256(s: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    let mut out = [0; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// `s` cut to at most `max` bytes at a character boundary, the cut marked
/// with how many bytes were left out: how ids and details are repeated in
/// records, log lines, spans and facts.
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…(+{} bytes)", &s[..end], s.len() - end))
}

/// `cut` of an owned string: no copy when it fits.
pub fn cut_owned(s: String, max: usize) -> String {
    match cut(&s, max) {
        Cow::Borrowed(_) => s,
        Cow::Owned(c) => c,
    }
}

impl ShortStr {
    /// `s` whole, whatever its length (ids the proxy itself bounds).
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

    /// `s` when it is at most `max` bytes; else its digest, shown cut.
    pub(crate) fn bounded(s: &str, max: usize) -> ShortStr {
        if s.len() <= max {
            return ShortStr::new(s);
        }
        ShortStr::Long(Box::new(Long {
            shown: cut(s, max).into(),
            len: s.len(),
            digest: sha256(s),
        }))
    }

    /// Whether the id was over the limit (kept as a digest).
    pub(crate) fn is_long(&self) -> bool {
        matches!(self, ShortStr::Long(_))
    }

    /// The id as shown: whole, or cut when it is over the limit.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            // Copied from a `str` whole, so always valid UTF-8.
            ShortStr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            ShortStr::Boxed(s) => s,
            ShortStr::Long(l) => &l.shown,
        }
    }

    /// Whether this is the id `s`, when it is kept in place: a quick test
    /// (false, looking no further, for an id kept boxed or as its digest).
    /// The last bytes are compared first, where ids that differ mostly do
    /// (counters, random ids).
    pub(crate) fn is_in_place(&self, s: &str) -> bool {
        match self {
            ShortStr::Inline { len, bytes } => {
                let kept = &bytes[..usize::from(*len)];
                kept.last() == s.as_bytes().last() && kept == s.as_bytes()
            }
            _ => false,
        }
    }

    /// Whether this is the id `s` (exactly, at any length).
    pub(crate) fn is(&self, s: &str) -> bool {
        match self {
            ShortStr::Inline { len, bytes } => &bytes[..usize::from(*len)] == s.as_bytes(),
            ShortStr::Boxed(b) => **b == *s,
            ShortStr::Long(l) => l.len == s.len() && l.digest == sha256(s),
        }
    }
}

impl fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for ShortStr {
    fn eq(&self, other: &ShortStr) -> bool {
        match (self, other) {
            (ShortStr::Long(a), ShortStr::Long(b)) => a.len == b.len && a.digest == b.digest,
            (ShortStr::Long(_), _) | (_, ShortStr::Long(_)) => false,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for ShortStr {}

impl std::hash::Hash for ShortStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            ShortStr::Long(l) => l.digest.hash(state),
            _ => self.as_str().hash(state),
        }
    }
}

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

    #[test]
    fn ids_over_the_limit_are_kept_bounded_and_compared_exactly() {
        let long = "é".repeat(300_000); // 600,000 bytes
        let id = ShortStr::bounded(&long, 256);
        assert!(id.is_long());
        assert!(id.as_str().len() < 300, "shown cut: {}", id.as_str().len());
        assert!(id.as_str().ends_with("…(+599744 bytes)"), "{}", id.as_str());
        assert!(id.is(&long));
        let mut other = long.clone();
        other.push('x');
        assert!(!id.is(&other));
        // Same first bytes, same length, one byte differing at the end.
        let twin = format!("{}ê", "é".repeat(299_999));
        assert!(!id.is(&twin));
        assert_ne!(id, ShortStr::bounded(&twin, 256));
        assert_eq!(id, ShortStr::bounded(&long, 256));
        // The shown text of a long id is never taken for the id.
        assert!(!id.is(id.as_str()));
        assert_ne!(ShortStr::bounded(id.as_str(), 4096), id);
        // At the limit an id is kept whole.
        let edge = "a".repeat(256);
        assert!(!ShortStr::bounded(&edge, 256).is_long());
    }

    #[test]
    fn in_place_ids_are_compared_whole() {
        let id = ShortStr::new("tsk_00000000000000a1");
        assert!(id.is_in_place("tsk_00000000000000a1"));
        for other in [
            "tsk_00000000000000b1",
            "tsk_00000000000000a",
            "",
            "1",
            "tsk_00000000000000a11",
        ] {
            assert!(!id.is_in_place(other), "{other}");
        }
        assert!(ShortStr::new("").is_in_place(""));
        // Boxed and digested ids are not compared here (`is` does).
        let boxed = "b".repeat(INLINE + 1);
        assert!(!ShortStr::new(&boxed).is_in_place(&boxed));
        assert!(!ShortStr::bounded(&boxed, 8).is_in_place(&boxed));
    }

    #[test]
    fn cut_marks_what_it_left_out() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc…(+1 bytes)");
        assert_eq!(cut("aé", 2), "a…(+2 bytes)");
        assert_eq!(cut_owned("abcd".into(), 10), "abcd");
    }
}

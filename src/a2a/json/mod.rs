//! A validating JSON cursor over text that is already valid UTF-8: the
//! decoder reads the few members it needs and skips everything else (parts,
//! metadata, history) without building it or allocating. The grammar is RFC
//! 8259's. What the decoder reads may nest 128 levels (serde_json's limit,
//! and a bound on recursion); what it skips may nest at any depth.

use std::fmt;

mod cursor;
pub(crate) mod members;
mod scan;
mod skip;

pub(crate) use cursor::Cursor;
use scan::{find_special_ascii, unescape};

/// Why the text is not what the cursor expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// Not JSON at all: the grammar is broken at this byte offset.
    Syntax { what: &'static str, at: usize },
    /// Valid JSON of the wrong type for the member the reader wanted.
    Type {
        member: &'static str,
        want: &'static str,
    },
    /// A member the decoder reads appears twice in one object.
    Duplicate(&'static str),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax { what, at } => write!(f, "{what} at byte {at}"),
            JsonError::Type { member, want } => write!(f, "`{member}` is not {want}"),
            JsonError::Duplicate(member) => write!(f, "duplicate member `{member}`"),
        }
    }
}

/// The cursor stopped at an error, which it holds (`Cursor::take_error`).
/// Zero-sized, so a `Result` costs no more than its value to move: the
/// decoder returns one from every token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stop;

pub(crate) type Result<T> = std::result::Result<T, Stop>;

/// A JSON string as it appears between its quotes (validated). Two words,
/// so results carrying one come back in registers; whether it has escapes
/// is asked of the text, which is short and seldom escaped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JStr<'a> {
    raw: &'a str,
}

impl<'a> JStr<'a> {
    /// The text as sent, which is the value unless it has escapes.
    #[inline]
    pub(crate) fn as_sent(self) -> &'a str {
        self.raw
    }

    /// Whether the text has escapes (so the value differs from it).
    #[inline]
    pub(crate) fn escaped(self) -> bool {
        self.raw.as_bytes().contains(&b'\\')
    }

    /// The value without escapes (lone surrogates become U+FFFD),
    /// borrowed when there were none.
    pub(crate) fn value(self) -> std::borrow::Cow<'a, str> {
        if self.escaped() {
            std::borrow::Cow::Owned(unescape(self.raw))
        } else {
            std::borrow::Cow::Borrowed(self.raw)
        }
    }
}

/// Where the string whose content goes on at `from` in `b` closes, if it
/// has no escape or control character from there to its closing quote, and
/// whether that run is valid UTF-8.
pub(crate) fn plain_string_end(b: &[u8], from: usize) -> Option<(usize, bool)> {
    let (end, ascii) = find_special_ascii(b, from);
    if b.get(end) != Some(&b'"') {
        return None;
    }
    Some((
        end,
        ascii
            || b.get(from..end)
                .is_some_and(|s| std::str::from_utf8(s).is_ok()),
    ))
}

/// The type of the value the cursor is at, by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// Where the longest strings without escapes that `skip_value` skipped lie
/// (at most four, each between its quotes; empty strings are not noted).
/// What the decoder reads does not depend on their content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Skipped([(u32, u32); 4]);

impl Skipped {
    /// Notes the string between `start` and `end` if it is longer than the
    /// shortest one noted.
    #[inline]
    fn note(&mut self, start: usize, end: usize) {
        let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(end)) else {
            return;
        };
        let len = |(s, e): (u32, u32)| e - s;
        let mut at = 0;
        for i in 1..self.0.len() {
            if len(self.0[i]) < len(self.0[at]) {
                at = i;
            }
        }
        if end - start > len(self.0[at]) {
            self.0[at] = (start, end);
        }
    }

    /// The noted string that holds the bytes from `from` to `to`, if one
    /// does: where it lies.
    pub(crate) fn around(&self, from: usize, to: usize) -> Option<(usize, usize)> {
        self.0
            .iter()
            .map(|&(s, e)| (s as usize, e as usize))
            .find(|&(s, e)| s < e && s <= from && to <= e)
    }

    /// Whether no string was noted.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|&(s, e)| s == e)
    }
}

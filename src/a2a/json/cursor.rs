//! The cursor: one position in the text, the values read there, and the
//! error it stopped at.

use super::scan::{digits, find_special, unescape};
use super::{JStr, JsonError, Kind, Result, Skipped, Stop};

/// Deepest nesting of what the decoder reads (serde_json's recursion limit).
const MAX_DEPTH: u32 = 128;

/// A position in a JSON text.
pub(crate) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) depth: u32,
    /// Why the cursor stopped, once it has.
    pub(super) error: Option<JsonError>,
    /// The longest strings without escapes that `skip_value` skipped, when
    /// asked for (`noting_skipped`).
    pub(super) skipped: Option<Skipped>,
    /// The last member name read had no escapes (the scan tells; asking
    /// the text again would scan it twice).
    pub(super) key_plain: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            depth: 0,
            error: None,
            skipped: None,
            key_plain: true,
        }
    }

    /// A cursor that notes where the longest strings without escapes that
    /// `skip_value` skips lie (`skipped`).
    pub(crate) fn noting_skipped(text: &'a str) -> Cursor<'a> {
        Cursor {
            skipped: Some(Skipped::default()),
            ..Cursor::new(text)
        }
    }

    /// Where the longest strings without escapes that were skipped lie
    /// (nothing, unless the cursor was made `noting_skipped`).
    pub(crate) fn skipped(&self) -> Skipped {
        self.skipped.unwrap_or_default()
    }

    /// Where the cursor is (an offset into the text).
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(super) fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Stops at a syntax error at the current position.
    pub(super) fn err<T>(&mut self, what: &'static str) -> Result<T> {
        self.fail(JsonError::Syntax { what, at: self.pos })
    }

    /// Stops with `error`.
    #[cold]
    pub(crate) fn fail<T>(&mut self, error: JsonError) -> Result<T> {
        self.error = Some(error);
        Err(Stop)
    }

    /// Stops: `member` holds valid JSON of the wrong type.
    pub(crate) fn type_error<T>(&mut self, member: &'static str, want: &'static str) -> Result<T> {
        self.fail(JsonError::Type { member, want })
    }

    /// Why the cursor stopped (after a `Stop`).
    pub(crate) fn take_error(&mut self) -> JsonError {
        self.error.take().unwrap_or(JsonError::Syntax {
            what: "stopped",
            at: self.pos,
        })
    }

    #[inline]
    pub(super) fn skip_ws(&mut self) {
        let b = self.bytes();
        // Compact JSON has none: every other byte that may follow is above
        // the space.
        if b.get(self.pos).is_some_and(|&c| c > b' ') {
            return;
        }
        while let Some(c) = b.get(self.pos) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.pos += 1;
        }
    }

    /// Ok when only whitespace is left.
    pub(crate) fn end(&mut self) -> Result<()> {
        self.skip_ws();
        if self.pos == self.text.len() {
            Ok(())
        } else {
            self.err("trailing characters")
        }
    }

    /// The type of the next value (after whitespace).
    #[inline]
    pub(crate) fn peek(&mut self) -> Result<Kind> {
        self.skip_ws();
        Ok(match self.bytes().get(self.pos) {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b'-' | b'0'..=b'9') => Kind::Number,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            Some(_) => return self.err("expected a value"),
            None => return self.err("unexpected end"),
        })
    }

    #[inline]
    pub(super) fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.bytes().get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    fn nest(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("nesting deeper than 128 levels");
        }
        Ok(())
    }

    /// Enters an object (the cursor must be at `{`).
    #[inline]
    pub(crate) fn begin_object(&mut self) -> Result<()> {
        if !self.eat(b'{') {
            return self.err("expected '{'");
        }
        self.nest()
    }

    /// The next key of the object being read, or `None` after its `}` or
    /// at an error: after the loop, `check` tells which. (An option of two
    /// words comes back in registers; a result of one would not.) `first`
    /// starts true for each object.
    #[inline]
    pub(crate) fn next_key(&mut self, first: &mut bool) -> Option<JStr<'a>> {
        self.skip_ws();
        match self.bytes().get(self.pos) {
            Some(b'}') => {
                self.pos += 1;
                self.depth -= 1;
                return None;
            }
            Some(b',') if !*first => {
                self.pos += 1;
                self.skip_ws();
            }
            _ if *first => {}
            _ => return self.err("expected ',' or '}'").ok(),
        }
        *first = false;
        self.key().ok()
    }

    /// Whether the member name `next_key` last gave has escapes (so its
    /// value differs from its text as sent).
    #[inline]
    pub(crate) fn key_escaped(&self) -> bool {
        !self.key_plain
    }

    /// Err when the cursor has stopped at an error.
    #[inline]
    pub(crate) fn check(&self) -> Result<()> {
        match self.error {
            None => Ok(()),
            Some(_) => Err(Stop),
        }
    }

    /// A member name and its colon.
    #[inline]
    pub(super) fn key(&mut self) -> Result<JStr<'a>> {
        if self.bytes().get(self.pos) != Some(&b'"') {
            return self.err("expected a member name");
        }
        let (key, plain) = self.string_scan()?;
        self.key_plain = plain;
        if !self.eat(b':') {
            return self.err("expected ':'");
        }
        Ok(key)
    }

    /// Enters an array (the cursor must be at `[`).
    pub(crate) fn begin_array(&mut self) -> Result<()> {
        if !self.eat(b'[') {
            return self.err("expected '['");
        }
        self.nest()
    }

    /// True when another item follows, false after the array's `]`.
    /// `first` starts true for each array.
    #[inline]
    pub(crate) fn next_item(&mut self, first: &mut bool) -> Result<bool> {
        self.skip_ws();
        match self.bytes().get(self.pos) {
            Some(b']') => {
                self.pos += 1;
                self.depth -= 1;
                Ok(false)
            }
            Some(b',') if !*first => {
                self.pos += 1;
                Ok(true)
            }
            _ if *first => {
                *first = false;
                Ok(true)
            }
            _ => self.err("expected ',' or ']'"),
        }
    }

    /// A string value.
    #[inline]
    pub(crate) fn string(&mut self) -> Result<JStr<'a>> {
        self.string_and_plain().map(|(s, _)| s)
    }

    /// A string value without its escapes (borrowed when it had none, which
    /// the scan tells).
    #[inline]
    pub(crate) fn string_value(&mut self) -> Result<std::borrow::Cow<'a, str>> {
        let (s, plain) = self.string_and_plain()?;
        Ok(if plain {
            std::borrow::Cow::Borrowed(s.raw)
        } else {
            std::borrow::Cow::Owned(unescape(s.raw))
        })
    }

    /// A string value, and whether it has no escapes.
    #[inline(always)]
    fn string_and_plain(&mut self) -> Result<(JStr<'a>, bool)> {
        self.skip_ws();
        if self.bytes().get(self.pos) != Some(&b'"') {
            return self.err("expected a string");
        }
        self.string_scan()
    }

    /// The string at `pos` (its opening quote): validates escapes and
    /// control characters, leaves the cursor after the closing quote.
    #[inline(always)]
    pub(super) fn string_body(&mut self) -> Result<JStr<'a>> {
        self.string_scan().map(|(s, _)| s)
    }

    /// `string_body`, and whether the string has no escapes.
    #[inline(always)]
    pub(super) fn string_scan(&mut self) -> Result<(JStr<'a>, bool)> {
        let b = self.bytes();
        let start = self.pos + 1;
        let mut i = start;
        let mut plain = true;
        loop {
            i = find_special(b, i);
            match b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        plain = false;
                        i += 2;
                    }
                    Some(b'u') => {
                        plain = false;
                        let hex = b.get(i + 2..i + 6).unwrap_or_default();
                        if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                            self.pos = i;
                            return self.err("invalid \\u escape");
                        }
                        i += 6;
                    }
                    _ => {
                        self.pos = i;
                        return self.err("invalid escape");
                    }
                },
                Some(_) => {
                    self.pos = i;
                    return self.err("control character in string");
                }
                None => {
                    self.pos = i;
                    return self.err("unterminated string");
                }
            }
        }
        self.pos = i + 1;
        // Quotes and backslashes are ASCII: both ends are char boundaries.
        let raw = self.text.get(start..i).unwrap_or_default();
        Ok((JStr { raw }, plain))
    }

    /// A number value's text, validated against the JSON grammar.
    pub(crate) fn number(&mut self) -> Result<&'a str> {
        self.skip_ws();
        let b = self.bytes();
        let start = self.pos;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(b, i),
            _ => {
                self.pos = i;
                return self.err("invalid number");
            }
        }
        if b.get(i) == Some(&b'.') {
            if !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                self.pos = i;
                return self.err("invalid number");
            }
            i = digits(b, i + 1);
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                self.pos = i;
                return self.err("invalid number");
            }
            i = digits(b, i);
        }
        self.pos = i;
        Ok(self.text.get(start..i).unwrap_or_default())
    }

    /// A `true` or `false` value.
    #[inline]
    pub(crate) fn bool(&mut self) -> Result<bool> {
        self.skip_ws();
        let rest = &self.bytes()[self.pos.min(self.text.len())..];
        if rest.starts_with(b"true") {
            self.pos += 4;
            Ok(true)
        } else if rest.starts_with(b"false") {
            self.pos += 5;
            Ok(false)
        } else {
            self.err("expected true or false")
        }
    }

    /// A `null` value.
    #[inline]
    pub(crate) fn null(&mut self) -> Result<()> {
        self.skip_ws();
        if self.bytes()[self.pos.min(self.text.len())..].starts_with(b"null") {
            self.pos += 4;
            Ok(())
        } else {
            self.err("expected null")
        }
    }
}

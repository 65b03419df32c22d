//! A validating JSON cursor over text that is already valid UTF-8: the
//! decoder reads the few members it needs and skips everything else (parts,
//! metadata, history) without building it or allocating. The grammar is RFC
//! 8259's. What the decoder reads may nest 128 levels (serde_json's limit,
//! and a bound on recursion); what it skips may nest at any depth.

use std::fmt;

mod text;

use text::{digits, find_special, find_special_ascii, unescape};

/// Deepest nesting of what the decoder reads (serde_json's recursion limit).
const MAX_DEPTH: u32 = 128;

/// Why the text is not what the cursor expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// Not JSON at all: the grammar is broken at this byte offset.
    Syntax { what: &'static str, at: usize },
    /// Valid JSON of the wrong type for an A2A member.
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

/// A position in a JSON text.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
    /// Why the cursor stopped, once it has.
    error: Option<JsonError>,
    /// The longest strings without escapes that `skip_value` skipped, when
    /// asked for (`noting_skipped`).
    skipped: Option<Skipped>,
    /// The flags of the artifact updates the decoder built from this text,
    /// and how many it built (noted with `skipped`).
    flags: Flags,
    updates: u32,
    /// The last member name read had no escapes (the scan tells; asking
    /// the text again would scan it twice).
    key_plain: bool,
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

/// Where the `true`/`false` literals of an artifact update's `append` and
/// `lastChunk` lie (the offset of their first byte; `None` when the member
/// was absent or `null`). When the decoding built exactly one artifact
/// update, the other literal in place of one of these changes that flag of
/// the update and nothing else the decoder reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub append: Option<u32>,
    pub last_chunk: Option<u32>,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            depth: 0,
            error: None,
            skipped: None,
            flags: Flags::default(),
            updates: 0,
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

    /// Notes that the decoder built an artifact update whose flags were
    /// read at `flags`.
    pub(crate) fn built_update(&mut self, flags: Flags) {
        if self.skipped.is_some() {
            self.flags = flags;
            self.updates += 1;
        }
    }

    /// The flags of the one artifact update the decoder built (none if it
    /// built several, or none, or the cursor was not made
    /// `noting_skipped`).
    pub(crate) fn flags(&self) -> Flags {
        if self.updates == 1 {
            self.flags
        } else {
            Flags::default()
        }
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Stops at a syntax error at the current position.
    fn err<T>(&mut self, what: &'static str) -> Result<T> {
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
    fn skip_ws(&mut self) {
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
    fn eat(&mut self, c: u8) -> bool {
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
    fn key(&mut self) -> Result<JStr<'a>> {
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
    fn string_body(&mut self) -> Result<JStr<'a>> {
        self.string_scan().map(|(s, _)| s)
    }

    /// `string_body`, and whether the string has no escapes.
    #[inline(always)]
    fn string_scan(&mut self) -> Result<(JStr<'a>, bool)> {
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

    /// Skips a string, noting where it lies if it has no escapes.
    #[inline(never)]
    fn skip_string_noting(&mut self) -> Result<()> {
        let (s, plain) = self.string_scan()?;
        if let (Some(skipped), true) = (&mut self.skipped, plain) {
            // After the closing quote, one byte.
            let end = self.pos - 1;
            skipped.note(end - s.as_sent().len(), end);
        }
        Ok(())
    }

    /// Skips one value of any type, validating it, without recursion and
    /// at any depth (the nesting limit is for what the decoder reads).
    pub(crate) fn skip_value(&mut self) -> Result<()> {
        let mut open = Containers::default();
        loop {
            match self.peek()? {
                Kind::Object => {
                    self.pos += 1;
                    if self.eat(b'}') {
                        // An empty object is a whole value.
                    } else {
                        self.skip_ws();
                        self.key()?;
                        open.push(true);
                        continue;
                    }
                }
                Kind::Array => {
                    self.pos += 1;
                    if self.eat(b']') {
                        // An empty array is a whole value.
                    } else {
                        open.push(false);
                        continue;
                    }
                }
                Kind::String => {
                    if self.skipped.is_some() {
                        self.skip_string_noting()?;
                    } else {
                        self.string_body()?;
                    }
                }
                Kind::Number => {
                    self.number()?;
                }
                Kind::Bool => {
                    self.bool()?;
                }
                Kind::Null => self.null()?,
            }
            // After a value: close what ends here, or go on to the next one.
            loop {
                let Some(in_object) = open.top() else {
                    return Ok(());
                };
                self.skip_ws();
                match self.bytes().get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        if in_object {
                            self.skip_ws();
                            self.key()?;
                        }
                        break;
                    }
                    Some(b'}') if in_object => {
                        self.pos += 1;
                        open.pop();
                    }
                    Some(b']') if !in_object => {
                        self.pos += 1;
                        open.pop();
                    }
                    _ if in_object => return self.err("expected ',' or '}'"),
                    _ => return self.err("expected ',' or ']'"),
                }
            }
        }
    }
}

/// The containers `skip_value` is inside: whether each is an object. The
/// first 128 levels live in a word; deeper ones (legal, if odd) spill.
#[derive(Default)]
struct Containers {
    bits: u128,
    len: u32,
    deeper: Vec<bool>,
}

impl Containers {
    fn push(&mut self, object: bool) {
        if self.len < 128 {
            self.bits = self.bits & !(1 << self.len) | u128::from(object) << self.len;
        } else {
            self.deeper.push(object);
        }
        self.len += 1;
    }

    fn top(&self) -> Option<bool> {
        match self.len {
            0 => None,
            n if n <= 128 => Some(self.bits & 1 << (n - 1) != 0),
            _ => self.deeper.last().copied(),
        }
    }

    fn pop(&mut self) {
        if self.len > 128 {
            self.deeper.pop();
        }
        self.len = self.len.saturating_sub(1);
    }
}

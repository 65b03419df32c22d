//! Skipping a value of any type, validated, at any depth and without
//! recursion: everything the decoder does not read goes through here.

use super::{Cursor, Kind, Result};

impl Cursor<'_> {
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

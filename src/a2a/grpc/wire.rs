//! The protobuf wire format read in place: varints, keys, length-delimited
//! runs borrowed from the message, and unknown fields skipped. Every check
//! is prost's (0.13), so a message one accepts the other accepts: a varint
//! of at most 10 bytes whose 10th byte is 0 or 1, a key within 32 bits
//! with a wire type of 0 to 5 and a field number above 0, lengths within
//! the bytes left, groups closed by their own number, and at most 100
//! levels of nesting.

use std::fmt;

/// How deep prost lets messages and groups nest (its `RECURSION_LIMIT`):
/// each level spends one, and reading at none left is an error.
pub(super) const DEPTH: u32 = 100;

/// A field's wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WireType {
    Varint,
    Fixed64,
    Len,
    StartGroup,
    EndGroup,
    Fixed32,
}

/// Why bytes are not the message they should be: what is wrong, and the
/// innermost declared field it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WireError {
    what: &'static str,
    field: Option<&'static str>,
}

impl WireError {
    fn new(what: &'static str) -> WireError {
        WireError { what, field: None }
    }

    /// More elements in the repeated fields than judging reads.
    pub(super) fn over() -> WireError {
        WireError::new("more repeated elements than judging reads")
    }

    /// The error, found in `field` unless a field inside it was named.
    pub(super) fn at(mut self, field: &'static str) -> WireError {
        self.field.get_or_insert(field);
        self
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "{field}: {}", self.what),
            None => f.write_str(self.what),
        }
    }
}

/// What reading a message gives.
pub(super) type Result<T> = std::result::Result<T, WireError>;

/// A cursor over the bytes of one message (a whole message, or the run of
/// an embedded one: its fields end where its run ends).
pub(super) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the first field of `msg`.
    pub(super) fn new(msg: &'a [u8]) -> Reader<'a> {
        Reader { rest: msg }
    }

    /// The next field's number and wire type; `None` at the message's end.
    pub(super) fn field(&mut self) -> Result<Option<(u32, WireType)>> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        self.key().map(Some)
    }

    /// A key: the field number and the wire type.
    fn key(&mut self) -> Result<(u32, WireType)> {
        let key = self.varint()?;
        let key = u32::try_from(key).map_err(|_| WireError::new("invalid key value"))?;
        let wire = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return Err(WireError::new("invalid wire type value")),
        };
        match key >> 3 {
            0 => Err(WireError::new("invalid tag value: 0")),
            number => Ok((number, wire)),
        }
    }

    /// A base-128 varint: at most 10 bytes, the 10th holding only the
    /// 64th bit (as prost and protobuf-go read it).
    fn varint(&mut self) -> Result<u64> {
        // One byte: every key of these messages and most lengths.
        if let Some((&byte, rest)) = self.rest.split_first() {
            if byte < 0x80 {
                self.rest = rest;
                return Ok(u64::from(byte));
            }
        }
        let mut value = 0u64;
        for (i, &byte) in self.rest.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                if i == 9 && byte > 1 {
                    break;
                }
                self.rest = &self.rest[i + 1..];
                return Ok(value);
            }
        }
        Err(WireError::new("invalid varint"))
    }

    /// The next `len` bytes.
    fn take(&mut self, len: u64) -> Result<&'a [u8]> {
        match usize::try_from(len) {
            Ok(len) if len <= self.rest.len() => {
                let (run, rest) = self.rest.split_at(len);
                self.rest = rest;
                Ok(run)
            }
            _ => Err(WireError::new("buffer underflow")),
        }
    }

    /// A varint field's value (an `int64`, `int32` or `bool` is read from
    /// it as prost does: `as i64`, `as i32`, `!= 0`).
    pub(super) fn uint(&mut self, wire: WireType) -> Result<u64> {
        expect(WireType::Varint, wire)?;
        self.varint()
    }

    /// A `bool` field.
    pub(super) fn bool(&mut self, wire: WireType) -> Result<bool> {
        self.uint(wire).map(|v| v != 0)
    }

    /// An `int32` field: the varint cut to its low 32 bits.
    pub(super) fn int32(&mut self, wire: WireType) -> Result<i32> {
        self.uint(wire).map(|v| v as i32)
    }

    /// A `string` field, borrowed: invalid UTF-8 is an error.
    pub(super) fn string(&mut self, wire: WireType) -> Result<&'a str> {
        expect(WireType::Len, wire)?;
        let len = self.varint()?;
        let run = self.take(len)?;
        std::str::from_utf8(run).map_err(|_| WireError::new("invalid string value: not UTF-8"))
    }

    /// The embedded message of field `field`, read at `depth` (what
    /// nesting is left where the field is) by `read`, which is given its
    /// run and the depth its own fields are read at; an error is put at
    /// `field` unless it already names a field inside.
    pub(super) fn nested<T>(
        &mut self,
        wire: WireType,
        depth: u32,
        field: &'static str,
        read: impl FnOnce(&'a [u8], u32) -> Result<T>,
    ) -> Result<T> {
        self.message(wire, depth)
            .and_then(|run| read(run, depth - 1))
            .map_err(|e| e.at(field))
    }

    /// An embedded message's run, read at `depth` (what nesting is left
    /// where its field is): its fields are read at `depth - 1`.
    pub(super) fn message(&mut self, wire: WireType, depth: u32) -> Result<&'a [u8]> {
        expect(WireType::Len, wire)?;
        if depth == 0 {
            return Err(WireError::new("recursion limit reached"));
        }
        let len = self.varint()?;
        self.take(len)
    }

    /// Passes over a field no message here declares, whatever its wire
    /// type; a group is passed over to its end, with what it holds.
    pub(super) fn skip(&mut self, number: u32, wire: WireType, depth: u32) -> Result<()> {
        if depth == 0 {
            return Err(WireError::new("recursion limit reached"));
        }
        match wire {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.take(8).map(drop),
            WireType::Fixed32 => self.take(4).map(drop),
            WireType::Len => {
                let len = self.varint()?;
                self.take(len).map(drop)
            }
            WireType::StartGroup => loop {
                match self.key()? {
                    (inner, WireType::EndGroup) if inner == number => return Ok(()),
                    (_, WireType::EndGroup) => {
                        return Err(WireError::new("unexpected end group tag"))
                    }
                    (inner, wire) => self.skip(inner, wire, depth - 1)?,
                }
            },
            WireType::EndGroup => Err(WireError::new("unexpected end group tag")),
        }
    }
}

/// A declared field sent with another wire type than its own.
fn expect(want: WireType, got: WireType) -> Result<()> {
    if want == got {
        Ok(())
    } else {
        Err(WireError::new("invalid wire type"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(bytes: &[u8]) -> Result<u64> {
        Reader::new(bytes).varint()
    }

    #[test]
    fn varints_are_at_most_ten_bytes_and_64_bits() {
        assert_eq!(varint(&[0x00]), Ok(0));
        assert_eq!(varint(&[0x96, 0x01]), Ok(150));
        assert_eq!(varint(&[0x80, 0x00]), Ok(0), "not the shortest, still read");
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint(&max), Ok(u64::MAX));
        let mut over = max;
        over[9] = 0x02;
        assert!(varint(&over).is_err(), "past 64 bits");
        assert!(varint(&[0x80; 10]).is_err(), "no end in 10 bytes");
        assert!(varint(&[0x80; 11]).is_err());
        assert!(varint(&[0x80]).is_err(), "cut short");
        assert!(varint(&[]).is_err());
    }

    #[test]
    fn keys_hold_a_number_above_0_and_a_wire_type_up_to_5() {
        let key = |b: &[u8]| Reader::new(b).key();
        assert_eq!(key(&[0x0a]), Ok((1, WireType::Len)));
        assert!(key(&[0x02]).is_err(), "field 0");
        assert!(key(&[0x0e]).is_err(), "wire type 6");
        assert!(key(&[0x0f]).is_err(), "wire type 7");
        // 2^32 + 8: past the 32 bits a key may take.
        assert!(key(&[0x88, 0x80, 0x80, 0x80, 0x10]).is_err());
    }

    #[test]
    fn groups_are_skipped_to_their_own_end() {
        let skip = |b: &[u8]| {
            let mut r = Reader::new(b);
            let (n, w) = r.key()?;
            r.skip(n, w, DEPTH)?;
            Ok::<_, WireError>(r.rest.len())
        };
        // Group 1 holding a varint and group 2: then one byte left.
        assert_eq!(skip(&[0x0b, 0x08, 0x01, 0x13, 0x14, 0x0c, 0xff]), Ok(1));
        assert!(skip(&[0x0b, 0x14]).is_err(), "closed by another number");
        assert!(skip(&[0x0b, 0x08, 0x01]).is_err(), "never closed");
        assert!(skip(&[0x0c]).is_err(), "an end with no start");
        // 99 groups inside a group: allowed; one more is past the depth.
        let nested = |n: usize| [vec![0x0b; n], vec![0x08, 0x00], vec![0x0c; n]].concat();
        assert_eq!(skip(&nested(99)), Ok(0));
        assert!(skip(&nested(100)).is_err());
    }
}

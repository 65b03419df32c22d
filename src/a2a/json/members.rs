//! Reading members of the types a reader wants: `null` as absent, a type
//! error naming the member, an integer as serde_json classifies it, an
//! object's named members (each at most once) with the rest skipped.

use super::{Cursor, JStr, JsonError, Kind, Result};

/// Tracks which of an object's (at most 32) read members it has sent; a
/// second one is an error.
pub(crate) struct Seen(pub(crate) u32);

impl Seen {
    pub(crate) fn once(
        &mut self,
        cur: &mut Cursor<'_>,
        i: usize,
        name: &'static str,
    ) -> Result<&'static str> {
        let bit = 1 << i;
        if self.0 & bit != 0 {
            return cur.fail(JsonError::Duplicate(name));
        }
        self.0 |= bit;
        Ok(name)
    }
}

/// Whether a member of any type is there (`null` counts as absent); the
/// value is skipped.
#[inline]
pub(crate) fn present(cur: &mut Cursor<'_>) -> Result<bool> {
    if cur.peek()? == Kind::Null {
        cur.null()?;
        return Ok(false);
    }
    cur.skip_value()?;
    Ok(true)
}

/// A member's value read by `f`, which gets the value's type; `null` is
/// `None` (serde's reading of an `Option` member).
#[inline]
pub(crate) fn nullable<'a, T>(
    cur: &mut Cursor<'a>,
    f: impl FnOnce(&mut Cursor<'a>, Kind) -> Result<T>,
) -> Result<Option<T>> {
    match cur.peek()? {
        Kind::Null => cur.null().map(|()| None),
        kind => f(cur, kind).map(Some),
    }
}

#[inline]
pub(crate) fn string<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<Option<JStr<'a>>> {
    nullable(cur, |cur, kind| match kind {
        Kind::String => cur.string(),
        _ => cur.type_error(m, "a string"),
    })
}

#[inline]
pub(crate) fn boolean(cur: &mut Cursor<'_>, m: &'static str) -> Result<Option<bool>> {
    nullable(cur, |cur, kind| match kind {
        Kind::Bool => cur.bool(),
        _ => cur.type_error(m, "a boolean"),
    })
}

/// Where the `true` or `false` literal just read as `value` began.
pub(crate) fn literal_at(cur: &Cursor<'_>, value: Option<bool>) -> Option<u32> {
    let len = if value? { 4 } else { 5 };
    u32::try_from(cur.offset().checked_sub(len)?).ok()
}

/// An integer as serde_json classifies it: one that fits u64, else a
/// negative one that fits i64. Floats are not integers (`want` names what
/// was expected); numbers out of every range are not read.
pub(crate) enum Int {
    Unsigned(u64),
    Negative(i64),
}

/// The integer at the cursor (which is at a number).
pub(crate) fn integer(cur: &mut Cursor<'_>, m: &'static str, want: &'static str) -> Result<Int> {
    let Ok(n) = cur.number()?.parse::<serde_json::Number>() else {
        return cur.type_error(m, "a number in range");
    };
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => Ok(Int::Unsigned(u)),
        (None, Some(i)) => Ok(Int::Negative(i)),
        _ => cur.type_error(m, want),
    }
}

/// An array of objects, each read by `each` (the cursor at its `{`);
/// `false` for `null`.
pub(crate) fn objects<'a>(
    cur: &mut Cursor<'a>,
    m: &'static str,
    mut each: impl FnMut(&mut Cursor<'a>) -> Result<()>,
) -> Result<bool> {
    let read = nullable(cur, |cur, kind| match kind {
        Kind::Array => {
            cur.begin_array()?;
            let mut first = true;
            while cur.next_item(&mut first)? {
                if cur.peek()? != Kind::Object {
                    return cur.type_error(m, "an array of objects");
                }
                each(cur)?;
            }
            Ok(())
        }
        _ => cur.type_error(m, "an array"),
    })?;
    Ok(read.is_some())
}

/// Reads an object that is not the union shape (the cursor at its `{`):
/// `f` reads the value of each member named in `names` (by its index),
/// the others are skipped, and a named member sent twice is an error.
pub(crate) fn members<'a>(
    cur: &mut Cursor<'a>,
    names: &[&'static str],
    mut f: impl FnMut(&mut Cursor<'a>, usize) -> Result<()>,
) -> Result<()> {
    cur.begin_object()?;
    let mut seen = Seen(0);
    let mut first = true;
    while let Some(key) = cur.next_key(&mut first) {
        // Matched as sent; an escaped name (never one of `names` as sent)
        // by its value.
        let found = match names.iter().position(|n| *n == key.as_sent()) {
            None if cur.key_escaped() => names.iter().position(|n| *n == key.value()),
            found => found,
        };
        match found {
            Some(i) => {
                seen.once(cur, i, names[i])?;
                f(cur, i)?;
            }
            None => cur.skip_value()?,
        }
    }
    cur.check()
}

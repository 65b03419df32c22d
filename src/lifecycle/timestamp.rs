//! RFC 3339 status timestamps → a comparable instant, without a date crate.

/// A point in time: seconds since the Unix epoch (UTC) and nanoseconds
/// within that second. Ordered chronologically.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    pub secs: i64,
    pub nanos: u32,
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`. Accepts `t`/`z`/space
/// spellings, `±HHMM` offsets and (as the Python SDK sometimes sends) no
/// offset at all, which is read as UTC. Fractions beyond nanoseconds are
/// truncated. Anything else is `None`: an unreadable stamp is ignored, never
/// guessed.
pub fn parse(s: &str) -> Option<Stamp> {
    let b = s.trim().as_bytes();
    if b.len() < 19 {
        return None;
    }
    let year = num(b, 0, 4)?;
    let month = num(b, 5, 2)?;
    let day = num(b, 8, 2)?;
    let hour = num(b, 11, 2)?;
    let min = num(b, 14, 2)?;
    let sec = num(b, 17, 2)?;
    let seps_ok = b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !seps_ok
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || min > 59
        || sec > 60
    {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(d - b'0');
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return None;
        }
        for _ in digits..9 {
            nanos *= 10;
        }
    }
    let offset = match &b[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest {
                [_, _, b':', _, _] => (num(rest, 0, 2)?, num(rest, 3, 2)?),
                [_, _, _, _] => (num(rest, 0, 2)?, num(rest, 2, 2)?),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let off = i64::from(h * 3600 + m * 60);
            if *sign == b'-' {
                -off
            } else {
                off
            }
        }
        _ => return None,
    };
    let days = days_from_civil(i64::from(year), month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + min * 60 + sec) - offset;
    Some(Stamp { secs, nanos })
}

/// How a status timestamp breaks the form its version gives it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Not a date and time at all.
    Unreadable,
    /// A date and time, but not in UTC ending in `Z` (1.0 §5.6.1).
    NotUtcZ,
}

/// Judges a JSON status timestamp. 1.0 (§5.6.1): "MUST be represented as
/// ISO 8601 formatted strings in UTC", "MUST NOT include timezone offsets
/// other than 'Z'": `YYYY-MM-DDTHH:MM:SS[.frac]Z` (RFC 3339's lower-case
/// `t`/`z` are the same letters). 0.3 gives the field only the type comment
/// "ISO 8601 datetime string" and no rule on the zone: there only a string
/// that is no date and time at all is a fault.
pub fn fault(s: &str, v1: bool) -> Option<Fault> {
    fault_parsed(s, parse(s).as_ref(), v1)
}

/// `fault` of `s`, whose `parse` is `parsed` (a caller that needs the
/// instant too parses once).
pub fn fault_parsed(s: &str, parsed: Option<&Stamp>, v1: bool) -> Option<Fault> {
    if parsed.is_none() {
        return Some(Fault::Unreadable);
    }
    let b = s.as_bytes();
    let utc_z = matches!(b.get(10), Some(b'T' | b't')) && matches!(b.last(), Some(b'Z' | b'z'));
    (v1 && !utc_z).then_some(Fault::NotUtcZ)
}

/// Reads `len` ASCII digits at `at`.
fn num(b: &[u8], at: usize, len: usize) -> Option<u32> {
    let digits = b.get(at..at + len)?;
    digits.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

fn is_leap(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> i64 {
        parse(s).map(|t| t.secs).unwrap_or(i64::MIN)
    }

    #[test]
    fn epoch_and_known_instants() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), 0);
        assert_eq!(secs("2000-03-01T00:00:00Z"), 951_868_800);
        assert_eq!(secs("2026-11-06T12:00:00Z"), 1_793_966_400);
        assert_eq!(secs("1969-12-31T23:59:59Z"), -1);
    }

    #[test]
    fn offsets_name_the_same_instant() {
        let z = parse("2025-06-01T10:00:00Z");
        assert_eq!(parse("2025-06-01T12:00:00+02:00"), z);
        assert_eq!(parse("2025-06-01T07:30:00-0230"), z);
        assert_eq!(parse("2025-06-01t10:00:00z"), z);
        assert_eq!(parse("2025-06-01 10:00:00+00:00"), z);
        assert_eq!(parse("2025-06-01T10:00:00"), z);
    }

    #[test]
    fn fractions_order_within_a_second() {
        let a = parse("2025-06-01T10:00:00.5Z").map(|t| t.nanos);
        assert_eq!(a, Some(500_000_000));
        let b = parse("2025-06-01T10:00:00.123456789123+00:00").map(|t| t.nanos);
        assert_eq!(b, Some(123_456_789));
        assert!(parse("2025-06-01T10:00:00.1Z") < parse("2025-06-01T10:00:00.12Z"));
    }

    #[test]
    fn faults_per_version() {
        for ok in [
            "2026-12-01T10:00:00Z",
            "2026-12-01T10:00:00.123456Z",
            "2026-12-01t10:00:00.5z",
        ] {
            assert_eq!(fault(ok, true), None, "{ok}");
        }
        for not_z in [
            "2026-12-01T10:00:00+00:00",
            "2026-12-01T12:00:00+02:00",
            "2026-12-01T10:00:00",
            "2026-12-01 10:00:00Z",
            " 2026-12-01T10:00:00Z",
        ] {
            assert_eq!(fault(not_z, true), Some(Fault::NotUtcZ), "{not_z}");
            assert_eq!(fault(not_z, false), None, "{not_z}");
        }
        for bad in ["yesterday", "1764583200", "2026-12-01"] {
            assert_eq!(fault(bad, true), Some(Fault::Unreadable), "{bad}");
            assert_eq!(fault(bad, false), Some(Fault::Unreadable), "{bad}");
        }
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [
            "",
            "2025-06-01",
            "2025-13-01T10:00:00Z",
            "2025-02-29T10:00:00Z",
            "2025-06-01T24:00:00Z",
            "2025-06-01T10:00:00.Z",
            "2025-06-01T10:00:00+2:00",
            "2025-06-01T10:00:00 UTC",
            "2025-06-01T10:00:00Zjunk",
            "２０２５-06-01T10:00:00Z",
            "abcd-ef-ghTij:kl:mnZ",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(parse("2024-02-29T10:00:00Z").is_some());
    }
}

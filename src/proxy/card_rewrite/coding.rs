//! The content codings of an agent card: which one the agent used, undoing
//! it within a bound, and whether the caller takes the card uncompressed.

use std::io::Read;

use brotli_decompressor::Decompressor;
use flate2::read::{MultiGzDecoder, ZlibDecoder};

/// A card's `Content-Encoding`, as far as the rewrite goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Coding {
    Identity,
    Gzip,
    /// HTTP's `deflate`: the zlib format (RFC 9110 §8.4.1.2).
    Deflate,
    Brotli,
}

/// Why a card could not be read (it then passes as the agent sent it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unreadable {
    /// A coding the rewrite does not undo (`zstd`, `compress`, a list).
    Coding(String),
    /// The coding's bytes are broken.
    Corrupt,
    /// Inflated, it is larger than the bound.
    TooLarge,
}

impl Coding {
    /// Reads a `Content-Encoding` value (absent or empty: identity).
    pub(super) fn of(value: Option<&http::HeaderValue>) -> Result<Coding, Unreadable> {
        let Some(value) = value else {
            return Ok(Coding::Identity);
        };
        let text = value.to_str().ok().map(str::trim);
        let is = |name: &str| text.is_some_and(|t| t.eq_ignore_ascii_case(name));
        if is("") || is("identity") {
            Ok(Coding::Identity)
        } else if is("gzip") || is("x-gzip") {
            Ok(Coding::Gzip)
        } else if is("deflate") {
            Ok(Coding::Deflate)
        } else if is("br") {
            Ok(Coding::Brotli)
        } else {
            let shown = String::from_utf8_lossy(value.as_bytes());
            Err(Unreadable::Coding(shown.chars().take(64).collect()))
        }
    }

    /// The card undone from `wire`, at most `max` bytes of it. Memory and
    /// time are bounded by `max` whatever the ratio (a bomb stops at the
    /// bound).
    pub(super) fn inflate(self, wire: &[u8], max: usize) -> Result<Vec<u8>, Unreadable> {
        let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
        let mut out = Vec::new();
        let read = match self {
            Coding::Identity => {
                out.extend_from_slice(wire);
                Ok(wire.len())
            }
            Coding::Gzip => MultiGzDecoder::new(wire).take(limit).read_to_end(&mut out),
            Coding::Deflate => ZlibDecoder::new(wire).take(limit).read_to_end(&mut out),
            Coding::Brotli => Decompressor::new(wire, 4096)
                .take(limit)
                .read_to_end(&mut out),
        };
        match read {
            Ok(_) if out.len() > max => Err(Unreadable::TooLarge),
            Ok(_) => Ok(out),
            Err(_) => Err(Unreadable::Corrupt),
        }
    }
}

/// Whether a caller with this `Accept-Encoding` takes an uncompressed
/// answer: yes unless it says `identity;q=0`, or `*;q=0` without naming
/// `identity` (RFC 9110 §12.5.3).
pub(super) fn takes_identity(headers: &http::HeaderMap) -> bool {
    let mut star = None;
    for item in headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            (p.starts_with("q=") || p.starts_with("Q="))
                && p[2..].trim().parse::<f32>().is_ok_and(|q| q == 0.0)
        });
        if coding.eq_ignore_ascii_case("identity") {
            return !refused;
        }
        if coding == "*" {
            star = Some(!refused);
        }
    }
    star.unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn codings_are_read_and_others_named() {
        let of = |v: &str| Coding::of(Some(&http::HeaderValue::from_str(v).unwrap()));
        assert_eq!(Coding::of(None), Ok(Coding::Identity));
        assert_eq!(of(""), Ok(Coding::Identity));
        let odd = http::HeaderValue::from_bytes(b"gz\xffip").unwrap();
        assert!(matches!(Coding::of(Some(&odd)), Err(Unreadable::Coding(_))));
        assert_eq!(of("GZIP"), Ok(Coding::Gzip));
        assert_eq!(of("x-gzip"), Ok(Coding::Gzip));
        assert_eq!(of(" br "), Ok(Coding::Brotli));
        assert_eq!(of("deflate"), Ok(Coding::Deflate));
        assert_eq!(of("zstd"), Err(Unreadable::Coding("zstd".into())));
        assert_eq!(of("gzip, br"), Err(Unreadable::Coding("gzip, br".into())));
    }

    #[test]
    fn inflating_stops_at_the_bound() {
        let card = br#"{"url":"http://a/"}"#;
        assert_eq!(Coding::Gzip.inflate(&gzip(card), 64).unwrap(), card);
        assert_eq!(Coding::Gzip.inflate(&gzip(card), card.len()).unwrap(), card);
        let bomb = gzip(&vec![b' '; 10 << 20]);
        assert!(bomb.len() < 20_000);
        assert_eq!(
            Coding::Gzip.inflate(&bomb, 256 << 10),
            Err(Unreadable::TooLarge)
        );
        assert_eq!(
            Coding::Gzip.inflate(b"not gzip", 64),
            Err(Unreadable::Corrupt)
        );
        assert_eq!(
            Coding::Brotli.inflate(b"\xff\xff\xff", 64),
            Err(Unreadable::Corrupt)
        );
        assert_eq!(Coding::Identity.inflate(card, 4), Err(Unreadable::TooLarge));
    }

    #[test]
    fn identity_is_taken_unless_refused() {
        let takes = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::ACCEPT_ENCODING, v.parse().unwrap());
            takes_identity(&h)
        };
        assert!(takes_identity(&http::HeaderMap::new()));
        assert!(takes("gzip, deflate, br"));
        assert!(takes("gzip;q=1.0, *;q=0.5"));
        assert!(!takes("gzip, identity;q=0"));
        assert!(!takes("br, *;q=0"));
        assert!(takes("br, identity;q=0.1, *;q=0"));
        assert!(!takes("gzip, identity; q=0.000"));
    }
}

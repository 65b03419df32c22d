//! A request head written for an HTTP/1.1 upstream, and the framing of its
//! body: the body's own length when it is known, else chunked (RFC 9112
//! §6), as hyper's client frames it.

use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderValue, Method};

use super::head::content_length;

/// How a request body goes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// No body.
    Empty,
    /// Exactly this many bytes (`Content-Length`).
    Length(u64),
    /// Chunked (`Transfer-Encoding: chunked`).
    Chunked,
}

/// Writes `head`'s request line and headers to `out`, with the framing
/// headers of its body: `ended` when the body has no data, `exact` its
/// length when known. The framing is the proxy's own: a
/// `Transfer-Encoding` or a `Content-Length` the body's framing does not
/// use is not sent.
pub fn encode(
    head: &mut http::request::Parts,
    ended: bool,
    exact: Option<u64>,
    out: &mut Vec<u8>,
) -> Encoding {
    let headers = &mut head.headers;
    headers.remove(TRANSFER_ENCODING);
    let declared = content_length(headers);
    if declared.is_none() {
        // Absent, or values that do not agree: never sent as they are.
        headers.remove(CONTENT_LENGTH);
    }
    let encoding = if ended {
        Encoding::Empty
    } else if let Some(n) = declared {
        Encoding::Length(n)
    } else if let Some(n) = exact {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
        Encoding::Length(n)
    } else if matches!(head.method, Method::GET | Method::HEAD) {
        // hyper's rule: a GET or HEAD of unknown length is sent bodiless.
        Encoding::Empty
    } else {
        headers.insert(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        Encoding::Chunked
    };
    out.reserve(64 + head.headers.len() * 32);
    out.extend_from_slice(head.method.as_str().as_bytes());
    out.push(b' ');
    let target = head.uri.path_and_query().map_or("/", |pq| pq.as_str());
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in head.headers.iter() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    encoding
}

/// The size line of a chunk of `len` bytes.
pub fn chunk_line(len: usize, out: &mut Vec<u8>) {
    let mut line = [0u8; 18];
    let n = size_line(len, &mut line);
    out.extend_from_slice(&line[..n]);
}

/// A chunk's size line (lower-case hex digits and CRLF) written into
/// `out`; its length.
pub(crate) fn size_line(mut len: usize, out: &mut [u8; 18]) -> usize {
    let mut digits = [0u8; 16];
    let mut i = 16;
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[len & 15];
        len >>= 4;
        if len == 0 {
            break;
        }
    }
    let n = 16 - i;
    out[..n].copy_from_slice(&digits[i..]);
    out[n..n + 2].copy_from_slice(b"\r\n");
    n + 2
}

#[cfg(test)]
#[test]
fn a_size_line_is_the_length_in_hex() {
    for len in [0, 1, 9, 10, 15, 16, 255, 4096, 65_535, 1 << 40, usize::MAX] {
        let mut out = Vec::new();
        chunk_line(len, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), format!("{len:x}\r\n"));
    }
}

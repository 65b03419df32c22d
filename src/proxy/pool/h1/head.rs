//! A response head read as hyper's HTTP/1.1 client reads it: httparse with
//! its default configuration and 100 headers, interim (1xx) heads skipped,
//! the body framed by RFC 9112 §6.3 in hyper's order, and a reason phrase
//! other than the status's own kept for the caller.

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, Version};
use std::mem::MaybeUninit;

use super::Error;
use crate::proxy::headers::Hops;

/// Most headers of a response head (hyper's default).
const MAX_HEADERS: usize = 100;
/// The longest body length hyper's client takes.
const MAX_LENGTH: u64 = u64::MAX - 2;

/// How a response's body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body (204, 304, 101, an answer to `HEAD`).
    Empty,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding` ending in `chunked`.
    Chunked,
    /// Up to the connection's end.
    Close,
}

/// A final response head.
#[derive(Debug)]
pub struct Head {
    pub response: Response<()>,
    pub framing: Framing,
    /// Whether the connection may carry another request after it.
    pub keep_alive: bool,
}

/// Reads the final head at the start of `buf`, skipping interim heads, and
/// takes what it read out of `buf`. `None`: it goes on past `buf`.
pub fn parse(buf: &mut BytesMut, head_request: bool) -> Result<Option<Head>, Error> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut spans = [[0u32; 4]; MAX_HEADERS];
    loop {
        if buf.is_empty() {
            return Ok(None);
        }
        let Some(read) = read(buf, &mut spans)? else {
            return Ok(None);
        };
        let head = buf.split_to(read.len).freeze();
        let status = read.status;
        if matches!(status.as_u16(), 100 | 102..=199) {
            continue;
        }
        let spans = &spans[..read.count];
        let part = |at: u32, end: u32| &head[at as usize..end as usize];
        // Read for the framing, then left out: the forwarding hop would
        // remove them (`strip_response_hop_by_hop`).
        let hops = Hops::of(
            spans
                .iter()
                .map(|&[n, n_end, v, v_end]| (part(n, n_end), part(v, v_end))),
            true,
        );
        let mut headers = HeaderMap::with_capacity(read.count);
        let mut keep_alive = read.version == Version::HTTP_11;
        let mut framing_headers = FramingHeaders::default();
        for [name_at, name_end, value_at, value_end] in spans.iter().copied() {
            let name = HeaderName::from_bytes(part(name_at, name_end))
                .map_err(|_| Error::Parse("invalid HTTP header name"))?;
            let value =
                HeaderValue::from_maybe_shared(head.slice(value_at as usize..value_end as usize))
                    .map_err(|_| Error::Parse("invalid HTTP header value"))?;
            if name == http::header::TRANSFER_ENCODING {
                framing_headers.coding(&value);
            } else if name == http::header::CONTENT_LENGTH {
                framing_headers.length(&value);
            } else if name == http::header::CONNECTION && has_token(&value, "close") {
                // An HTTP/1.0 connection is never kept (its keep-alive is
                // opt-in, and rarely meant): only HTTP/1.1's `close` counts.
                keep_alive = false;
            }
            if !hops.drops(name.as_str().as_bytes()) {
                headers.append(name, value);
            }
        }
        let (framing, upgrade) = framing(status, read.version, &framing_headers, head_request)?;
        let mut response = Response::new(());
        *response.status_mut() = status;
        *response.version_mut() = read.version;
        *response.headers_mut() = headers;
        if let Some(reason) = read.reason {
            if let Ok(reason) = hyper::ext::ReasonPhrase::try_from(reason) {
                response.extensions_mut().insert(reason);
            }
        }
        return Ok(Some(Head {
            response,
            framing,
            keep_alive: keep_alive && !upgrade && framing != Framing::Close,
        }));
    }
}

/// Whether `buf`, of which the first `parsed` bytes were already read as
/// a partial head, may now hold a head's end: nothing parsed yet, or a
/// blank line (CRLF CRLF, LF LF or LF CRLF, the ends httparse takes)
/// reaching into the bytes after `parsed`.
pub fn may_end(buf: &[u8], parsed: usize) -> bool {
    if parsed == 0 {
        return true;
    }
    let fresh = &buf[parsed.saturating_sub(3).min(buf.len())..];
    fresh.iter().enumerate().any(|(i, b)| {
        let rest = &fresh[i + 1..];
        match b {
            b'\r' => rest.starts_with(b"\n\r\n"),
            b'\n' => rest.starts_with(b"\n") || rest.starts_with(b"\r\n"),
            _ => false,
        }
    })
}

/// What httparse read of a head; its headers' places are in the spans.
struct Read {
    len: usize,
    status: StatusCode,
    reason: Option<Bytes>,
    version: Version,
    count: usize,
}

/// httparse's reading of the head at the start of `buf`; each header's
/// name and value (start, end) go into `spans`.
fn read(buf: &[u8], spans: &mut [[u32; 4]; MAX_HEADERS]) -> Result<Option<Read>, Error> {
    let mut slots = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buf,
        &mut slots,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Error::Head(e)),
    };
    let code = response.code.unwrap_or_default();
    let status =
        StatusCode::from_u16(code).map_err(|_| Error::Parse("invalid HTTP status-code parsed"))?;
    let reason = response
        .reason
        .filter(|r| Some(*r) != status.canonical_reason())
        .map(|r| Bytes::copy_from_slice(r.as_bytes()));
    let version = if response.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    record_spans(buf, response.headers, spans);
    Ok(Some(Read {
        len,
        status,
        reason,
        version,
        count: response.headers.len(),
    }))
}

/// Where each header's name and value (start, end) lie in `buf`, the
/// head httparse read them from, so that they outlive its borrow.
pub(crate) fn record_spans(buf: &[u8], headers: &[httparse::Header<'_>], spans: &mut [[u32; 4]]) {
    for (span, h) in spans.iter_mut().zip(headers) {
        let (name, value) = (offset(buf, h.name.as_bytes()), offset(buf, h.value));
        *span = [
            name,
            name + h.name.len() as u32,
            value,
            value + h.value.len() as u32,
        ];
    }
}

/// Where `part`, a slice of `buf`, begins in it (a head is shorter than
/// the read buffer, which is far under 4 GiB).
pub(crate) fn offset(buf: &[u8], part: &[u8]) -> u32 {
    (part.as_ptr() as usize - buf.as_ptr() as usize) as u32
}

/// The framing headers of a head, read as they are met.
#[derive(Default)]
struct FramingHeaders {
    /// A `Transfer-Encoding` was there; the last one ends in `chunked`.
    coded: bool,
    chunked: bool,
    /// The `Content-Length` values: none, all alike, or not.
    length: Option<Option<u64>>,
}

impl FramingHeaders {
    fn coding(&mut self, value: &HeaderValue) {
        self.coded = true;
        self.chunked = value
            .to_str()
            .ok()
            .and_then(|v| v.rsplit(',').next())
            .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
    }

    fn length(&mut self, value: &HeaderValue) {
        if self.length != Some(None) {
            self.length = Some(agree(self.length.flatten(), value));
        }
    }
}

/// How the body after a final head is framed, and whether the connection
/// turns into something else (a 101).
fn framing(
    status: StatusCode,
    version: Version,
    headers: &FramingHeaders,
    head_request: bool,
) -> Result<(Framing, bool), Error> {
    match status.as_u16() {
        101 => return Ok((Framing::Empty, true)),
        204 | 304 => return Ok((Framing::Empty, false)),
        _ if head_request => return Ok((Framing::Empty, false)),
        _ => {}
    }
    if headers.coded {
        if version == Version::HTTP_10 {
            return Err(Error::Parse(
                "invalid HTTP response: Transfer-Encoding in HTTP/1.0",
            ));
        }
        let framing = if headers.chunked {
            Framing::Chunked
        } else {
            Framing::Close
        };
        return Ok((framing, false));
    }
    match headers.length {
        None => Ok((Framing::Close, false)),
        Some(Some(n)) if n <= MAX_LENGTH => Ok((Framing::Length(n), false)),
        Some(Some(_)) => Err(Error::Parse(
            "invalid HTTP response: content-length too large",
        )),
        Some(None) => Err(Error::Parse("invalid HTTP response: bad content-length")),
    }
}

/// Every `Content-Length` value and list item, when they all agree.
pub fn content_length(headers: &HeaderMap) -> Option<u64> {
    let mut length = None;
    for value in headers.get_all(http::header::CONTENT_LENGTH) {
        length = Some(agree(length, value)?);
    }
    length
}

/// The length `value` gives, when it agrees with `so_far` (every item of
/// its list the same number, as hyper reads it).
fn agree(so_far: Option<u64>, value: &HeaderValue) -> Option<u64> {
    let bytes = value.as_bytes();
    let items: &mut dyn Iterator<Item = &[u8]> = if bytes.contains(&b',') {
        &mut bytes.split(|b| *b == b',')
    } else {
        &mut std::iter::once(bytes)
    };
    let mut length = so_far;
    for item in items {
        let n = digits(item.trim_ascii())?;
        if *length.get_or_insert(n) != n {
            return None;
        }
    }
    length
}

pub(crate) fn digits(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    bytes.iter().try_fold(0u64, |n, b| {
        let d = b.checked_sub(b'0').filter(|d| *d < 10)?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// Whether a `Connection` value lists `token`.
pub(crate) fn has_token(value: &HeaderValue, token: &str) -> bool {
    value
        .to_str()
        .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
}

//! A caller's request head read as hyper's HTTP/1.1 server reads it
//! (RFC 9112 §2 to §7 as hyper applies them): httparse with 100 headers,
//! the body framed by `Transfer-Encoding` and `Content-Length` in hyper's
//! order, a `Content-Length` beside a `Transfer-Encoding` dropped and the
//! connection then not kept, and the refusals hyper answers with 400, 414
//! or 431.

use std::mem::MaybeUninit;

use bytes::BytesMut;
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, Uri, Version};

use crate::proxy::pool::h1::head::{digits, has_token, offset, record_spans};

/// Most headers of a request head (hyper's default).
const MAX_HEADERS: usize = 100;
/// The longest request target hyper's server takes.
const MAX_URI: usize = (u16::MAX - 1) as usize;
/// The longest body length hyper takes.
const MAX_LENGTH: u64 = u64::MAX - 2;

/// How a request's body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` (0 when the head has neither header).
    Length(u64),
    /// `Transfer-Encoding` ending in `chunked`.
    Chunked,
}

/// A request head.
#[derive(Debug)]
pub struct Head {
    pub request: Request<()>,
    pub framing: Framing,
    /// Whether the connection may carry another request after this one.
    pub keep_alive: bool,
    /// The caller waits for `100 Continue` before it sends the body.
    pub expect_continue: bool,
    /// The caller asks for the connection to become something else
    /// (`Upgrade` on HTTP/1.1, or `CONNECT`).
    pub upgrade: bool,
}

/// A head refused, and what hyper answers to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// 400: a head that does not parse or frames no message.
    BadRequest,
    /// 414: a request target over 65,534 bytes.
    UriTooLong,
    /// 431: over 100 headers, or a head longer than the read buffer.
    TooLarge,
}

impl Refused {
    /// The status hyper answers with.
    pub fn status(self) -> http::StatusCode {
        match self {
            Refused::BadRequest => http::StatusCode::BAD_REQUEST,
            Refused::UriTooLong => http::StatusCode::URI_TOO_LONG,
            Refused::TooLarge => http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        }
    }
}

/// Reads the request head at the start of `buf` and takes it out of
/// `buf`. `None`: it goes on past `buf` (the caller refuses a head longer
/// than its read buffer with [`Refused::TooLarge`]).
pub fn parse(buf: &mut BytesMut) -> Result<Option<Head>, Refused> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut slots = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut spans = [[0u32; 4]; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let parsed = httparse::ParserConfig::default()
        .parse_request_with_uninit_headers(&mut req, buf, &mut slots);
    let len = match parsed {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Refused::TooLarge),
        Err(_) => return Err(Refused::BadRequest),
    };
    let path = req.path.unwrap_or_default();
    if path.len() > MAX_URI {
        return Err(Refused::UriTooLong);
    }
    let method = Method::from_bytes(req.method.unwrap_or_default().as_bytes())
        .map_err(|_| Refused::BadRequest)?;
    let http11 = req.version == Some(1);
    let (path_at, path_len) = (offset(buf, path.as_bytes()) as usize, path.len());
    let count = req.headers.len();
    record_spans(buf, req.headers, &mut spans);
    let head = buf.split_to(len).freeze();
    let uri = Uri::from_maybe_shared(head.slice(path_at..path_at + path_len))
        .map_err(|_| Refused::BadRequest)?;

    let mut headers = HeaderMap::with_capacity(count);
    let mut keep_alive = http11;
    let mut closing = false;
    let mut framing = Framing::Length(0);
    let (mut coded, mut chunked) = (false, false);
    let mut length: Option<u64> = None;
    let mut has_length = false;
    let mut expect_continue = false;
    let mut upgrade = method == Method::CONNECT;
    for [name_at, name_end, value_at, value_end] in spans[..count].iter().copied() {
        let name = HeaderName::from_bytes(&head[name_at as usize..name_end as usize])
            .map_err(|_| Refused::BadRequest)?;
        let value =
            HeaderValue::from_maybe_shared(head.slice(value_at as usize..value_end as usize))
                .map_err(|_| Refused::BadRequest)?;
        match name {
            header::TRANSFER_ENCODING => {
                if !http11 {
                    return Err(Refused::BadRequest);
                }
                coded = true;
                if has_length && length.take().is_some() {
                    headers.remove(header::CONTENT_LENGTH);
                }
                chunked = value
                    .to_str()
                    .ok()
                    .and_then(|v| v.rsplit(',').next())
                    .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
                if chunked {
                    framing = Framing::Chunked;
                }
            }
            header::CONTENT_LENGTH => {
                has_length = true;
                if coded {
                    continue;
                }
                // Digits alone: hyper's server takes no list here.
                let n = digits(value.as_bytes()).ok_or(Refused::BadRequest)?;
                match length {
                    Some(before) if before != n => return Err(Refused::BadRequest),
                    // The same length again is not kept twice.
                    Some(_) => continue,
                    None => {
                        if n > MAX_LENGTH {
                            return Err(Refused::TooLarge);
                        }
                        framing = Framing::Length(n);
                        length = Some(n);
                    }
                }
            }
            // As hyper 1.12 reads them: a `close` in any `Connection`
            // line ends the connection, whatever the others say; else an
            // HTTP/1.0 request's `keep-alive` keeps it.
            header::CONNECTION => {
                if closing || has_token(&value, "close") {
                    closing = true;
                    keep_alive = false;
                } else if !keep_alive {
                    keep_alive = has_token(&value, "keep-alive");
                }
            }
            header::EXPECT => {
                expect_continue = value.as_bytes().eq_ignore_ascii_case(b"100-continue");
            }
            header::UPGRADE => upgrade = http11,
            _ => {}
        }
        headers.append(name, value);
    }
    if coded && !chunked {
        return Err(Refused::BadRequest);
    }
    if coded && has_length {
        keep_alive = false;
    }
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = if http11 {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    *request.headers_mut() = headers;
    Ok(Some(Head {
        request,
        framing,
        keep_alive,
        expect_continue,
        upgrade,
    }))
}

#[cfg(test)]
mod tests;

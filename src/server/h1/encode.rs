//! A response head written as hyper's HTTP/1.1 server writes it (hyper
//! 1.12, `auto_date_header(false)`): the status line (HTTP/1.0 to an
//! HTTP/1.0 caller), the headers in their order with lower-case names, and
//! the body's framing chosen from the body's known length, the caller's
//! method and version and the status, with hyper's repairs of the framing
//! headers a response carries.

use std::io::Write;

use http::header::{self, Entry};
use http::{HeaderName, HeaderValue, Method, StatusCode, Version};

use crate::proxy::pool::h1::head::{digits, has_token};

/// What is known of a response body's length before it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyLength {
    Known(u64),
    Unknown,
}

/// How the body goes on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Exactly this many bytes (0: none).
    Length(u64),
    /// Chunked; trailers only those the `Trailer` header named, when it did.
    Chunked { trailers: Option<Vec<HeaderName>> },
    /// Up to the connection's end.
    Close,
}

/// The framing chosen, and whether the connection ends after this answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub framing: Framing,
    pub last: bool,
}

/// A response hyper refuses to write (its framing headers contradict
/// themselves); the connection then ends unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unwritable;

/// The exchange's side of the answer: the caller's method and version, and
/// whether the connection is still to be kept (cleared here for an
/// HTTP/1.0 caller whose answer does not say `keep-alive`).
pub struct Caller<'a> {
    pub method: &'a Method,
    pub version: Version,
    pub keep_alive: &'a mut bool,
}

/// Writes the head of `head` to `dst`; `body` is `None` for a body that is
/// already at its end.
pub fn encode(
    mut head: http::response::Parts,
    caller: Caller<'_>,
    body: Option<BodyLength>,
    dst: &mut Vec<u8>,
) -> Result<Encoded, Unwritable> {
    let method = Some(caller.method);
    // hyper's `enforce_version`.
    match caller.version {
        Version::HTTP_10 => {
            let says_keep_alive = head
                .headers
                .get_all(header::CONNECTION)
                .iter()
                .any(|v| has_token(v, "keep-alive"));
            if !says_keep_alive {
                match head.version {
                    Version::HTTP_10 => *caller.keep_alive = false,
                    Version::HTTP_11 if *caller.keep_alive => {
                        head.headers
                            .append(header::CONNECTION, HeaderValue::from_static("keep-alive"));
                    }
                    _ => {}
                }
            }
            head.version = Version::HTTP_10;
        }
        Version::HTTP_11 if !*caller.keep_alive => match head.headers.entry(header::CONNECTION) {
            Entry::Occupied(mut entry) => {
                if !entry.iter().any(|v| has_token(v, "close")) {
                    entry.append(HeaderValue::from_static("close"));
                }
            }
            Entry::Vacant(entry) => {
                entry.insert(HeaderValue::from_static("close"));
            }
        },
        _ => {}
    }
    let status = head.status;
    let mut wrote_len = false;
    let mut is_last = if status == StatusCode::SWITCHING_PROTOCOLS {
        true
    } else if method == Some(&Method::CONNECT) && status.is_success() {
        wrote_len = true;
        true
    } else if status.is_informational() {
        return Err(Unwritable);
    } else {
        !*caller.keep_alive
    };

    let reason = head.extensions.get::<hyper::ext::ReasonPhrase>();
    if head.version == Version::HTTP_11 && status == StatusCode::OK && reason.is_none() {
        dst.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    } else {
        dst.extend_from_slice(match head.version {
            Version::HTTP_10 => b"HTTP/1.0 ",
            _ => b"HTTP/1.1 ",
        });
        dst.extend_from_slice(status.as_str().as_bytes());
        dst.push(b' ');
        match reason {
            Some(reason) => dst.extend_from_slice(reason.as_bytes()),
            None => dst.extend_from_slice(status.canonical_reason().unwrap_or("<none>").as_bytes()),
        }
        dst.extend_from_slice(b"\r\n");
    }

    let can_chunked = can_chunked(method, status);
    let mut framing = Framing::Length(0);
    let mut trailers: Option<Vec<HeaderName>> = None;
    // The header whose value is being written (its line not ended yet).
    let mut open = false;
    let mut must_write_chunked = false;
    let mut prev_len = None;
    let mut current: Option<HeaderName> = None;
    for (name, value) in head.headers {
        if let Some(name) = name {
            end_line(dst, open, must_write_chunked);
            open = false;
            current = Some(name);
        }
        let Some(name) = current.as_ref() else {
            continue;
        };
        match *name {
            header::CONTENT_LENGTH => {
                if wrote_len && !open {
                    return Err(Unwritable);
                }
                match body {
                    Some(BodyLength::Known(known)) => {
                        if !open {
                            framing = Framing::Length(known);
                            dst.extend_from_slice(b"content-length: ");
                            dst.extend_from_slice(value.as_bytes());
                            wrote_len = true;
                            open = true;
                        }
                        continue;
                    }
                    Some(BodyLength::Unknown) => {
                        let len = digits(value.as_bytes()).ok_or(Unwritable)?;
                        match prev_len {
                            Some(prev) if prev != len => return Err(Unwritable),
                            Some(_) => continue,
                            None => {
                                framing = Framing::Length(len);
                                dst.extend_from_slice(b"content-length: ");
                                dst.extend_from_slice(value.as_bytes());
                                wrote_len = true;
                                open = true;
                                prev_len = Some(len);
                                continue;
                            }
                        }
                    }
                    None => {
                        if method != Some(&Method::HEAD) {
                            continue;
                        }
                    }
                }
                wrote_len = true;
            }
            header::TRANSFER_ENCODING => {
                if wrote_len && !open {
                    return Err(Unwritable);
                }
                if head.version == Version::HTTP_10 || !can_chunked {
                    continue;
                }
                wrote_len = true;
                must_write_chunked = !is_chunked(&value);
                if !open {
                    framing = Framing::Chunked { trailers: None };
                }
                join(dst, &mut open, "transfer-encoding", &value);
                continue;
            }
            header::CONNECTION => {
                if !is_last && has_token(&value, "close") {
                    is_last = true;
                }
                join(dst, &mut open, "connection", &value);
                continue;
            }
            header::TRAILER => {
                if head.version == Version::HTTP_10 || !can_chunked {
                    continue;
                }
                join(dst, &mut open, "trailer", &value);
                if let Ok(text) = value.to_str() {
                    let names = text
                        .split(',')
                        .filter_map(|s| HeaderName::from_bytes(s.trim().as_bytes()).ok());
                    trailers.get_or_insert_with(Vec::new).extend(names);
                }
                continue;
            }
            _ => {}
        }
        dst.extend_from_slice(name.as_str().as_bytes());
        dst.extend_from_slice(b": ");
        dst.extend_from_slice(value.as_bytes());
        dst.extend_from_slice(b"\r\n");
    }
    end_line(dst, open, must_write_chunked);

    if !wrote_len {
        framing = match body {
            Some(BodyLength::Unknown) => {
                if head.version == Version::HTTP_10 || !can_chunked {
                    Framing::Close
                } else {
                    dst.extend_from_slice(b"transfer-encoding: chunked\r\n");
                    Framing::Chunked { trailers: None }
                }
            }
            None | Some(BodyLength::Known(0)) => {
                if can_have_content_length(method, status) && method != Some(&Method::HEAD) {
                    dst.extend_from_slice(b"content-length: 0\r\n");
                }
                Framing::Length(0)
            }
            Some(BodyLength::Known(len)) => {
                if can_have_content_length(method, status) {
                    let _ = write!(dst, "content-length: {len}\r\n");
                    Framing::Length(len)
                } else {
                    Framing::Length(0)
                }
            }
        };
    }
    if !can_chunked {
        framing = Framing::Length(0);
    }
    dst.extend_from_slice(b"\r\n");
    if let (Framing::Chunked { trailers: allowed }, Some(names)) = (&mut framing, trailers) {
        *allowed = Some(names);
    }
    // A close-delimited body ends the connection with it.
    let last = is_last || framing == Framing::Close;
    Ok(Encoded { framing, last })
}

/// Adds `value` to the line of the header `name` whose values are joined
/// (hyper writes each such header on one line, its values comma-joined).
fn join(dst: &mut Vec<u8>, open: &mut bool, name: &str, value: &HeaderValue) {
    if *open {
        dst.extend_from_slice(b", ");
    } else {
        *open = true;
        dst.extend_from_slice(name.as_bytes());
        dst.extend_from_slice(b": ");
    }
    dst.extend_from_slice(value.as_bytes());
}

/// What the head says of a body about to be sent: `None` when it is at
/// its end already.
pub fn length_of(body: &impl http_body::Body) -> Option<BodyLength> {
    if body.is_end_stream() {
        return None;
    }
    Some(
        body.size_hint()
            .exact()
            .map_or(BodyLength::Unknown, BodyLength::Known),
    )
}

/// Ends the line of a header whose values were being joined.
fn end_line(dst: &mut Vec<u8>, open: bool, must_write_chunked: bool) {
    if open {
        dst.extend_from_slice(if must_write_chunked {
            b", chunked\r\n"
        } else {
            b"\r\n"
        });
    }
}

fn is_chunked(value: &HeaderValue) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.rsplit(',').next())
        .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
}

/// hyper's `can_chunked` (and `can_have_body`).
fn can_chunked(method: Option<&Method>, status: StatusCode) -> bool {
    if method == Some(&Method::HEAD)
        || method == Some(&Method::CONNECT) && status.is_success()
        || status.is_informational()
    {
        false
    } else {
        !matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED)
    }
}

fn can_have_content_length(method: Option<&Method>, status: StatusCode) -> bool {
    if status.is_informational() || method == Some(&Method::CONNECT) && status.is_success() {
        false
    } else {
        !matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED)
    }
}

#[cfg(test)]
mod tests;

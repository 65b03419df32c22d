//! Header rules of a forwarding hop: hop-by-hop headers removed both ways,
//! `Via` / `X-Forwarded-*` added only when configured.

use std::net::IpAddr;

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::Version;

/// The fixed hop-by-hop set (RFC 9110 7.6.1), besides `Proxy-*` and the
/// headers `Connection` names.
const HOP_BY_HOP: [HeaderName; 6] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Removes hop-by-hop headers: those named by `Connection`, the fixed set,
/// and every `Proxy-*` header. The headers left keep their order.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    strip(headers, Strip::HopByHop);
}

/// Removes an answer's hop-by-hop headers and, when it came with a
/// `Transfer-Encoding`, its `Content-Length` too (RFC 9112 §6.3: the
/// chunks tell the body's length, and a stale length forwarded would cut
/// the answer). An HTTP/1.1 upstream's answers come without them already
/// ([`AnswerHops`]); this finds nothing to do there.
pub fn strip_response_hop_by_hop(headers: &mut HeaderMap) {
    strip(headers, Strip::Answer);
}

/// Removes a request's hop-by-hop headers, but passes `TE: trailers` on:
/// the proxy carries trailers both ways, and gRPC servers refuse a request
/// without it (RFC 9113 §8.2.2 allows exactly that value on HTTP/2; RFC 9110
/// §10.1.4 lets a proxy that supports trailers say so). Every other `TE`
/// value stays behind.
pub fn strip_request_hop_by_hop(headers: &mut HeaderMap) {
    strip(headers, Strip::Request);
}

/// Headers that `Connection` cannot make hop-by-hop: the message's framing
/// and target are the proxy's to set, never a caller's to remove.
fn protected(name: &HeaderName) -> bool {
    name == header::HOST || name == header::CONTENT_LENGTH
}

/// What a strip keeps or removes besides the hop-by-hop headers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strip {
    /// Nothing else.
    HopByHop,
    /// `TE: trailers` is passed on.
    Request,
    /// `Content-Length` goes if a `Transfer-Encoding` was there.
    Answer,
}

fn strip(headers: &mut HeaderMap, how: Strip) {
    // `Connection` is in the fixed set: without a header of that set or a
    // `Proxy-*` one, none is named either, and there is nothing to do.
    if !headers
        .keys()
        .any(|name| HOP_BY_HOP.contains(name) || is_proxy_header(name))
    {
        return;
    }
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .filter(|name| !protected(name))
        .collect();
    let hop = |name: &HeaderName| {
        HOP_BY_HOP.contains(name) || is_proxy_header(name) || named.contains(name)
    };
    let coded = how == Strip::Answer && headers.contains_key(header::TRANSFER_ENCODING);
    // Rebuilt rather than removed from: `HeaderMap::remove` moves the last
    // header into the hole, and the upstream's order is kept as it came.
    let old = std::mem::replace(headers, HeaderMap::with_capacity(headers.len()));
    let mut name: Option<HeaderName> = None;
    let mut te_sent = false;
    for (next, value) in old {
        if let Some(next) = next {
            name = Some(next);
        }
        let Some(name) = &name else { continue };
        if how == Strip::Request && name == header::TE {
            if !te_sent && lists_trailers(&value) {
                te_sent = true;
                headers.append(header::TE, HeaderValue::from_static("trailers"));
            }
        } else {
            let stale_length = coded && name == header::CONTENT_LENGTH;
            if !hop(name) && !stale_length {
                headers.append(name.clone(), value);
            }
        }
    }
}

/// Whether a `TE` value lists `trailers` (parameters and case ignored).
fn lists_trailers(value: &HeaderValue) -> bool {
    value.as_bytes().split(|b| *b == b',').any(|item| {
        let token = item.split(|b| *b == b';').next().unwrap_or_default();
        token.trim_ascii().eq_ignore_ascii_case(b"trailers")
    })
}

fn is_proxy_header(name: &HeaderName) -> bool {
    name.as_str().starts_with("proxy-")
}

/// Which headers of an answer, read from the wire (names in any case),
/// [`strip_response_hop_by_hop`] would remove: the HTTP/1.1 client leg
/// leaves them out of the head it builds rather than building them to
/// have them removed (an SSE answer's `Transfer-Encoding` made the strip
/// rebuild every such head).
pub(crate) struct AnswerHops<'a> {
    /// The names the `Connection` headers list, trimmed (the protected
    /// ones left out).
    named: Vec<&'a [u8]>,
    /// A `Transfer-Encoding` is there: `Content-Length` goes too.
    coded: bool,
}

impl<'a> AnswerHops<'a> {
    /// Reads a head's `Connection` and `Transfer-Encoding` headers.
    pub(crate) fn of(headers: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Self {
        let mut hops = AnswerHops {
            named: Vec::new(),
            coded: false,
        };
        for (name, value) in headers {
            if name.eq_ignore_ascii_case(b"transfer-encoding") {
                hops.coded = true;
            } else if name.eq_ignore_ascii_case(b"connection") && visible(value) {
                // As `strip` reads it: a value `HeaderValue::to_str` refuses
                // names nothing; a token that is no header name matches none.
                let tokens = value.split(|b| *b == b',').map(<[u8]>::trim_ascii);
                hops.named.extend(tokens.filter(|t| {
                    !t.eq_ignore_ascii_case(b"host") && !t.eq_ignore_ascii_case(b"content-length")
                }));
            }
        }
        hops
    }

    /// Whether the header called `name` is left out of the answer.
    pub(crate) fn drops(&self, name: &[u8]) -> bool {
        HOP_BY_HOP
            .iter()
            .any(|hop| name.eq_ignore_ascii_case(hop.as_str().as_bytes()))
            || name
                .get(..6)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"proxy-"))
            || (self.coded && name.eq_ignore_ascii_case(b"content-length"))
            || self.named.iter().any(|n| name.eq_ignore_ascii_case(n))
    }
}

/// What `HeaderValue::to_str` takes: visible ASCII, space and tab.
fn visible(value: &[u8]) -> bool {
    value
        .iter()
        .all(|&b| (b' '..0x7f).contains(&b) || b == b'\t')
}

/// Appends `Via`, `X-Forwarded-For` and sets `X-Forwarded-Proto` (callers
/// reach the proxy over cleartext HTTP).
pub fn add_forwarded(headers: &mut HeaderMap, version: Version, peer: IpAddr) {
    let via = match version {
        Version::HTTP_10 => "1.0 a2a-tap",
        Version::HTTP_2 => "2 a2a-tap",
        _ => "1.1 a2a-tap",
    };
    headers.append(header::VIA, HeaderValue::from_static(via));
    let xff = HeaderName::from_static("x-forwarded-for");
    let joined = match headers.get(&xff).and_then(|v| v.to_str().ok()) {
        Some(prev) => format!("{prev}, {peer}"),
        None => peer.to_string(),
    };
    if let Ok(value) = HeaderValue::from_str(&joined) {
        headers.insert(xff, value);
    }
    headers.insert(
        HeaderName::from_static("x-forwarded-proto"),
        HeaderValue::from_static("http"),
    );
}

#[cfg(test)]
mod tests;

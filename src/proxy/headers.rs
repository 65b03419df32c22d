//! Header rules of a forwarding hop: hop-by-hop headers removed both ways,
//! `Via` / `X-Forwarded-*` added only when configured.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
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
/// ([`Hops`]); this finds nothing to do there.
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
    // Rebuilt rather than removed from: `HeaderMap::remove` moves the last
    // header into the hole, and the upstream's order is kept as it came.
    let old = std::mem::replace(headers, HeaderMap::with_capacity(headers.len()));
    let hops = Hops::of(
        old.iter()
            .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes())),
        how == Strip::Answer,
    );
    let mut te_sent = false;
    for (name, value) in &old {
        if how == Strip::Request && name == header::TE {
            if !te_sent && lists_trailers(value) {
                te_sent = true;
                headers.append(header::TE, HeaderValue::from_static("trailers"));
            }
        } else if !hops.drops(name.as_str().as_bytes()) {
            headers.append(name.clone(), value.clone());
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

/// Which headers of a head a strip removes, read from the names and values
/// as bytes (names in any case): the fixed set, `Proxy-*`, the names the
/// `Connection` headers list (never `Host` or `Content-Length`) and, in an
/// answer, a `Content-Length` beside a `Transfer-Encoding`. The HTTP/1.1
/// client leg leaves them out of the head it builds rather than building
/// them to have them removed; the strip rebuilds a map without them.
pub(crate) struct Hops<'a> {
    /// The names `Connection` lists, trimmed; past a few, in a hashed set,
    /// so that a head listing thousands costs a lookup a header, not a
    /// comparison with each.
    named: Named<'a>,
    /// An answer with a `Transfer-Encoding`: `Content-Length` goes too.
    stale_length: bool,
}

enum Named<'a> {
    Few(Vec<&'a [u8]>),
    Many(HashSet<NoCase<'a>>),
}

/// Names listed past this many are looked up in a hashed set.
const FEW_NAMED: usize = 8;

impl<'a> Hops<'a> {
    /// Reads a head's `Connection` headers and, for an `answer`, whether
    /// it has a `Transfer-Encoding`.
    pub(crate) fn of(headers: impl Iterator<Item = (&'a [u8], &'a [u8])>, answer: bool) -> Self {
        let mut named = Vec::new();
        let mut coded = false;
        for (name, value) in headers {
            if name.eq_ignore_ascii_case(b"transfer-encoding") {
                coded = true;
            } else if name.eq_ignore_ascii_case(b"connection") && visible(value) {
                // A value `HeaderValue::to_str` refuses names nothing; a
                // token that is no header name matches none.
                let tokens = value.split(|b| *b == b',').map(<[u8]>::trim_ascii);
                named.extend(tokens.filter(|t| {
                    !t.eq_ignore_ascii_case(b"host") && !t.eq_ignore_ascii_case(b"content-length")
                }));
            }
        }
        let named = if named.len() > FEW_NAMED {
            Named::Many(named.into_iter().map(NoCase).collect())
        } else {
            Named::Few(named)
        };
        Hops {
            named,
            stale_length: answer && coded,
        }
    }

    /// Whether the header called `name` is removed.
    pub(crate) fn drops(&self, name: &[u8]) -> bool {
        let named = match &self.named {
            Named::Few(few) => few.iter().any(|n| name.eq_ignore_ascii_case(n)),
            Named::Many(many) => many.contains(&NoCase(name)),
        };
        HOP_BY_HOP
            .iter()
            .any(|hop| name.eq_ignore_ascii_case(hop.as_str().as_bytes()))
            || name
                .get(..6)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"proxy-"))
            || (self.stale_length && name.eq_ignore_ascii_case(b"content-length"))
            || named
    }
}

/// A header name compared and hashed without regard to ASCII case.
#[derive(Clone, Copy)]
struct NoCase<'a>(&'a [u8]);

impl PartialEq for NoCase<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(other.0)
    }
}

impl Eq for NoCase<'_> {}

impl Hash for NoCase<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for b in self.0 {
            state.write_u8(b.to_ascii_lowercase());
        }
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

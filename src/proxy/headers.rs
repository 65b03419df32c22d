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
    strip(headers, false);
}

/// Removes a request's hop-by-hop headers, but passes `TE: trailers` on:
/// the proxy carries trailers both ways, and gRPC servers refuse a request
/// without it (RFC 9113 §8.2.2 allows exactly that value on HTTP/2; RFC 9110
/// §10.1.4 lets a proxy that supports trailers say so). Every other `TE`
/// value stays behind.
pub fn strip_request_hop_by_hop(headers: &mut HeaderMap) {
    strip(headers, true);
}

/// Headers that `Connection` cannot make hop-by-hop: the message's framing
/// and target are the proxy's to set, never a caller's to remove.
fn protected(name: &HeaderName) -> bool {
    name == header::HOST || name == header::CONTENT_LENGTH
}

fn strip(headers: &mut HeaderMap, keep_te_trailers: bool) {
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
    if !headers.keys().any(hop) {
        return;
    }
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
        if keep_te_trailers && name == header::TE {
            if !te_sent && lists_trailers(&value) {
                te_sent = true;
                headers.append(header::TE, HeaderValue::from_static("trailers"));
            }
        } else if !hop(name) {
            headers.append(name.clone(), value);
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

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
/// and every `Proxy-*` header.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.contains_key(header::CONNECTION) {
        let named: Vec<HeaderName> = headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
            .collect();
        for name in named {
            headers.remove(name);
        }
    }
    for name in HOP_BY_HOP.iter() {
        headers.remove(name);
    }
    if headers.keys().any(is_proxy_header) {
        let proxy: Vec<HeaderName> = headers
            .keys()
            .filter(|k| is_proxy_header(k))
            .cloned()
            .collect();
        for name in proxy {
            headers.remove(name);
        }
    }
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
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn removes_the_hop_by_hop_set_and_named_headers() {
        let mut h = map(&[
            ("connection", "close, x-secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("proxy-authorization", "x"),
            ("proxy-connection", "keep-alive"),
            ("te", "trailers"),
            ("trailer", "x-t"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "h2c"),
            ("content-type", "text/event-stream"),
            ("x-kept", "yes"),
        ]);
        strip_hop_by_hop(&mut h);
        let left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        assert_eq!(left, vec!["content-type", "x-kept"]);
    }

    #[test]
    fn forwarded_headers_append() {
        let mut h = map(&[("x-forwarded-for", "10.0.0.1"), ("via", "1.1 edge")]);
        add_forwarded(&mut h, Version::HTTP_11, IpAddr::from([127, 0, 0, 1]));
        assert_eq!(h["x-forwarded-for"], "10.0.0.1, 127.0.0.1");
        assert_eq!(h.get_all("via").iter().count(), 2);
        assert_eq!(h["x-forwarded-proto"], "http");
    }
}

use super::*;

fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
    }
    h
}

/// The names left, in their order.
fn names(h: &HeaderMap) -> Vec<&str> {
    h.keys().map(|k| k.as_str()).collect()
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
    assert_eq!(names(&h), vec!["content-type", "x-kept"]);
}

/// A `Connection` listing thousands of names: those that name a header
/// go, in any case and with blanks, the rest name nothing; `Host` and
/// `Content-Length` stay whatever it lists. The names are looked up, not
/// compared with each header (`Hops`), so a caller's 64 KiB head costs a
/// lookup a header.
#[test]
fn a_connection_listing_thousands_of_names_removes_exactly_those_named() {
    let mut listed: Vec<String> = (0..10_000).map(|i| format!("x-{i}")).collect();
    listed.extend([
        "X-Gone".into(),
        " x-also \t".into(),
        "Host".into(),
        "content-length".into(),
    ]);
    let mut h = HeaderMap::new();
    h.append(header::HOST, HeaderValue::from_static("up"));
    h.append(
        header::CONNECTION,
        HeaderValue::from_str(&listed.join(",")).unwrap(),
    );
    for name in [
        "x-gone",
        "x-kept",
        "x-also",
        "x-9999",
        "x-10000",
        "content-length",
    ] {
        h.append(HeaderName::from_static(name), HeaderValue::from_static("1"));
    }
    strip_request_hop_by_hop(&mut h);
    assert_eq!(
        names(&h),
        vec!["host", "x-kept", "x-10000", "content-length"]
    );
    // A few names are compared one by one, to the same effect.
    let mut h = map(&[
        ("connection", "X-Gone, host"),
        ("x-gone", "1"),
        ("host", "up"),
    ]);
    strip_hop_by_hop(&mut h);
    assert_eq!(names(&h), vec!["host"]);
}

#[test]
fn an_answer_coded_loses_its_length_and_keeps_the_upstreams_order() {
    let mut h = map(&[
        ("content-length", "3"),
        ("x-a", "1"),
        ("transfer-encoding", "chunked"),
        ("x-b", "2"),
    ]);
    strip_response_hop_by_hop(&mut h);
    assert_eq!(names(&h), vec!["x-a", "x-b"]);
    // Without a `Transfer-Encoding` the length is the body's framing.
    let mut h = map(&[("content-length", "3"), ("connection", "close")]);
    strip_response_hop_by_hop(&mut h);
    assert_eq!(names(&h), vec!["content-length"]);
}

#[test]
fn a_request_keeps_te_trailers_and_nothing_else_of_te() {
    for (te, kept) in [
        ("trailers", true),
        ("Trailers", true),
        ("deflate;q=0.5, trailers", true),
        ("trailers;q=1", true),
        ("gzip", false),
        ("trailersx", false),
        ("", false),
    ] {
        let mut h = map(&[("connection", "te, close"), ("upgrade", "h2c")]);
        h.insert(header::TE, HeaderValue::from_str(te).unwrap());
        strip_request_hop_by_hop(&mut h);
        let left: Vec<(&str, &str)> = h
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
            .collect();
        let want = if kept {
            vec![("te", "trailers")]
        } else {
            vec![]
        };
        assert_eq!(left, want, "TE: {te:?}");
    }
    let mut h = map(&[("te", "trailers")]);
    strip_hop_by_hop(&mut h);
    assert!(h.is_empty(), "responses never carry TE");
}

#[test]
fn the_headers_left_keep_their_order_and_framing_is_not_nominated() {
    let mut h = map(&[
        ("x-b", "1"),
        ("connection", "x-gone, host, content-length"),
        ("x-a", "2"),
        ("te", "trailers"),
        ("x-gone", "3"),
        ("host", "agent"),
        ("x-b", "4"),
        ("content-length", "5"),
        ("x-c", "6"),
    ]);
    strip_request_hop_by_hop(&mut h);
    let left: Vec<(&str, &str)> = h
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
        .collect();
    assert_eq!(
        left,
        [
            ("x-b", "1"),
            ("x-b", "4"),
            ("x-a", "2"),
            ("te", "trailers"),
            ("host", "agent"),
            ("content-length", "5"),
            ("x-c", "6"),
        ]
    );
}

#[test]
fn forwarded_headers_append() {
    let mut h = map(&[("x-forwarded-for", "10.0.0.1"), ("via", "1.1 edge")]);
    add_forwarded(&mut h, Version::HTTP_11, IpAddr::from([127, 0, 0, 1]));
    assert_eq!(h["x-forwarded-for"], "10.0.0.1, 127.0.0.1");
    assert_eq!(h.get_all("via").iter().count(), 2);
    assert_eq!(h["x-forwarded-proto"], "http");
}

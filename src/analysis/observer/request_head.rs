//! The request head an observer keeps until the exchange is classified:
//! what the classifier reads, and what the analysis thread is told beside
//! it (the caller's authority for a card fetch, its trace context, and for
//! tracing the method and path).

use crate::a2a::classify::{grpc_gzip, A2A_VERSION, GRPC_ENCODING};
use crate::analysis::msg::Caller;
use crate::trace::context::OwnSpan;

pub(super) const TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
const TRACESTATE: http::HeaderName = http::HeaderName::from_static("tracestate");

/// What the classifier reads of a request head: method, URI and the one
/// header it consults (cloning them shares their bytes), and for a GET the
/// authority the caller used (to judge an agent card's URLs by).
pub(super) struct RequestHead {
    pub(super) method: http::Method,
    pub(super) uri: http::Uri,
    pub(super) a2a_version: Option<http::HeaderValue>,
    /// A gRPC call's messages are gzip (`grpc-encoding: gzip`).
    pub(super) grpc_gzip: bool,
    pub(super) host: Option<http::HeaderValue>,
    pub(super) traceparent: Option<http::HeaderValue>,
    pub(super) tracestate: Option<http::HeaderValue>,
}

impl RequestHead {
    /// The head's parts the exchange needs, its headers read in one pass
    /// (each name's first value, as `HeaderMap::get` gives it): four
    /// lookups would hash four names, whatever the request carries.
    pub(super) fn of(head: &http::request::Parts) -> RequestHead {
        let want_host = head.method == http::Method::GET && head.uri.authority().is_none();
        let (mut a2a_version, mut grpc_encoding, mut traceparent, mut tracestate, mut host) =
            (None, None, None, None, None);
        for (name, value) in &head.headers {
            let slot = if *name == A2A_VERSION {
                &mut a2a_version
            } else if *name == GRPC_ENCODING {
                &mut grpc_encoding
            } else if *name == TRACEPARENT {
                &mut traceparent
            } else if *name == TRACESTATE {
                &mut tracestate
            } else if want_host && name == http::header::HOST {
                &mut host
            } else {
                continue;
            };
            slot.get_or_insert(value);
        }
        RequestHead {
            method: head.method.clone(),
            uri: head.uri.clone(),
            a2a_version: a2a_version.cloned(),
            grpc_gzip: grpc_gzip(grpc_encoding),
            host: host.cloned(),
            traceparent: traceparent.cloned(),
            tracestate: tracestate.cloned(),
        }
    }

    /// What the analysis thread needs beyond the classification, when
    /// there is any (`traced`: tracing wants the method and path).
    pub(super) fn caller(
        &self,
        card: bool,
        traced: bool,
        own: Option<OwnSpan>,
    ) -> Option<Box<Caller>> {
        let text = |v: &Option<http::HeaderValue>| {
            v.as_ref().and_then(|v| v.to_str().ok()).map(Into::into)
        };
        let host = card.then(|| self.authority()).flatten();
        let traceparent = text(&self.traceparent);
        (host.is_some() || traceparent.is_some() || traced).then(|| {
            Box::new(Caller {
                host,
                traceparent,
                tracestate: text(&self.tracestate),
                http_method: traced.then(|| self.method.clone()),
                path: traced.then(|| self.uri.path().into()),
                own,
            })
        })
    }

    /// The authority the caller used: h2's `:authority`, else `Host`.
    fn authority(&self) -> Option<Box<str>> {
        match self.uri.authority() {
            Some(a) => Some(a.as_str().into()),
            None => self.host.as_ref()?.to_str().ok().map(Into::into),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What four lookups would give: each name's first value, `Host` for a
    /// GET without an authority only.
    #[test]
    fn each_name_gives_its_first_value_as_a_lookup_does() {
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
        let cases: [Case; 4] = [
            (
                "POST",
                "/",
                &[
                    ("tracestate", "s1"),
                    ("A2A-Version", "1.0"),
                    ("host", "a.example"),
                    ("traceparent", "p1"),
                    ("a2a-version", "0.3"),
                    ("grpc-encoding", "gzip"),
                    ("traceparent", "p2"),
                    ("grpc-encoding", "identity"),
                ],
            ),
            (
                "GET",
                "/card",
                &[("host", "b.example"), ("Host", "c.example")],
            ),
            ("GET", "http://d.example/card", &[("host", "e.example")]),
            (
                "POST",
                "/",
                &[("grpc-encoding", "identity"), ("grpc-encoding", "gzip")],
            ),
        ];
        for (method, uri, headers) in cases {
            let mut req = http::Request::builder().method(method).uri(uri);
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            let (parts, ()) = req.body(()).unwrap().into_parts();
            let got = RequestHead::of(&parts);
            let h = &parts.headers;
            let want_host = parts.method == http::Method::GET && parts.uri.authority().is_none();
            assert_eq!(got.a2a_version.as_ref(), h.get(A2A_VERSION), "{headers:?}");
            assert_eq!(
                got.grpc_gzip,
                grpc_gzip(h.get(GRPC_ENCODING)),
                "{headers:?}"
            );
            assert_eq!(got.traceparent.as_ref(), h.get(TRACEPARENT), "{headers:?}");
            assert_eq!(got.tracestate.as_ref(), h.get(TRACESTATE), "{headers:?}");
            let host = want_host.then(|| h.get(http::header::HOST)).flatten();
            assert_eq!(got.host.as_ref(), host, "{headers:?}");
        }
    }
}

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
    pub(super) fn of(head: &http::request::Parts) -> RequestHead {
        let host = (head.method == http::Method::GET && head.uri.authority().is_none())
            .then(|| head.headers.get(http::header::HOST).cloned())
            .flatten();
        RequestHead {
            method: head.method.clone(),
            uri: head.uri.clone(),
            a2a_version: head.headers.get(A2A_VERSION).cloned(),
            grpc_gzip: grpc_gzip(head.headers.get(GRPC_ENCODING)),
            host,
            traceparent: head.headers.get(TRACEPARENT).cloned(),
            tracestate: head.headers.get(TRACESTATE).cloned(),
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

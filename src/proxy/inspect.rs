//! The seams where validation joins the proxy: an [`Inspector`] sees each
//! exchange's heads and body bytes (never altering them), and may supply the
//! metric labels it learned; a [`ResponseTransform`] is the one opt-in place
//! where a response may be altered (agent-card URL rewriting).

use std::sync::Arc;

use bytes::Bytes;
use http::{request, response};

use super::error::ProxyError;
use super::tee::BodyEnd;
use super::ProxyBody;
use crate::report::access::AccessLine;

/// Label value for `binding` when nothing classified the exchange.
pub const UNKNOWN_BINDING: &str = "unknown";
/// Label value for `method` when the exchange is not a known A2A operation.
pub const OTHER_METHOD: &str = "other";

/// The A2A labels of one exchange, from closed sets only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExchangeLabels {
    /// `"jsonrpc"`, `"rest"` or [`UNKNOWN_BINDING`].
    pub binding: &'static str,
    /// The 1.0 operation name (e.g. `"SendStreamingMessage"`) or [`OTHER_METHOD`].
    pub method: &'static str,
    /// Names this pair of values for the proxy's cache of metric series:
    /// below [`LABEL_SLOTS`], equal for equal pairs, 0 for the default.
    pub slot: u8,
}

/// How many distinct label pairs the proxy caches series for.
pub const LABEL_SLOTS: usize = 64;

impl Default for ExchangeLabels {
    fn default() -> Self {
        ExchangeLabels {
            binding: UNKNOWN_BINDING,
            method: OTHER_METHOD,
            slot: 0,
        }
    }
}

/// Most response bytes gathered for one [`ExchangeObserver::response_data`]
/// call (a body that never pauses still reaches it in runs this long; a
/// chunk as long comes alone, without being gathered).
pub const RUN_BYTES: usize = 16 * 1024;

/// Called by the proxy for every exchange; held in the server state.
pub trait Inspector: Send + Sync + 'static {
    /// A request arrived; return an observer for this exchange, or `None`
    /// to skip it. `has_body`: a body follows the head (false when the
    /// request ended with its head, as its body reported).
    fn begin(
        &self,
        request_id: u64,
        head: &request::Parts,
        has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>>;

    /// Whether this exchange's response should be altered (only agent-card
    /// rewriting, when configured). Decided from the request head; the
    /// transform itself sees the response head and body. Default: never.
    fn transform_for(&self, _head: &request::Parts) -> Option<Box<dyn ResponseTransform>> {
        None
    }

    /// Whether exchange `request_id`'s request may be altered (only push
    /// configs' URLs, with the push relay on). Decided from the request
    /// head; the transform reads the body through the tee, so observers
    /// see the caller's bytes. Default: never.
    fn request_transform_for(
        &self,
        _request_id: u64,
        _head: &request::Parts,
    ) -> Option<Box<dyn RequestTransform>> {
        None
    }
}

/// Alters one request before it goes upstream: may change the head (its
/// `content-length`) and the body, and may ask for the response to be
/// altered too (it knows the operation only once it read the body).
pub trait RequestTransform: Send + 'static {
    /// The head and body to send, and the response's transform, if any.
    fn apply(
        self: Box<Self>,
        head: request::Parts,
        body: super::UpstreamBody,
    ) -> RequestTransformed;
}

/// What a [`RequestTransform`] gives back.
pub type RequestTransformed = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = (
                    request::Parts,
                    super::UpstreamBody,
                    Option<Box<dyn ResponseTransform>>,
                ),
            > + Send,
    >,
>;

/// Sees one exchange. Every call must return quickly and never block: the
/// bytes wait for it. Copy what you need and do the work elsewhere.
pub trait ExchangeObserver: Send + Sync + 'static {
    /// The headers about to go upstream (hop-by-hop ones removed); the
    /// one change an observer may make is opt-in trace propagation.
    /// Default: none.
    fn outgoing_headers(&self, _headers: &mut http::HeaderMap) {}
    /// The response's trailers, as forwarded (gRPC's status). Default:
    /// nothing.
    fn response_trailers(&self, _trailers: &http::HeaderMap) {}
    /// A chunk of the request body, as forwarded.
    fn request_data(&self, data: &Bytes);
    /// The request body ended (exactly once).
    fn request_end(&self, end: BodyEnd);
    /// The upstream's response head (hop-by-hop headers already removed).
    fn response_head(&self, head: &response::Parts);
    /// Bytes of the response body, in order, as received from the
    /// upstream: what one upstream read brought, gathered (at most
    /// [`RUN_BYTES`] at a time), handed over when the body has nothing more
    /// ready or fills a run (the last ones come with `response_end`). Copy
    /// what you need: the buffer is reused.
    fn response_data(&self, data: &[u8]);
    /// The response body ended (exactly once; `Dropped` = the caller went
    /// away), with the bytes that came since the last `response_data`
    /// (often none).
    fn response_end(&self, data: &[u8], end: BodyEnd);
    /// The upstream leg failed before a response head (502/504 to the caller).
    fn upstream_failed(&self, error: &ProxyError);
    /// The labels for `a2a_requests_total` and `a2a_request_duration_seconds`,
    /// asked once when the exchange ends.
    fn labels(&self) -> ExchangeLabels {
        ExchangeLabels::default()
    }
    /// The exchange's access-log line (when the access log is on), given
    /// once as it ends, before `response_end` / `upstream_failed`: an
    /// observer that judges the exchange completes and writes it (task id,
    /// findings) and returns `None`; otherwise it gives it back and the
    /// proxy writes it as it is.
    fn access(&self, line: AccessLine) -> Option<AccessLine> {
        Some(line)
    }
}

/// Alters one response. May change the head (e.g. its `content-length`)
/// and returns it with the body to send; the head goes to the caller only
/// when the future is done, so a transform that must read the whole body
/// to know its head (a rewritten card) may. The body it is given carries
/// the tee, so the transform must read it (wrap it, or gather it then
/// rewrite) for the observer to see the upstream's original bytes;
/// dropping it unread reports the response as `Dropped`.
pub trait ResponseTransform: Send + 'static {
    /// The head and body the caller gets.
    fn apply(self: Box<Self>, head: response::Parts, body: ProxyBody) -> Transformed;
}

/// What a [`ResponseTransform`] gives back: the head and body to send.
pub type Transformed =
    std::pin::Pin<Box<dyn std::future::Future<Output = (response::Parts, ProxyBody)> + Send>>;

//! The messages the proxy's observers send the analysis thread.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use super::RouteJudging;
use crate::a2a::model::Exchange;
use crate::engine::{Head, SkipReason};
use crate::lifecycle::registry::Fact;
use crate::lifecycle::{End, Seq};
use crate::report::access::AccessLine;

/// A message from the proxy's observers.
pub(crate) enum Msg {
    /// A request was classified as an A2A exchange and sent upstream.
    Open {
        id: u64,
        exchange: Box<Exchange>,
        at: Instant,
        /// Its place in the causal order: the messages sent before the
        /// request began (`Seq::after_messages`). Whatever the proxy saw
        /// after that cannot have caused the request.
        seq: Seq,
        /// What else the request said, when it said any of it.
        caller: Option<Box<Caller>>,
        /// The route it came on (`None`: the first).
        route: Option<Arc<RouteJudging>>,
    },
    /// The request could not be classified (body over the limit).
    Unjudged {
        reason: SkipReason,
        route: Option<Arc<RouteJudging>>,
    },
    /// The response head, read by the observer.
    Head { id: u64, head: Head },
    /// A run of the response body (what one upstream read brought).
    Data {
        id: u64,
        /// Where the run's bytes lie in the bytes taken with it.
        piece: Range<usize>,
        /// When the first run passed (for time to first event); later
        /// runs are timed when the analysis thread takes them, which
        /// saves a clock read per run on the forwarding path.
        at: Option<Instant>,
    },
    /// Bytes of this exchange were not delivered: stop judging it.
    Lost { id: u64 },
    End {
        id: u64,
        end: End,
        at: Instant,
        /// Its access-log line, when the access log is on.
        access: Option<Box<AccessLine>>,
        /// A gRPC call's status, when its answer had one.
        grpc: Option<Box<crate::a2a::grpc::GrpcStatus>>,
    },
    /// Facts the other replicas saw, as heard now (`[registry] backend =
    /// "redis"`), with the replica of each entry; they hold bytes of the
    /// queue's budget until handled.
    Facts(HeardFacts),
    /// A route of the config (at start, or from a reload): its session is
    /// made (or given its new settings) now, before its first exchange, so
    /// that what the other replicas say of its tasks is kept from now on.
    Route(Arc<RouteJudging>),
    /// The push relay put its URL in push configs of exchange `id`.
    PushRegistered {
        id: u64,
        regs: Vec<crate::judge::push::Registration>,
        /// The route's name (`None`: the first).
        route: Option<Arc<str>>,
    },
    /// Exchange `id` deletes push config `config` of `task`.
    PushDeleting {
        id: u64,
        task: Option<String>,
        config: Option<String>,
        route: Option<Arc<str>>,
    },
    /// A push delivery passed the relay (its body's bytes held of the
    /// queue's budget until handled), numbered `id` like an exchange.
    Delivery {
        id: u64,
        delivery: Box<crate::judge::push::Delivery>,
        at: Instant,
        /// The delivery's W3C trace context, when it sent one.
        traceparent: Option<Box<str>>,
        /// The route its config was registered on (`None`: the first).
        route: Option<Arc<str>>,
    },
    /// The proxy has drained: judge what came before, then stop.
    Shutdown,
}

/// What an exchange's request said beyond its classification, sent only
/// when it said any of it (or tracing wants the method and path).
#[derive(Debug, Default)]
pub(crate) struct Caller {
    /// For an agent-card fetch: the authority the caller fetched it at
    /// (`Host`), to tell whether the card's URLs lead past the proxy.
    pub(crate) host: Option<Box<str>>,
    /// The caller's W3C trace context.
    pub(crate) traceparent: Option<Box<str>>,
    pub(crate) tracestate: Option<Box<str>>,
    /// The HTTP method and path, for the exchange's span.
    pub(crate) http_method: Option<http::Method>,
    pub(crate) path: Option<Box<str>>,
    /// With `propagate`: the span the serving path sent upstream.
    pub(crate) own: Option<crate::trace::context::OwnSpan>,
}

/// One entry heard: the replica that wrote it, the route its facts are
/// about (when it names one) and its facts.
pub(crate) type Heard = (Box<str>, Option<Box<str>>, Vec<Fact>);

/// What the reader hands the analysis thread: each entry's replica, route
/// (when it names one) and facts, and the bytes they take of the analysis
/// queue's budget.
pub(crate) struct HeardFacts {
    pub(crate) entries: Vec<Heard>,
    pub(crate) bytes: usize,
}

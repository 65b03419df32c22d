//! The forwarding core: the upstream client, header rules, body wrappers
//! (tee, idle timeout, size limit), errors, and the seams where validation joins.

pub mod activity;
pub mod body_limit;
pub mod card_rewrite;
pub mod error;
pub mod exchange;
pub mod forward;
pub mod gather;
pub mod headers;
pub mod idle;
pub mod inbound;
pub mod inspect;
pub mod pool;
mod refusal;
pub mod response;
pub mod route;
pub mod share;
pub mod target;
pub mod tee;
pub mod upstream;

pub use card_rewrite::CardOnly;
pub use error::{ProxyError, UpstreamReason};
pub use forward::Forwarder;
pub use inspect::{
    ExchangeLabels, ExchangeObserver, Inspector, RequestTransform, RequestTransformed,
    ResponseTransform, Transformed, LABEL_SLOTS,
};
pub use tee::{BodyEnd, BodyObserver, TeeBody};

/// Boxed error of the bodies the proxy hands to hyper.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A caller's request body as it came: limited, and teed to the exchange.
pub type CallerBody = TeeBody<body_limit::LimitBody<inbound::Inbound>, exchange::RequestTap>;

/// A caller's request body as it goes upstream: as it came, or as a
/// [`RequestTransform`] gave it back (read through the tee first).
pub type UpstreamBody = http_body_util::Either<CallerBody, ProxyBody>;

/// The response body type the proxy serves.
pub type ProxyBody = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, BoxError>;

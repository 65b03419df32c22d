//! The forwarding step: turn a caller's request into the upstream's, send it
//! on the pooled client, and stream the response back through the tee.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::uri::{Authority, Scheme};
use http::{header, Request, Response, Uri, Version};
use http_body_util::{BodyExt, Either};
use tracing::Instrument;

use super::activity::Activity;
use super::body_limit::LimitBody;
use super::error::ProxyError;
use super::exchange::{InFlight, RequestTap, ResponseTap};
use super::headers::{add_forwarded, strip_request_hop_by_hop, strip_response_hop_by_hop};
use super::idle::IdleTimeout;
use super::pool::{LeasedBody, SendFailure};
pub use super::refusal::{error_response, grpc_error_response};
use super::response::UpstreamResponseBody;
use super::route::{Route, RouteTable, Routed};
use super::share::CallerShare;
use super::tee::TeeBody;
use super::UpstreamBody;
use super::{BoxError, ProxyBody};
use crate::config::Config;

/// The route table the serving threads share, swapped whole on reload.
pub type SharedRoutes = Arc<arc_swap::ArcSwap<RouteTable>>;

/// Forwards one serving thread's exchanges to their routes. Cheap to
/// share (`Arc`).
pub struct Forwarder {
    routes: SharedRoutes,
    /// The serving thread's index: which of each route's clients it uses.
    thread: usize,
    /// The next request id: one counter shared by every serving thread's
    /// forwarder, so ids follow the order requests arrived in.
    next_id: Arc<AtomicU64>,
    max_request_body: u64,
    /// How much of an unsent request's body is read so that a refused
    /// exchange is still classified (`[analysis] max_request_bytes`).
    label_bytes: usize,
    forwarded_headers: bool,
}

// === impl Forwarder ===

impl Forwarder {
    /// The forwarder of serving thread `thread`, to the routes of
    /// `routes`, with the limits of a validated config.
    pub fn new(config: &Config, routes: SharedRoutes, thread: usize) -> Forwarder {
        let p = &config.proxy;
        Forwarder {
            routes,
            thread,
            next_id: Arc::new(AtomicU64::new(1)),
            max_request_body: p.max_request_body,
            label_bytes: config.analysis.max_request_bytes,
            forwarded_headers: p.forwarded_headers,
        }
    }

    /// Closes this thread's idle pooled upstream connections past their
    /// timeout, on every route.
    pub fn reap_idle(&self) {
        for route in self.routes.load().routes(self.thread) {
            route.reap_idle();
        }
    }

    /// The `upstream` label of a request refused before it could be
    /// routed, by the table in use.
    pub fn refused_label(&self) -> Arc<str> {
        self.routes.load().refused_label()
    }

    /// Numbers this forwarder's requests from `ids`, a counter the
    /// forwarders of the other serving threads share.
    pub fn with_ids(mut self, ids: Arc<AtomicU64>) -> Forwarder {
        self.next_id = ids;
        self
    }

    /// Handles one exchange; never fails: errors become 413/502/504 answers.
    /// `activity` is the caller connection's, which the exchange keeps
    /// informed (it is in flight until dropped); `share` is the caller
    /// connection's share of the upstream connections.
    pub async fn handle(
        &self,
        req: Request<super::inbound::Inbound>,
        peer: SocketAddr,
        activity: Option<Arc<Activity>>,
        share: &CallerShare,
    ) -> Response<ProxyBody> {
        // One atomic add per request; Relaxed is enough: only the value's
        // uniqueness and its place in the counter's order matter.
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let span = tracing::debug_span!("exchange", request_id = id);
        self.forward(id, req, peer, activity, share)
            .instrument(span)
            .await
    }

    async fn forward(
        &self,
        id: u64,
        req: Request<super::inbound::Inbound>,
        peer: SocketAddr,
        activity: Option<Arc<Activity>>,
        share: &CallerShare,
    ) -> Response<ProxyBody> {
        let start = Instant::now();
        let (mut head, body) = req.into_parts();
        let grpc = is_grpc(&head.headers);
        let (route, stripped) = {
            let table = self.routes.load();
            let host = head
                .headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .or_else(|| head.uri.authority().map(Authority::as_str));
            let refused = match table.find(self.thread, &head.uri, host) {
                Routed::To(route, stripped) => Ok((route.clone(), stripped)),
                Routed::None(path) => Err(ProxyError::NoRoute(path)),
                Routed::Unsafe(path) => Err(ProxyError::BadPath(path)),
            };
            match refused {
                Ok(found) => found,
                Err(err) => {
                    let unrouted = table.unrouted(self.thread).clone();
                    let exchange = InFlight::new(id, start, None, unrouted)
                        .with_caller(&head)
                        .on_connection(activity);
                    return refuse(&exchange, grpc, err);
                }
            }
        };
        // The inspector sees the path as the route's agent is asked it
        // (stripped); the access log, the caller's.
        let stripped = stripped.and_then(|pq| {
            let mut parts = head.uri.clone().into_parts();
            parts.path_and_query = Some(pq);
            Uri::from_parts(parts).ok()
        });
        let caller_uri = stripped.map(|s| std::mem::replace(&mut head.uri, s));
        let inspector = route.inspector.as_deref();
        let has_body = !http_body::Body::is_end_stream(&body);
        let observer = inspector.and_then(|i| i.begin(id, &head, has_body));
        let mut transform = inspector.and_then(|i| i.transform_for(&head));
        let request_transform = inspector.and_then(|i| i.request_transform_for(id, &head));
        let stripped = caller_uri.map(|c| std::mem::replace(&mut head.uri, c));
        let exchange = InFlight::new(id, start, observer, route.shared.clone()).with_caller(&head);
        let exchange = Arc::new(exchange.on_connection(activity));
        if let Some(uri) = stripped {
            head.uri = uri;
        }
        let upstream = &route.upstream;

        if head.method == http::Method::CONNECT {
            return refuse(&exchange, grpc, ProxyError::MethodNotAllowed(head.method));
        }
        if declared_length(&head.headers).is_some_and(|n| n > self.max_request_body) {
            return refuse(
                &exchange,
                grpc,
                ProxyError::RequestTooLarge(self.max_request_body),
            );
        }
        // gRPC needs HTTP/2 upstream, whatever the other requests use.
        let http2 = upstream.http1.is_none() || grpc;
        let uri = match route.target.uri(&head.uri, http2) {
            Ok(uri) => uri,
            Err(detail) => {
                let err = ProxyError::Upstream {
                    reason: super::error::UpstreamReason::Other,
                    detail: detail.to_string(),
                };
                return refuse(&exchange, grpc, err);
            }
        };
        let tripped = Arc::new(AtomicBool::new(false));
        let body = LimitBody::new(body, self.max_request_body, tripped.clone());
        let mut body = Either::Left(TeeBody::new(body, RequestTap::new(exchange.clone())));
        // The upstream's head is due this long from here. A body the relay
        // reads before the request goes counts against it, as a body going
        // upstream while the head is awaited does; a caller that stops
        // sending it is told so (408), not the upstream blamed.
        let header_timeout = route.header_timeout;
        let due = tokio::time::Instant::now() + header_timeout;
        if let Some(t) = request_transform {
            let Ok(transformed) = tokio::time::timeout_at(due, t.apply(head, body)).await else {
                return refuse(&exchange, grpc, ProxyError::RequestTimeout(header_timeout));
            };
            let response_transform;
            (head, body, response_transform) = transformed;
            transform = transform.or(response_transform);
        }
        let caller_version = head.version;
        strip_request_hop_by_hop(&mut head.headers);
        if self.forwarded_headers {
            add_forwarded(&mut head.headers, caller_version, peer.ip());
        }
        if let Some(o) = &exchange.observer {
            o.outgoing_headers(&mut head.headers);
        }
        // Set after the strip, so that no `Connection` value can remove it.
        if http2 {
            head.headers.remove(header::HOST);
        } else {
            head.headers.insert(header::HOST, route.target.host.clone());
        }
        head.uri = uri;
        head.version = if http2 {
            Version::HTTP_2
        } else {
            Version::HTTP_11
        };
        head.extensions = http::Extensions::new();
        let upstream_req = Request::from_parts(head, body);

        let sent = Instant::now();
        let result =
            tokio::time::timeout_at(due, self.send(&route, upstream_req, http2, share)).await;
        let answered = Instant::now();
        let response = match result {
            Err(_) => return refuse(&exchange, grpc, ProxyError::HeaderTimeout(header_timeout)),
            Ok(Ok(response)) => Ok(response),
            Ok(Err(Failed { error, unsent })) => {
                if let (Some(req), Some(_)) = (unsent, &exchange.observer) {
                    // The request never left: its body is read (bounded)
                    // so that the refusal is counted under its A2A method.
                    // Boxed: a rare path, kept out of every exchange's future.
                    Box::pin(self.read_for_labels(req.into_body())).await;
                }
                Err(error)
            }
        };
        let response = match response {
            Ok(response) => response,
            Err(e) if tripped.load(Ordering::Relaxed) => {
                tracing::debug!(request_id = id, error = %e, "request body over the limit");
                return refuse(
                    &exchange,
                    grpc,
                    ProxyError::RequestTooLarge(self.max_request_body),
                );
            }
            Err(e) if exchange.request_failed.load(Ordering::Relaxed) => {
                tracing::debug!(request_id = id, error = %e, "caller's request body broke");
                return refuse(&exchange, grpc, ProxyError::RequestBroken);
            }
            Err(e) if route.target.scheme == Scheme::HTTP => {
                return refuse(&exchange, grpc, e.hint_plain_http())
            }
            Err(e) => return refuse(&exchange, grpc, e),
        };

        let (mut head, body) = response.into_parts();
        strip_response_hop_by_hop(&mut head.headers);
        // The version is per hop: answer in the caller's.
        head.version = caller_version;
        if let Some(o) = &exchange.observer {
            o.response_head(&head);
        }
        let status = head.status;
        let idle = exchange.clone();
        let on_idle = move || idle.idle_fired.store(true, Ordering::Relaxed);
        let body = IdleTimeout::new(body, route.shared.idle_timeout, on_idle);
        let mut body = TeeBody::new(body, ResponseTap::new(exchange, status)).boxed_unsync();
        let own_time = (sent - start) + answered.elapsed();
        route.shared.overhead.observe(own_time.as_secs_f64());
        if let Some(transform) = transform {
            (head, body) = transform.apply(head, body).await;
        }
        Response::from_parts(head, body)
    }

    /// Sends on the upstream, over HTTP/2 when `http2`; a stale pooled
    /// HTTP/1.1 connection that did not take the request is replaced once.
    /// An HTTP/1.1 connection is leased within the caller's `share`.
    async fn send(
        &self,
        route: &Route,
        req: Request<UpstreamBody>,
        http2: bool,
        share: &CallerShare,
    ) -> Result<Response<UpstreamResponseBody>, Failed> {
        let upstream = &route.upstream;
        let pool = match &upstream.http1 {
            Some(pool) if !http2 => pool,
            _ => {
                let resp = upstream
                    .http2
                    .request(req)
                    .await
                    .map_err(|e| Failed::sent(ProxyError::from_client(&e, e.is_connect())))?;
                return Ok(resp.map(UpstreamResponseBody::plain));
            }
        };
        let connect_failed = |e: BoxError| ProxyError::from_client(&*e, true);
        let wire_failed = |f: SendFailure| ProxyError::from_client(&f.into_error(), false);
        let mut lease = match pool.checkout(&route.target.origin, share).await {
            Ok(lease) => lease,
            Err(e) => return Err(Failed::unsent(connect_failed(e), req)),
        };
        let resp = match lease.send(req).await {
            Ok(resp) => resp,
            Err(SendFailure::Unsent(req, e)) if lease.reused => {
                tracing::debug!(error = %e, "stale pooled connection; using a new one");
                lease = match pool.replace(&route.target.origin, lease).await {
                    Ok(lease) => lease,
                    Err(e) => return Err(Failed::unsent(connect_failed(e), *req)),
                };
                lease
                    .send(*req)
                    .await
                    .map_err(|f| Failed::sent(wire_failed(f)))?
            }
            Err(f) => return Err(Failed::sent(wire_failed(f))),
        };
        let pool = pool.clone();
        Ok(resp.map(|()| UpstreamResponseBody::leased(LeasedBody::new(lease, pool))))
    }

    /// Reads up to `label_bytes` of a request body that never went upstream
    /// (within a second): the observer classifies the request at its end,
    /// so a refusal is counted under its A2A method, not `other`.
    async fn read_for_labels(&self, mut body: UpstreamBody) {
        let read = async {
            let mut seen = 0usize;
            while let Some(Ok(frame)) = body.frame().await {
                seen += frame.data_ref().map_or(0, Bytes::len);
                if seen > self.label_bytes {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(LABEL_READ, read).await;
    }
}

/// The proxy's own answer to a call it could not forward: a gRPC status
/// to a gRPC caller, a plain-text HTTP error to any other.
fn refuse(exchange: &InFlight, grpc: bool, err: ProxyError) -> Response<ProxyBody> {
    exchange.failed(&err);
    if grpc {
        grpc_error_response(&err)
    } else {
        error_response(&err)
    }
}

/// Longest wait for the body of a request refused before it was sent.
const LABEL_READ: Duration = Duration::from_secs(1);

/// A send that failed: why, and the request when it never left (its body
/// still unread).
struct Failed {
    error: ProxyError,
    unsent: Option<Request<UpstreamBody>>,
}

impl Failed {
    fn sent(error: ProxyError) -> Failed {
        Failed {
            error,
            unsent: None,
        }
    }

    fn unsent(error: ProxyError, req: Request<UpstreamBody>) -> Failed {
        Failed {
            error,
            unsent: Some(req),
        }
    }
}

/// Whether the request is a gRPC call (`application/grpc`, `+proto` and
/// the other `application/grpc+...` subtypes).
fn is_grpc(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.as_bytes().get(..16))
        .is_some_and(|m| m.eq_ignore_ascii_case(b"application/grpc"))
}

fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

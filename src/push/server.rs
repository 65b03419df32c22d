//! The relay's listener (`push.listen`): each delivery's token looked up,
//! the delivery forwarded to the caller's webhook unchanged (method,
//! headers but the hop-by-hop ones, body, streamed), the webhook's answer
//! returned unchanged; the body copied (bounded) on the way and judged
//! after the answer went back, so judging never delays a delivery.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch, Semaphore};

use super::table::is_token;
use super::Relay;
use crate::judge::push::{Delivery, WebhookAnswer};
use crate::proxy::activity::{Activity, Verdict};
use crate::proxy::headers::{strip_hop_by_hop, strip_request_hop_by_hop};
use crate::proxy::{BodyEnd, BodyObserver, ProxyBody, TeeBody};
use crate::report::metrics::status_class;

/// Longest wait for a delivery's body to end after its answer, for judging.
const BODY_WAIT: Duration = Duration::from_secs(30);
/// Longest `Authorization` value kept for judging.
const MAX_AUTHORIZATION: usize = 8192;

/// The relay's listener, running.
pub struct RelayServer {
    addr: std::net::SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    slots: Arc<Semaphore>,
    max: u32,
}

impl RelayServer {
    /// Serves `listener` for `relay`.
    pub fn start(listener: TcpListener, relay: Arc<Relay>) -> std::io::Result<RelayServer> {
        let addr = listener.local_addr()?;
        let (stop, stop_rx) = watch::channel(false);
        let max = u32::try_from(relay.settings.max_connections.clamp(1, 1 << 20)).unwrap_or(1);
        let slots = Arc::new(Semaphore::new(max as usize));
        let task = tokio::spawn(accept(listener, relay, slots.clone(), stop_rx));
        Ok(RelayServer {
            addr,
            stop,
            task,
            slots,
            max,
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stops accepting; deliveries in flight get `grace` to finish.
    pub async fn stop(self, grace: Duration) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        let all = self.slots.acquire_many(self.max);
        let _ = tokio::time::timeout(grace, all).await;
    }
}

/// How often expired registrations are swept (and the gauge set) when no
/// registration comes to do it.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

async fn accept(
    listener: TcpListener,
    relay: Arc<Relay>,
    slots: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    let mut sweep = tokio::time::interval(SWEEP_EVERY);
    loop {
        let permit = tokio::select! {
            _ = stop.changed() => return,
            _ = sweep.tick() => {
                relay.registered_now();
                continue;
            }
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
        };
        let stream = tokio::select! {
            _ = stop.changed() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "push relay: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let (relay, builder, mut stop) = (relay.clone(), builder.clone(), stop.clone());
        tokio::spawn(async move {
            // The caller connections' deadlines: an agent that sends no
            // request, or keeps a connection idle, does not hold a slot.
            let deadlines = relay.settings.deadlines;
            let activity = Arc::new(Activity::new(Instant::now()));
            let on_conn = activity.clone();
            let service = service_fn(move |req| {
                let (relay, on_conn) = (relay.clone(), on_conn.clone());
                async move {
                    on_conn.begin();
                    let resp = deliver(&relay, req).await;
                    on_conn.end();
                    Ok::<_, Infallible>(resp)
                }
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            let mut wait = Duration::ZERO;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    _ = stop.changed() => {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                        break;
                    }
                    _ = tokio::time::sleep(wait) => match activity.verdict(Instant::now(), &deadlines) {
                        Verdict::Wait(next) => wait = next,
                        Verdict::Close(_) => break,
                    },
                }
            }
            drop(permit);
        });
    }
}

/// Forwards one delivery; judges it once its body has passed.
async fn deliver(relay: &Arc<Relay>, req: Request<Incoming>) -> Response<ProxyBody> {
    let start = Instant::now();
    let token = req.uri().path().rsplit('/').next().unwrap_or_default();
    let entry = is_token(token)
        .then(|| relay.table.get(token, start))
        .flatten();
    let Some(entry) = entry else {
        relay.outcome(None, "unknown_token");
        return text(
            StatusCode::NOT_FOUND,
            "a2a-tap push relay: unknown or expired token\n",
        );
    };
    let token: Box<str> = token.into();
    let id = relay.ids.fetch_add(1, Ordering::Relaxed);
    let seq = relay.notes.seq(&entry.upstream);
    let (mut parts, body) = req.into_parts();
    let caller_version = parts.version;
    let header_text = |name: &str, max: usize| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.len() <= max)
            .map(str::to_owned)
    };
    let authorization = header_text(header::AUTHORIZATION.as_str(), MAX_AUTHORIZATION);
    let traceparent = header_text("traceparent", 64).map(String::into_boxed_str);
    let (told, body_seen) = oneshot::channel();
    let tap = DeliveryTap {
        copy: Vec::new(),
        max: relay.max_body_bytes,
        over: false,
        told: Some(told),
    };
    let body = TeeBody::new(body, tap)
        .map_err(|e| Box::new(e) as crate::proxy::BoxError)
        .boxed_unsync();
    strip_request_hop_by_hop(&mut parts.headers);
    if let Some(authority) = entry.webhook.authority() {
        if let Ok(host) = HeaderValue::from_str(authority.as_str()) {
            parts.headers.insert(header::HOST, host);
        }
    }
    parts.uri = entry.webhook.clone();
    parts.version = http::Version::HTTP_11;
    parts.extensions = http::Extensions::new();
    let sent = relay.client.request(Request::from_parts(parts, body));
    let (answer, response) = match tokio::time::timeout(relay.settings.webhook_timeout, sent).await
    {
        Ok(Ok(resp)) => {
            let (mut head, body) = resp.into_parts();
            if head.headers.contains_key(header::TRANSFER_ENCODING) {
                head.headers.remove(header::CONTENT_LENGTH);
            }
            strip_hop_by_hop(&mut head.headers);
            head.version = caller_version;
            let answer = if head.status.is_success() {
                WebhookAnswer::Delivered
            } else {
                WebhookAnswer::Error
            };
            let body = body
                .map_err(|e| Box::new(e) as crate::proxy::BoxError)
                .boxed_unsync();
            (answer, Response::from_parts(head, body))
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "push relay: webhook unreachable");
            let resp = text(
                StatusCode::BAD_GATEWAY,
                "a2a-tap push relay: the webhook could not be reached\n",
            );
            (WebhookAnswer::Unreachable, resp)
        }
        Err(_) => {
            let resp = text(
                StatusCode::GATEWAY_TIMEOUT,
                "a2a-tap push relay: the webhook did not answer within push.webhook_timeout\n",
            );
            (WebhookAnswer::Unreachable, resp)
        }
    };
    let route = entry.upstream.clone();
    relay.outcome(
        Some(&route),
        match answer {
            WebhookAnswer::Delivered => "delivered",
            WebhookAnswer::Error => "webhook_error",
            WebhookAnswer::Unreachable => "webhook_unreachable",
        },
    );
    relay.counted(&route, status_class(response.status()), start.elapsed());
    let mut delivery = Delivery {
        token,
        authorization,
        body: None,
        answer,
        seq,
    };
    let mut body_seen = body_seen;
    match body_seen.try_recv() {
        // As a rule the webhook read the whole body before it answered:
        // judged in order with what the proxy forwards next.
        Ok(body) => {
            delivery.body = body;
            relay
                .notes
                .delivered(id, delivery, (traceparent, Some(route.clone())));
        }
        // It answered first: judged once the body has passed (a bounded
        // number wait; past it, judged without the body).
        Err(oneshot::error::TryRecvError::Empty) => {
            match relay.late_bodies.clone().try_acquire_owned() {
                Ok(permit) => {
                    let notes = relay.notes.clone();
                    tokio::spawn(async move {
                        if let Ok(Ok(body)) = tokio::time::timeout(BODY_WAIT, body_seen).await {
                            delivery.body = body;
                        }
                        notes.delivered(id, delivery, (traceparent, Some(route)));
                        drop(permit);
                    });
                }
                Err(_) => {
                    relay
                        .notes
                        .delivered(id, delivery, (traceparent, Some(route.clone())));
                }
            }
        }
        Err(oneshot::error::TryRecvError::Closed) => {
            relay
                .notes
                .delivered(id, delivery, (traceparent, Some(route.clone())));
        }
    }
    response
}

/// Copies a delivery's body (up to `max`) for judging; tells it at the
/// end, `None` when it did not pass whole or was over the bound.
struct DeliveryTap {
    copy: Vec<u8>,
    max: usize,
    over: bool,
    told: Option<oneshot::Sender<Option<Vec<u8>>>>,
}

impl BodyObserver for DeliveryTap {
    fn data(&mut self, chunk: &Bytes) {
        if self.over || self.copy.len() + chunk.len() > self.max {
            self.over = true;
            self.copy = Vec::new();
            return;
        }
        self.copy.extend_from_slice(chunk);
    }

    fn end(&mut self, end: BodyEnd) {
        let whole = end == BodyEnd::Complete && !self.over;
        if let Some(told) = self.told.take() {
            let _ = told.send(whole.then(|| std::mem::take(&mut self.copy)));
        }
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<ProxyBody> {
    let mut resp = Response::new(
        Full::new(Bytes::from_static(body.as_bytes()))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

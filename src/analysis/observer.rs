//! The proxy-side half of validation: one observer per exchange copies the
//! request (bounded) and every response piece to the analysis thread,
//! without ever waiting for it.
//!
//! A response's messages are handed over in batches: the proxy hands the
//! observer a run of bytes (what one upstream read brought, or a full
//! run, gathered) at a time, the last with the end, and the response head
//! is held until the first run or the end. Each hand-over takes the
//! queue's lock, which every serving thread and the analysis thread share,
//! and copies the run into the queue's byte buffer as one message: one take
//! per upstream read instead of one per piece (a small JSON response,
//! head, body and end together, is one). Bytes are copied, not shared: a
//! read buffer is let go on the serving thread as soon as its bytes are
//! forwarded, so the HTTP reader reuses it instead of allocating a new one
//! that the analysis thread would free. The request takes none of its
//! own: its place in the causal order is the queue's count of messages
//! sent when it began, and its opening waits for the first hand-over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use super::clock::Clock;
use super::handle::AnalysisHandle;
use super::msg::Msg;
use super::queue::{queue, Sender};
use super::shards::Shards;
use super::worker::Worker;
use super::{RouteJudging, TapConfig};
use crate::trace::context::{OwnSpan, TraceParent};
use request_head::{RequestHead, TRACEPARENT};

use crate::a2a::classify::classify_with;
use crate::a2a::grpc::{self, GrpcStatus};
use crate::engine::{Head, SkipReason};
use crate::lifecycle::{End, Registry, Seq};
use crate::proxy::card_rewrite::CardRewriter;
use crate::proxy::{ExchangeLabels, ExchangeObserver, Inspector, ResponseTransform};
use crate::report::access::AccessLine;
use crate::report::audit::AuditLog;
use crate::report::metrics::Metrics;

/// The validation layer as the proxy sees it: an `Inspector`.
#[derive(Clone)]
pub struct Tap {
    shared: Arc<Shared>,
}

struct Shared {
    /// The queue of the analysis thread that judges this tap's route.
    tx: Sender<Msg>,
    /// Every analysis thread's queue, and which routes each judges.
    shards: Arc<Shards>,
    clock: Clock,
    max_request_bytes: usize,
    /// `a2a_streams_active{upstream}`, resolved once.
    streams_active: prometheus::IntGauge,
    /// Rewrites agent cards, when `rewrite_agent_card` is on.
    card: Option<Arc<CardRewriter>>,
    /// Whether exchanges are traced (their method and path are then sent).
    traced: bool,
    /// With `propagate`: the root sampling ratio of the spans decided here.
    propagate: Option<f64>,
    /// The route its exchanges come on (`None`: the first, as built).
    route: Option<Arc<RouteJudging>>,
}

impl Tap {
    /// Starts the analysis threads (`cfg.threads`, each judging its own
    /// routes, the first route on the first).
    pub fn start(
        cfg: TapConfig,
        metrics: Arc<Metrics>,
        audit: AuditLog,
    ) -> std::io::Result<(Tap, AnalysisHandle)> {
        let mut cfg = cfg;
        let n = cfg.threads.max(1);
        // Each thread's queue gets its share of the bound, so what
        // analysis holds in all stays within `queue_bytes`.
        let share = (cfg.queue_bytes / n).max(1);
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| queue(share)).unzip();
        let shards = Arc::new(Shards::new(senders, &cfg.upstream));
        let traced = cfg.trace.is_some();
        let propagate = cfg
            .trace
            .as_ref()
            .filter(|t| t.propagate)
            .map(|t| t.sample_ratio);
        let route_registry = cfg.registry.clone();
        let mut registry = Registry::new(cfg.registry.clone());
        let (replicas, publisher) = match cfg.share.take() {
            Some(settings) => {
                registry.share();
                let (r, p) =
                    super::shared_registry::Replicas::start(settings, &metrics, shards.clone())?;
                (Some(r), Some(p))
            }
            None => (None, None),
        };
        let finding_lines = super::worker::finding_lines();
        // Each thread gathers its spans apart; the exporter ends when all
        // of them have ended.
        let trace = cfg.trace.take();
        let mut threads = Vec::with_capacity(n);
        for (i, rx) in receivers.into_iter().enumerate() {
            let first = i == 0;
            // The first route is judged on the first thread; on the others
            // its slot is an empty stand-in that nothing is sent to.
            let registry = if first {
                std::mem::replace(&mut registry, Registry::new(route_registry.clone()))
            } else {
                Registry::new(route_registry.clone())
            };
            let tracer = trace.as_ref().map(|t| {
                super::worker::tracer::Tracer::new(
                    t.spans.sibling(),
                    t.sample_ratio,
                    t.server_address.clone(),
                )
                .with_max_id(cfg.engine.max_id_bytes)
            });
            let worker = Worker::new(
                registry,
                cfg.engine,
                cfg.policy.clone(),
                cfg.upstream.clone(),
                metrics.clone(),
                audit.clone(),
                share,
            )
            .with_base_path(&cfg.upstream_base_path)
            .with_route_registry(route_registry.clone())
            .with_clock(cfg.clock.clone())
            .with_access(cfg.access.clone())
            .with_bypass_check(cfg.card.is_none(), cfg.public_authority.clone())
            .with_tracer(tracer)
            .with_publisher(publisher.clone())
            .with_finding_lines(finding_lines.clone())
            .with_first_route(first)
            .with_push(if first { cfg.push.take() } else { None });
            let name = if first {
                "a2a-tap-analysis".to_owned()
            } else {
                format!("a2a-analysis-{i}")
            };
            threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker.run(rx))?,
            );
        }
        let shared = Arc::new(Shared {
            tx: shards.first().clone(),
            shards: shards.clone(),
            clock: cfg.clock.clone(),
            max_request_bytes: cfg.max_request_bytes,
            streams_active: metrics.streams_active.with(&cfg.upstream),
            card: cfg
                .card
                .map(|c| CardRewriter::new(c, &cfg.upstream, &metrics)),
            traced,
            propagate,
            route: None,
        });
        Ok((
            Tap { shared },
            AnalysisHandle {
                threads,
                shards,
                replicas,
            },
        ))
    }
}

impl Tap {
    /// The push relay's side of the analysis queues.
    pub fn push_notes(&self) -> super::PushNotes {
        super::PushNotes {
            shards: self.shared.shards.clone(),
            clock: self.shared.clock.clone(),
        }
    }
}

impl Inspector for Tap {
    fn begin(
        &self,
        request_id: u64,
        head: &http::request::Parts,
        has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>> {
        let obs = Observer {
            id: request_id,
            begun: Seq::after_messages(self.shared.tx.sent()),
            shared: self.shared.clone(),
            request: Mutex::new(Request {
                head: Some(RequestHead::of(head)),
                body: Vec::new(),
                over: None,
            }),
            held: Mutex::default(),
            opened: self.shared.clock.now(),
            labels: OnceLock::new(),
            lost: AtomicBool::new(false),
            stream: AtomicBool::new(false),
            data_sent: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            access: Mutex::new(None),
            grpc: Mutex::new(None),
            own: self.shared.propagate.map(|ratio| {
                let parent = head
                    .headers
                    .get(TRACEPARENT)
                    .and_then(|v| v.to_str().ok())
                    .and_then(TraceParent::parse);
                OwnSpan::decide(parent.as_ref(), ratio)
            }),
        };
        if !has_body {
            obs.open();
        }
        Some(Arc::new(obs))
    }

    fn transform_for(&self, head: &http::request::Parts) -> Option<Box<dyn ResponseTransform>> {
        crate::proxy::card_rewrite::card_transform(head, self.shared.card.as_ref()?)
    }
}

struct Request {
    /// Taken when the exchange is opened with the analysis thread.
    head: Option<RequestHead>,
    /// The body so far, copied (a shared piece would pin the whole read
    /// buffer it came in), its bytes taken from the analysis budget.
    body: Vec<u8>,
    /// Not judged, and why: over `max_request_bytes`, or over the budget.
    over: Option<SkipReason>,
}

/// What an observer holds for its next hand-over to the analysis thread:
/// the exchange's opening (its classification: nothing is judged before
/// the response, so it goes with the response's first pieces, or its end,
/// and costs no hand-over of its own) and the response head.
#[derive(Default)]
struct Held {
    open: Option<Msg>,
    head: Option<Head>,
}

/// One exchange's observer.
struct Observer {
    id: u64,
    /// The request's place in the causal order, taken when it began.
    begun: Seq,
    shared: Arc<Shared>,
    request: Mutex<Request>,
    /// What waits for the next hand-over. Held while handing over, which
    /// keeps hand-overs in order.
    held: Mutex<Held>,
    opened: Instant,
    /// Set when the request is classified as A2A.
    labels: OnceLock<ExchangeLabels>,
    /// Some response bytes were not delivered: the exchange is unjudged.
    lost: AtomicBool,
    /// The response is an event stream (for the active-streams gauge).
    stream: AtomicBool,
    /// A response piece has been sent to the analysis thread.
    data_sent: AtomicBool,
    ended: AtomicBool,
    /// The exchange's access-log line, kept for its end.
    access: Mutex<Option<Box<AccessLine>>>,
    /// With `propagate`: its span, decided before the request goes upstream.
    own: Option<OwnSpan>,
    /// A gRPC call's status (trailers, or a trailers-only head), for its end.
    grpc: Mutex<Option<Box<GrpcStatus>>>,
}

impl Observer {
    /// Classifies the request, once, and holds the exchange's opening
    /// (stamped when it began) for the analysis thread until the next
    /// hand-over.
    fn open(&self) {
        let Ok(mut req) = self.request.lock() else {
            return;
        };
        let Some(head) = req.head.take() else { return };
        if let Some(reason) = req.over {
            self.shared.tx.send(Msg::Unjudged {
                reason,
                route: self.shared.route.clone(),
            });
            return;
        }
        let body = std::mem::take(&mut req.body);
        drop(req);
        let version = head.a2a_version.as_ref();
        let path = head.uri.path();
        let exchange = if head.method == http::Method::POST && grpc::route(path).is_some() {
            grpc::classify(path, &body, head.grpc_gzip)
        } else {
            classify_with(&head.method, &head.uri, version, &body)
        };
        self.shared.tx.unreserve(body.len());
        let Some(exchange) = exchange else {
            return;
        };
        let _ = self.labels.set(labels_of(&exchange));
        let card = exchange.operation == crate::a2a::model::Operation::GetAgentCard;
        let caller = head.caller(card, self.shared.traced, self.own);
        self.held().open = Some(Msg::Open {
            id: self.id,
            exchange: Box::new(exchange),
            at: self.opened,
            seq: self.begun,
            caller,
            route: self.shared.route.clone(),
        });
    }

    /// What is held for the next hand-over; a panic elsewhere while holding
    /// it leaves it consistent, so poisoning is ignored rather than spread.
    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands what is held (the opening, the response head), `data` (the
    /// response bytes since the last hand-over) and `end` to the analysis
    /// thread in one go, the bytes copied into the queue. Bytes over the
    /// analysis budget are not queued: the exchange goes unjudged, a lost
    /// piece standing in their place so that the analysis thread stops
    /// judging it before its end arrives; once lost, later bytes are
    /// dropped.
    fn hand_over(&self, data: &[u8], mut end: Option<Msg>) {
        if data.is_empty() && end.is_none() {
            return;
        }
        let id = self.id;
        let mut held = self.held();
        let Held { open, head } = &mut *held;
        let mut lost = None;
        if !self.lost.load(Ordering::Relaxed) {
            let first = !data.is_empty()
                && !self.data_sent.load(Ordering::Relaxed)
                && !self.data_sent.swap(true, Ordering::Relaxed);
            let at = first.then(|| self.shared.clock.now());
            let sent = self.shared.tx.send_with(data.len(), |batch| {
                batch.items.extend(open.take());
                batch
                    .items
                    .extend(head.take().map(|head| Msg::Head { id, head }));
                if !data.is_empty() {
                    let piece = batch.copy(data);
                    batch.items.push(Msg::Data { id, piece, at });
                }
                batch.items.extend(end.take());
            });
            if sent {
                return;
            }
            self.lost.store(true, Ordering::Relaxed);
            lost = (!data.is_empty()).then_some(Msg::Lost { id });
        }
        if lost.is_some() || end.is_some() {
            self.shared.tx.send_with(0, |batch| {
                batch.items.extend(open.take());
                batch
                    .items
                    .extend(head.take().map(|head| Msg::Head { id, head }));
                batch.items.extend(lost);
                batch.items.extend(end);
            });
        }
    }

    /// Keeps a gRPC call's status for its end.
    fn set_grpc_status(&self, status: GrpcStatus) {
        *self.grpc.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(status));
    }

    /// Ends the exchange (once) with the bytes that came since the last
    /// hand-over.
    fn finish(&self, data: &[u8], end: End) {
        if self.ended.swap(true, Ordering::AcqRel) {
            return;
        }
        if self.stream.load(Ordering::Acquire) {
            self.shared.streams_active.dec();
        }
        let access = self
            .access
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let grpc = self
            .grpc
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let end = Msg::End {
            id: self.id,
            end,
            at: self.shared.clock.now(),
            access,
            grpc,
        };
        self.hand_over(data, Some(end));
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        // A body still gathered gives its bytes back to the budget.
        if let Ok(req) = self.request.get_mut() {
            self.shared.tx.unreserve(req.body.len());
        }
        // Every exchange ends exactly once for the analysis thread.
        self.finish(&[], End::ClientGone);
    }
}

mod events;
mod labels;
mod request_head;
mod route;

use labels::labels_of;

#[cfg(test)]
mod tests;

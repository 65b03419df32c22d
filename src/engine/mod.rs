//! One exchange's response through inflate, SSE framer, decoder and
//! reducer: the engine that both the live proxy and `a2a-tap check` drive.
//! Pure: no I/O, no clock (time is passed in), no async.

pub mod evidence;
mod frame;
mod grpc;
mod head;
pub mod inflate;

use crate::a2a::card::CardInfo;
use crate::a2a::decode::decode;
use crate::a2a::last_frame::LastFrame;
use crate::a2a::model::{Decoded, EventKind, Exchange, Malformed, Operation, Payload};
use crate::findings::{Finding, Kind};
use crate::lifecycle::{End, Millis, Outcome, Reducer, Registry, Seq};
use crate::sse::Framer;
use evidence::EvidencePolicy;
use frame::{on_frame, unaccused, Stream};
pub use head::{Head, Media};
use inflate::Inflate;

/// Limits and evidence rules of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Largest non-streamed body judged (decoded size); larger is skipped.
    pub max_body_bytes: usize,
    /// Largest SSE event; larger becomes one `malformed_event`.
    pub max_event_bytes: usize,
    /// Ids longer than this are kept as their digest and shown cut.
    pub max_id_bytes: usize,
    /// What one exchange may inflate (`Content-Encoding`, gRPC gzip).
    pub inflate: inflate::Budget,
    pub evidence: EvidencePolicy,
    /// How long a stream may stay open after its end (`stream_not_closed`,
    /// judged live on the analysis thread's tick).
    pub close_wait: std::time::Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_body_bytes: 4 << 20,
            max_event_bytes: 1 << 20,
            max_id_bytes: crate::lifecycle::DEFAULT_MAX_ID_BYTES,
            inflate: inflate::Budget::default(),
            evidence: EvidencePolicy::default(),
            close_wait: std::time::Duration::from_secs(5),
        }
    }
}

/// What the engine reports besides findings.
pub trait Sink {
    /// A finding, evidence attached.
    fn finding(&mut self, finding: Finding);
    /// One decoded stream event.
    fn event(&mut self, _kind: EventKind) {}
    /// One frame or whole body was read and judged (decoded or found
    /// malformed): `check` tells "clean" from "nothing read" by it.
    fn read(&mut self) {}
    /// One event the engine did not read (a gap in the stream's history;
    /// judging goes on, findings that would rest on it are withheld).
    fn gap(&mut self, _reason: SkipReason) {}
    /// An agent card passed (a 2xx answer to `GetAgentCard` that is a JSON
    /// object): what it says of the agent.
    fn card(&mut self, _card: CardInfo) {}
    /// What one frame, message or whole body read decoded to (or why it is
    /// malformed), with its event index (`None` for a whole body): for a
    /// report that draws each exchange's timeline (`--format html`).
    fn decoded(&mut self, _index: Option<u64>, _decoded: Result<&Decoded<'_>, &Malformed>) {}
}

impl Sink for Vec<Finding> {
    fn finding(&mut self, finding: Finding) {
        self.push(finding);
    }
}

/// Why an exchange was not (fully) judged: the label of
/// `a2a_analysis_skipped_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// A non-streamed response body above `max_body_bytes`.
    BodyTooLarge,
    /// A request body above the classifier's limit.
    RequestTooLarge,
    /// One SSE event above `max_event_bytes`: a gap in its stream, which
    /// is judged on without it.
    EventTooLarge,
    /// A `Content-Encoding` that cannot be undone, or a corrupt body.
    ContentEncoding,
    /// Analysis fell behind and bytes were not seen.
    Overload,
    /// A compressed answer inflated past its budget
    /// (`analysis.max_inflated_bytes`, `analysis.max_inflate_ratio`), or a
    /// gRPC message repeated a field more than judging reads.
    InflatedTooLarge,
}

impl SkipReason {
    /// Every reason, for pre-registering label values.
    pub const ALL: [SkipReason; 6] = [
        SkipReason::BodyTooLarge,
        SkipReason::RequestTooLarge,
        SkipReason::EventTooLarge,
        SkipReason::ContentEncoding,
        SkipReason::Overload,
        SkipReason::InflatedTooLarge,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::BodyTooLarge => "body_too_large",
            SkipReason::RequestTooLarge => "request_too_large",
            SkipReason::EventTooLarge => "event_too_large",
            SkipReason::ContentEncoding => "content_encoding",
            SkipReason::Overload => "overload",
            SkipReason::InflatedTooLarge => "inflated_too_large",
        }
    }
}

enum Body {
    /// No response head yet.
    Waiting,
    /// `text/event-stream`: judged frame by frame. Boxed: it is most of a
    /// stream's state and no other body's, and the engine is moved when an
    /// exchange opens and closes.
    Stream(Box<Stream>),
    /// A gRPC answer: its messages judged as they complete.
    Grpc(Box<grpc::Grpc>),
    /// A JSON body, copied up to the limit and judged at its end.
    Whole {
        buf: Vec<u8>,
    },
    /// Not judged: an operation with nothing to check, or a non-2xx answer
    /// that is not JSON (a load balancer's error page is not the agent's).
    /// A non-2xx JSON answer is gathered, and judged only if it is an A2A
    /// error.
    Ignored,
    Skipped(SkipReason),
}

/// The engine state of one exchange.
pub struct ExchangeEngine {
    reducer: Reducer,
    body: Body,
    inflate: Inflate,
    /// What is left of the exchange's inflate budget.
    budget: inflate::Budget,
    cfg: EngineConfig,
    scratch: Vec<Finding>,
}

impl ExchangeEngine {
    /// Starts judging an exchange whose request was stamped `seq`.
    pub fn new(exchange: Exchange, seq: Seq, cfg: EngineConfig) -> ExchangeEngine {
        ExchangeEngine {
            reducer: Reducer::with_max_id(exchange, seq, cfg.max_id_bytes),
            body: Body::Waiting,
            inflate: Inflate::Identity,
            budget: cfg.inflate,
            cfg,
            scratch: Vec::new(),
        }
    }

    /// The exchange being judged.
    pub fn exchange(&self) -> &Exchange {
        self.reducer.exchange()
    }

    /// The task the exchange is about, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.reducer.task_id()
    }

    /// What the exchange showed of its task so far, for its span.
    pub fn reducer(&self) -> &crate::lifecycle::Reducer {
        &self.reducer
    }

    /// Whether the response is an event stream (a gRPC one once it has
    /// carried a message: a refusal comes as a status alone).
    pub fn is_stream(&self) -> bool {
        match &self.body {
            Body::Stream(_) => true,
            Body::Grpc(g) => g.streaming && g.messages > 0,
            _ => false,
        }
    }

    /// Bytes the engine holds for this exchange (a body gathered whole, a
    /// partial SSE event), for the driver's global bound.
    pub fn held_bytes(&self) -> usize {
        match &self.body {
            Body::Stream(s) => s.framer.buffered_capacity() + s.last.held_bytes(),
            Body::Whole { buf } => buf.capacity(),
            Body::Grpc(g) => g.held_bytes(),
            _ => 0,
        }
    }

    /// Why the exchange is not judged, if it is not.
    pub fn skipped(&self) -> Option<SkipReason> {
        match self.body {
            Body::Skipped(r) => Some(r),
            _ => None,
        }
    }

    /// Stops judging: the rest of the exchange is unseen. Findings already
    /// made stand; nothing after this point is reported.
    pub fn skip(&mut self, reason: SkipReason) {
        self.body = Body::Skipped(reason);
    }

    /// The driver drops this exchange without its end (it stopped judging
    /// it): the registry no longer counts its stream as following a task.
    pub fn release(&mut self, reg: &mut Registry) {
        self.reducer.release(reg);
    }

    /// The response head arrived.
    pub fn response_head(
        &mut self,
        status: u16,
        content_type: Option<&str>,
        content_encoding: Option<&str>,
    ) {
        self.head(Head::read(status, content_type, content_encoding));
    }

    /// The response head, already read (`Head::read`).
    pub fn head(&mut self, head: Head) {
        let op = self.exchange().operation;
        if let Media::Grpc { gzip } = head.media {
            // gRPC answers are HTTP 200; another status is a transport's
            // (a load balancer's), not the agent's.
            let ok = head.status == 200;
            self.reducer
                .on_response_head(head.status, ok && op.streams());
            self.body = if ok && judged(op) {
                Body::Grpc(Box::new(grpc::Grpc::new(
                    op.streams(),
                    gzip,
                    self.cfg.inflate,
                )))
            } else {
                Body::Ignored
            };
            return;
        }
        let is_stream = head.media == Media::EventStream;
        self.reducer.on_response_head(head.status, is_stream);
        if !judged(op) {
            self.body = Body::Ignored;
            return;
        }
        match Inflate::for_encoding(head.encoding) {
            Ok(inf) => self.inflate = inf,
            Err(_) => {
                self.body = Body::Skipped(SkipReason::ContentEncoding);
                return;
            }
        }
        let success = (200..300).contains(&head.status);
        self.body = if is_stream && success {
            Body::Stream(Box::new(Stream {
                framer: Framer::new(self.cfg.max_event_bytes),
                index: 0,
                last: LastFrame::default(),
            }))
        } else if success || head.media == Media::Json {
            Body::Whole { buf: Vec::new() }
        } else {
            Body::Ignored
        };
    }

    /// A piece of the response body, as forwarded.
    pub fn response_data(
        &mut self,
        piece: &[u8],
        reg: &mut Registry,
        now: Millis,
        sink: &mut impl Sink,
    ) {
        let ExchangeEngine {
            reducer,
            body,
            inflate,
            budget,
            cfg,
            scratch,
        } = self;
        let result = match body {
            Body::Stream(stream) => inflate.push(piece, budget, &mut |plain| {
                let Stream {
                    framer,
                    index,
                    last,
                } = &mut **stream;
                framer.push(plain, &mut |frame| {
                    on_frame(reducer, last, frame, index, reg, now, cfg, scratch, sink)
                })
            }),
            Body::Whole { buf } => {
                let limit = cfg.max_body_bytes;
                let mut over = false;
                let r = inflate.push(piece, budget, &mut |plain| {
                    if buf.len() + plain.len() > limit {
                        over = true;
                    } else if !over {
                        buf.extend_from_slice(plain);
                    }
                });
                if over {
                    *body = Body::Skipped(SkipReason::BodyTooLarge);
                }
                r
            }
            Body::Grpc(g) => {
                let mut j = grpc::Judging {
                    reducer,
                    reg,
                    now,
                    cfg,
                    scratch,
                    sink,
                };
                g.push(piece, &mut j)
            }
            Body::Waiting | Body::Ignored | Body::Skipped(_) => Ok(()),
        };
        match result {
            Ok(()) => {}
            Err(inflate::InflateError::Corrupt) => {
                self.body = Body::Skipped(SkipReason::ContentEncoding);
            }
            Err(inflate::InflateError::OverBudget) => {
                self.body = Body::Skipped(SkipReason::InflatedTooLarge);
            }
        }
    }

    /// A gRPC call's status (its trailers, or a trailers-only head), after
    /// its last message: an error status is judged as the answer's error.
    pub fn response_status(
        &mut self,
        status: &crate::a2a::grpc::GrpcStatus,
        reg: &mut Registry,
        now: Millis,
        sink: &mut impl Sink,
    ) {
        if let Body::Grpc(g) = &mut self.body {
            let mut j = grpc::Judging {
                reducer: &mut self.reducer,
                reg,
                now,
                cfg: &self.cfg,
                scratch: &mut self.scratch,
                sink,
            };
            g.status(status, &mut j);
        }
    }

    /// The response body ended (or the exchange failed). Returns the stream
    /// outcome for streams that were judged to the end.
    pub fn response_end(
        &mut self,
        end: End,
        reg: &mut Registry,
        now: Millis,
        sink: &mut impl Sink,
    ) -> Option<Outcome> {
        match &self.body {
            Body::Grpc(g) if !g.streaming => {
                if matches!(end, End::Upstream) {
                    self.scratch.clear();
                    self.reducer
                        .on_end(End::Upstream, reg, now, &mut self.scratch);
                    unaccused(self.reducer.exchange(), &mut self.scratch);
                    for f in self.scratch.drain(..) {
                        sink.finding(f);
                    }
                }
                None
            }
            Body::Stream(_) | Body::Grpc(_) => {
                self.scratch.clear();
                let outcome = self.reducer.on_end(end, reg, now, &mut self.scratch);
                unaccused(self.reducer.exchange(), &mut self.scratch);
                for f in self.scratch.drain(..) {
                    sink.finding(f);
                }
                Some(outcome)
            }
            // A body is judged only when it arrived whole.
            Body::Whole { .. } if matches!(end, End::Upstream) => {
                if let Body::Whole { buf } = std::mem::replace(&mut self.body, Body::Ignored) {
                    self.judge_whole(&buf, reg, now, sink);
                }
                None
            }
            _ => None,
        }
    }

    fn judge_whole(&mut self, buf: &[u8], reg: &mut Registry, now: Millis, sink: &mut impl Sink) {
        self.scratch.clear();
        let success = self.reducer.answered_success();
        if self.exchange().operation == Operation::GetAgentCard {
            if success {
                sink.read();
                let problems = match CardInfo::parse(buf) {
                    Ok(card) => {
                        let problems = card.problems.join("; ");
                        sink.card(card);
                        problems
                    }
                    Err(why) => why.to_string(),
                };
                if !problems.is_empty() {
                    let detail = format!("expected a valid agent card for its version; {problems}");
                    let mut f = Finding::new(Kind::InvalidAgentCard, detail);
                    f.evidence = Some(String::from_utf8_lossy(buf).into_owned());
                    sink.finding(f);
                }
            }
            return;
        }
        match decode(buf) {
            Ok(d) if success || matches!(d.payload, Payload::Error(_)) => {
                sink.read();
                sink.decoded(None, Ok(&d));
                self.reducer
                    .on_decoded(None, &d, reg, now, &mut self.scratch)
            }
            Err(m) if success => {
                sink.read();
                sink.decoded(None, Err(&m));
                self.reducer.on_malformed(None, &m, &mut self.scratch)
            }
            // A non-2xx answer that is not an A2A error (an auth layer's
            // 401, a gateway's 429) is not the agent's protocol at all.
            _ => {}
        }
        self.reducer
            .on_end(End::Upstream, reg, now, &mut self.scratch);
        unaccused(self.reducer.exchange(), &mut self.scratch);
        for mut f in self.scratch.drain(..) {
            f.evidence = Some(self.cfg.evidence.prepare(buf));
            sink.finding(f);
        }
    }
}

/// Operations whose answers the reducer judges (a push-config creation
/// and the extended card only for whether they were refused, against the
/// agent card's capabilities).
fn judged(op: Operation) -> bool {
    matches!(
        op,
        Operation::SendMessage
            | Operation::SendStreamingMessage
            | Operation::GetTask
            | Operation::ListTasks
            | Operation::CancelTask
            | Operation::SubscribeToTask
            | Operation::GetAgentCard
            | Operation::CreateTaskPushNotificationConfig
            | Operation::GetExtendedAgentCard
    )
}

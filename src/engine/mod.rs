//! One exchange's response through inflate, SSE framer, decoder and
//! reducer: the engine that both the live proxy and `a2a-tap check` drive.
//! Pure: no I/O, no clock (time is passed in), no async.

pub mod evidence;
mod frame;
mod grpc;
mod head;
pub mod inflate;
mod settings;
mod sink;

use crate::a2a::card::CardInfo;
use crate::a2a::decode::decode;
use crate::a2a::last_frame::LastFrame;
use crate::a2a::model::{Exchange, Operation, Payload};
use crate::findings::{Finding, Kind};
use crate::lifecycle::{End, Millis, Outcome, Reducer, Registry, Seq};
use crate::sse::Framer;
use frame::{on_frame, unaccused, Stream};
pub use head::{Head, Media};
use inflate::Inflate;
pub use settings::EngineConfig;
pub use sink::{Sink, SkipReason};

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
/// agent card's capabilities; a push-config deletion for whether it was
/// refused, for the push relay's judging).
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
            | Operation::DeleteTaskPushNotificationConfig
            | Operation::GetExtendedAgentCard
            | Operation::PushDelivery
    )
}

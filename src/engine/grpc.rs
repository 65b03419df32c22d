//! A gRPC answer's body: length-prefixed messages (a message may span
//! pieces, several may share one), each decoded as its operation's
//! response message; gzip ones undone for analysis only. A streaming call
//! judges each message as a stream event; a unary call judges its one
//! message as the body. The call's status (trailers) is judged last.

use super::{EngineConfig, Sink, SkipReason};
use crate::a2a::grpc::{decode_response, GrpcStatus, Render};
use crate::a2a::model::{Decoded, EventKind, Operation, Payload};
use crate::findings::Finding;
use crate::lifecycle::{Millis, Reducer, Registry};

/// A gRPC body's state.
pub(super) struct Grpc {
    /// Bytes of the message being gathered (its 5-byte prefix first).
    buf: Vec<u8>,
    /// Bytes of an oversized message still to pass unread.
    skipping: usize,
    /// Messages seen (judged or not).
    pub(super) messages: u64,
    /// The call streams its answer (a message per event).
    pub(super) streaming: bool,
    /// `grpc-encoding: gzip`.
    gzip: bool,
}

impl Grpc {
    pub(super) fn new(streaming: bool, gzip: bool) -> Grpc {
        Grpc {
            buf: Vec::new(),
            skipping: 0,
            messages: 0,
            streaming,
            gzip,
        }
    }

    pub(super) fn held_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// A piece of the body: every message it completes is judged.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        mut piece: &[u8],
        reducer: &mut Reducer,
        reg: &mut Registry,
        now: Millis,
        cfg: &EngineConfig,
        scratch: &mut Vec<Finding>,
        sink: &mut impl Sink,
    ) {
        while !piece.is_empty() {
            if self.skipping > 0 {
                let n = self.skipping.min(piece.len());
                self.skipping -= n;
                piece = &piece[n..];
                continue;
            }
            if self.buf.len() < 5 {
                let n = (5 - self.buf.len()).min(piece.len());
                self.buf.extend_from_slice(&piece[..n]);
                piece = &piece[n..];
                if self.buf.len() < 5 {
                    return;
                }
                let len = message_len(&self.buf);
                if len > cfg.max_event_bytes {
                    // Not read: a gap, as an oversized SSE event is.
                    let i = self.next_index();
                    reducer.on_skipped(i);
                    sink.gap(SkipReason::EventTooLarge);
                    self.skipping = len;
                    self.buf.clear();
                    continue;
                }
            }
            let want = 5 + message_len(&self.buf) - self.buf.len();
            let n = want.min(piece.len());
            self.buf.extend_from_slice(&piece[..n]);
            piece = &piece[n..];
            if n == want {
                let buf = std::mem::take(&mut self.buf);
                self.message(&buf, reducer, reg, now, cfg, scratch, sink);
                self.buf = buf;
                self.buf.clear();
            }
        }
    }

    /// The index a stream event takes (`None` for a unary answer).
    fn next_index(&mut self) -> Option<u64> {
        let i = self.messages;
        self.messages += 1;
        self.streaming.then_some(i)
    }

    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        framed: &[u8],
        reducer: &mut Reducer,
        reg: &mut Registry,
        now: Millis,
        cfg: &EngineConfig,
        scratch: &mut Vec<Finding>,
        sink: &mut impl Sink,
    ) {
        let i = self.next_index();
        if !self.streaming && self.messages > 1 {
            return; // a unary answer is its first message
        }
        let body = &framed[5..];
        let inflated;
        let msg = match framed[0] {
            0 => body,
            1 if self.gzip => match crate::a2a::grpc::gunzip(body, cfg.max_event_bytes) {
                Some(m) => {
                    inflated = m;
                    &inflated[..]
                }
                None => return self.unread(i, reducer, sink),
            },
            // Compressed with an encoding the head did not name as gzip.
            _ => return self.unread(i, reducer, sink),
        };
        let ex = reducer.exchange();
        if !modelled(ex.operation) {
            // A push config or an extended card: only its status is judged.
            return;
        }
        let decoded = decode_response(ex.version, ex.operation, msg);
        sink.read();
        scratch.clear();
        match &decoded {
            Ok(d) => {
                if let Payload::Event(e) = &d.payload {
                    if i.is_some() {
                        sink.event(e.kind());
                    }
                }
                reducer.on_decoded(i, d, reg, now, scratch);
            }
            Err(m) => reducer.on_malformed(i, m, scratch),
        }
        if scratch.is_empty() {
            return;
        }
        // The message as evidence, rendered only for a finding.
        let evidence = match &decoded {
            Ok(d) => d.render(),
            Err(m) => format!("[{} bytes of protobuf: {}]", msg.len(), m.0),
        };
        emit(scratch, i, &evidence, cfg, sink);
    }

    /// A message the engine cannot read: a gap.
    fn unread(&mut self, i: Option<u64>, reducer: &mut Reducer, sink: &mut impl Sink) {
        reducer.on_skipped(i);
        sink.gap(SkipReason::ContentEncoding);
    }

    /// The call's status: an error status is the answer's error (after a
    /// stream's last event; a unary call's only answer).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn status(
        &mut self,
        status: &GrpcStatus,
        reducer: &mut Reducer,
        reg: &mut Registry,
        now: Millis,
        cfg: &EngineConfig,
        scratch: &mut Vec<Finding>,
        sink: &mut impl Sink,
    ) {
        if status.code == crate::a2a::grpc::OK {
            return;
        }
        let i = self.next_index();
        let d = Decoded {
            rpc_id: None,
            payload: Payload::Error(status.error_info()),
            dialect: None,
        };
        sink.read();
        if i.is_some() {
            sink.event(EventKind::Error);
        }
        scratch.clear();
        reducer.on_decoded(i, &d, reg, now, scratch);
        let evidence = format!(
            "grpc-status: {} ({:?} in its ErrorInfo)",
            status.code, status.error
        );
        emit(scratch, i, &evidence, cfg, sink);
    }
}

/// Operations whose answer messages the engine reads.
fn modelled(op: Operation) -> bool {
    matches!(
        op,
        Operation::SendMessage
            | Operation::SendStreamingMessage
            | Operation::GetTask
            | Operation::CancelTask
            | Operation::SubscribeToTask
            | Operation::ListTasks
    )
}

fn message_len(prefix: &[u8]) -> usize {
    u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize
}

fn emit(
    scratch: &mut Vec<Finding>,
    i: Option<u64>,
    evidence: &str,
    cfg: &EngineConfig,
    sink: &mut impl Sink,
) {
    for mut f in scratch.drain(..) {
        if f.event_index == i && f.evidence.is_none() {
            f.evidence = Some(cfg.evidence.prepare(evidence.as_bytes()));
        }
        sink.finding(f);
    }
}

//! A gRPC answer's body: length-prefixed messages (a message may span
//! pieces, several may share one), each decoded as its operation's
//! response message; gzip ones undone for analysis only. A streaming call
//! judges each message as a stream event; a unary call judges its one
//! message as the body. The call's status (trailers) is judged last.

use super::inflate::{Budget, InflateError};
use super::{EngineConfig, Sink, SkipReason};
use crate::a2a::grpc::{decode_bounded, GrpcStatus, Render};
use crate::a2a::model::{Decoded, EventKind, Operation, Payload};
use crate::findings::Finding;
use crate::lifecycle::{Millis, Reducer, Registry};

/// What judging a message needs beside the body's own state: the
/// exchange's reducer, the registry, the time, and where findings go.
pub(super) struct Judging<'a, S> {
    pub(super) reducer: &'a mut Reducer,
    pub(super) reg: &'a mut Registry,
    pub(super) now: Millis,
    pub(super) cfg: &'a EngineConfig,
    pub(super) scratch: &'a mut Vec<Finding>,
    pub(super) sink: &'a mut S,
}

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
    /// What the call's gzip messages may still inflate to.
    budget: Budget,
    /// The budget ran out: the rest of the call is not read.
    over_budget: bool,
}

impl Grpc {
    pub(super) fn new(streaming: bool, gzip: bool, budget: Budget) -> Grpc {
        Grpc {
            buf: Vec::new(),
            skipping: 0,
            messages: 0,
            streaming,
            gzip,
            budget,
            over_budget: false,
        }
    }

    pub(super) fn held_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// A piece of the body: every message it completes is judged. An error
    /// once the call's gzip messages inflated past their budget.
    pub(super) fn push<S: Sink>(
        &mut self,
        mut piece: &[u8],
        j: &mut Judging<'_, S>,
    ) -> Result<(), InflateError> {
        while !piece.is_empty() {
            if self.over_budget {
                return Err(InflateError::OverBudget);
            }
            if self.skipping > 0 {
                let n = self.skipping.min(piece.len());
                self.skipping -= n;
                piece = &piece[n..];
                continue;
            }
            // A whole message in the piece, none begun before it: read
            // in place (the common case: a message a DATA frame).
            if self.buf.is_empty() && piece.len() >= 5 {
                let len = message_len(piece);
                if len <= j.cfg.max_event_bytes && piece.len() - 5 >= len {
                    let (whole, rest) = piece.split_at(5 + len);
                    self.message(whole, j);
                    piece = rest;
                    continue;
                }
            }
            if self.buf.len() < 5 {
                let n = (5 - self.buf.len()).min(piece.len());
                self.buf.extend_from_slice(&piece[..n]);
                piece = &piece[n..];
                if self.buf.len() < 5 {
                    return Ok(());
                }
                let len = message_len(&self.buf);
                if len > j.cfg.max_event_bytes {
                    // Not read: a gap, as an oversized SSE event is.
                    let i = self.next_index();
                    j.reducer.on_skipped(i);
                    j.sink.gap(SkipReason::EventTooLarge);
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
                self.message(&buf, j);
                self.buf = buf;
                self.buf.clear();
            }
        }
        if self.over_budget {
            return Err(InflateError::OverBudget);
        }
        Ok(())
    }

    /// The index a stream event takes (`None` for a unary answer).
    fn next_index(&mut self) -> Option<u64> {
        let i = self.messages;
        self.messages += 1;
        self.streaming.then_some(i)
    }

    fn message<S: Sink>(&mut self, framed: &[u8], j: &mut Judging<'_, S>) {
        let i = self.next_index();
        if !self.streaming && self.messages > 1 {
            return; // a unary answer is its first message
        }
        let body = &framed[5..];
        let inflated;
        let msg = match framed[0] {
            0 => body,
            1 if self.gzip => {
                let room = self.budget.room(body.len());
                let limit = j.cfg.max_event_bytes.min(room);
                let taken = crate::a2a::grpc::gunzip(body, limit)
                    .filter(|m| self.budget.take(body.len(), m.len()).is_ok());
                match taken {
                    Some(m) => {
                        inflated = m;
                        &inflated[..]
                    }
                    // Past the call's budget (or corrupt near it): nothing
                    // more of this call is read.
                    None if room < j.cfg.max_event_bytes => {
                        self.over_budget = true;
                        return;
                    }
                    None => return self.unread(i, j, SkipReason::ContentEncoding),
                }
            }
            // Compressed with an encoding the head did not name as gzip.
            _ => return self.unread(i, j, SkipReason::ContentEncoding),
        };
        let ex = j.reducer.exchange();
        if !modelled(ex.operation) {
            // A push config or an extended card: only its status is judged.
            return;
        }
        // A message whose repeated fields hold more than judging reads is
        // left when the reading finds it so (`repeats`).
        let max = crate::a2a::grpc::repeats::MAX_REPEATED;
        let Some(decoded) = decode_bounded(ex.version, ex.operation, msg, max) else {
            return self.unread(i, j, SkipReason::InflatedTooLarge);
        };
        j.sink.read();
        j.scratch.clear();
        j.sink.decoded(i, decoded.as_ref());
        match &decoded {
            Ok(d) => {
                if let Payload::Event(e) = &d.payload {
                    if i.is_some() {
                        j.sink.event(e.kind());
                    }
                }
                j.reducer.on_decoded(i, d, j.reg, j.now, j.scratch);
            }
            Err(m) => j.reducer.on_malformed(i, m, j.scratch),
        }
        if j.scratch.is_empty() {
            return;
        }
        // The message as evidence, rendered only for a finding.
        let evidence = match &decoded {
            Ok(d) => d.render(),
            Err(m) => format!("[{} bytes of protobuf: {}]", msg.len(), m.0),
        };
        j.emit(i, &evidence);
    }

    /// A message the engine cannot read: a gap.
    fn unread<S: Sink>(&mut self, i: Option<u64>, j: &mut Judging<'_, S>, why: SkipReason) {
        j.reducer.on_skipped(i);
        j.sink.gap(why);
    }

    /// The call's status: an error status is the answer's error (after a
    /// stream's last event; a unary call's only answer).
    pub(super) fn status<S: Sink>(&mut self, status: &GrpcStatus, j: &mut Judging<'_, S>) {
        if status.code == crate::a2a::grpc::OK {
            return;
        }
        let i = self.next_index();
        let d = Decoded {
            rpc_id: None,
            payload: Payload::Error(status.error_info()),
            dialect: None,
        };
        j.sink.read();
        if i.is_some() {
            j.sink.event(EventKind::Error);
        }
        j.sink.decoded(i, Ok(&d));
        j.scratch.clear();
        j.reducer.on_decoded(i, &d, j.reg, j.now, j.scratch);
        let evidence = format!(
            "grpc-status: {} ({:?} in its ErrorInfo)",
            status.code, status.error
        );
        j.emit(i, &evidence);
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

impl<S: Sink> Judging<'_, S> {
    /// The findings gathered in `scratch`, message `i`'s evidence attached.
    fn emit(&mut self, i: Option<u64>, evidence: &str) {
        // Most messages find nothing: no drain to set up and drop.
        if self.scratch.is_empty() {
            return;
        }
        for mut f in self.scratch.drain(..) {
            if f.event_index == i && f.evidence.is_none() {
                f.evidence = Some(self.cfg.evidence.prepare(evidence.as_bytes()));
            }
            self.sink.finding(f);
        }
    }
}

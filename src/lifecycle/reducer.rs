//! The per-exchange reducer: judges one response (a plain JSON body or an SSE
//! stream) against the lifecycle rules, and teaches the registry every task
//! state it carries. This file holds the types and entry points; `body.rs`
//! judges plain bodies, `stream.rs` streams, `checks.rs` what both share.

mod after_terminal;
mod body;
mod common;
mod outcome;
mod stream;

use super::artifacts::Artifacts;
use super::registry::Registry;
use super::short::ShortStr;
use super::{Millis, Seq};
use crate::a2a::model::{
    Binding, Decoded, Event, Exchange, Malformed, Operation, Payload, TaskState, Version,
};
use crate::findings::{Finding, Kind};
use body::Expect;
pub use outcome::{End, Outcome};

/// Whether the response is judged as an SSE stream or one JSON body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    /// No head seen: decided per call (`index` present = stream frame).
    Unknown,
    Stream,
    Plain,
}

/// Judges one exchange's response. Create it when the request is sent (with
/// the stamp from `Registry::open_exchange`), call `on_response_head` when
/// the head arrives, then `on_decoded`/`on_malformed`/`on_skipped` per frame
/// or body, and `on_end` once. Calls after `on_end` are ignored.
#[derive(Debug)]
pub struct Reducer {
    pub(super) exchange: Exchange,
    pub(super) seq: Seq,
    pub(super) http_status: u16,
    pub(super) body: Body,
    /// The task the exchange is about: the one a subscribe/get/cancel names,
    /// else the first one a response names. Stored once, in place.
    pub(super) task_id: Option<ShortStr>,
    pub(super) context_id: Option<ShortStr>,
    /// Ids over this many bytes are kept as their digest.
    pub(super) max_id: usize,
    /// Last known state on this response.
    pub(super) state: Option<TaskState>,
    /// The first terminal state the stream reached.
    pub(super) terminal: Option<TaskState>,
    pub(super) final_seen: bool,
    /// Frames seen (decoded, malformed or skipped): the next expected index.
    pub(super) frames: u64,
    /// Decoded A2A events seen on the stream.
    pub(super) events: u64,
    /// A frame was skipped or came out of order: history-based findings are
    /// no longer certain and are not reported.
    pub(super) gapped: bool,
    pub(super) saw_message: bool,
    pub(super) message_reported: bool,
    pub(super) saw_error: bool,
    /// `version_mismatch` was reported (once per exchange).
    pub(super) dialect_reported: bool,
    /// The one Task snapshot repeating the terminal state that a stream may
    /// carry after it (spec 1.0 §11.7) was seen.
    pub(super) final_snapshot: bool,
    /// A frame after the terminal state went unread: it may have been that
    /// snapshot.
    pub(super) terminal_gap: bool,
    /// The status that made the stream terminal (or the last status, until
    /// one did) carried 0.3 `final:true`.
    pub(super) terminal_final: bool,
    /// The registry counts this stream as following its task (`watch`),
    /// until `release`.
    pub(super) watching: bool,
    pub(super) accept_checked: bool,
    pub(super) artifacts: Artifacts,
    pub(super) ended: Option<Outcome>,
}

// === impl Reducer ===

impl Reducer {
    /// A reducer for `exchange`, whose request was stamped `seq`, keeping
    /// ids up to the default `analysis.max_id_bytes` whole.
    pub fn new(exchange: Exchange, seq: Seq) -> Reducer {
        Reducer::with_max_id(exchange, seq, super::short::DEFAULT_MAX_ID_BYTES)
    }

    /// A reducer keeping ids longer than `max_id` bytes as their digest.
    pub fn with_max_id(exchange: Exchange, seq: Seq, max_id: usize) -> Reducer {
        // The task the request names (a follow-up send's `taskId` too):
        // the answer must be about it.
        let task_id = match exchange.operation {
            Operation::ListTasks | Operation::GetExtendedAgentCard => None,
            _ => exchange
                .task_id
                .as_deref()
                .map(|t| ShortStr::bounded(t, max_id)),
        };
        Reducer {
            exchange,
            seq,
            http_status: 200,
            body: Body::Unknown,
            task_id,
            context_id: None,
            max_id,
            state: None,
            terminal: None,
            final_seen: false,
            frames: 0,
            events: 0,
            gapped: false,
            saw_message: false,
            message_reported: false,
            saw_error: false,
            dialect_reported: false,
            final_snapshot: false,
            terminal_gap: false,
            terminal_final: false,
            watching: false,
            accept_checked: false,
            artifacts: Artifacts::new(max_id),
            ended: None,
        }
    }

    /// The exchange being judged.
    pub fn exchange(&self) -> &Exchange {
        &self.exchange
    }

    /// The task this exchange is about, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_ref().map(ShortStr::as_str)
    }

    /// The task's contextId, once known.
    pub fn context_id(&self) -> Option<&str> {
        self.context_id.as_ref().map(ShortStr::as_str)
    }

    /// The last task state this response showed.
    pub fn state(&self) -> Option<TaskState> {
        self.state
    }

    /// The response's HTTP status (200 until a head is given).
    pub fn http_status(&self) -> u16 {
        self.http_status
    }

    /// Whether the answer carried an A2A error (a body that is one, or an
    /// error event on a stream).
    pub fn answered_error(&self) -> bool {
        self.saw_error
    }

    /// Whether a frame of the answer went unread (a gap): what it said is
    /// unknown, so no finding may rest on the stream's silence.
    pub fn gapped(&self) -> bool {
        self.gapped
    }

    /// Whether the stream has had its last word and should close (1.0
    /// §3.1.2, §3.1.6): its task reached a terminal state, or it carried
    /// its one Message; 0.3: a status with `final:true`. Whether the
    /// answer is a stream at all is the engine's to say (`is_stream`); an
    /// answer that has ended is never waiting to close.
    pub fn stream_over(&self) -> bool {
        if self.ended.is_some() || self.body == Body::Plain {
            return false;
        }
        match self.exchange.version {
            Version::V1_0 => self.terminal.is_some() || self.saw_message,
            Version::V0_3 => self.final_seen,
        }
    }

    /// Decoded A2A events seen on the stream.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The exchange's causal stamp.
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Whether the response head had a 2xx status (also when no head was
    /// given: the status is then taken as 200).
    pub fn answered_success(&self) -> bool {
        (200..300).contains(&self.http_status)
    }

    /// The response head: its HTTP status, and whether the body is an SSE
    /// stream (`Content-Type: text/event-stream`). A streaming operation
    /// answered with a plain JSON body (an error raised before the first
    /// event) is judged as one body, not as a stream: no `stream_start`, no
    /// `stream_truncated`. Without this call the status is taken as 200 and
    /// each call's `index` decides (`Some` = stream frame).
    pub fn on_response_head(&mut self, http_status: u16, is_event_stream: bool) {
        self.http_status = http_status;
        self.body = if is_event_stream {
            Body::Stream
        } else {
            Body::Plain
        };
    }

    /// One decoded SSE event (`index` = its 0-based index on the stream) or
    /// the whole non-streaming body (`index` = `None`).
    pub fn on_decoded(
        &mut self,
        index: Option<u64>,
        decoded: &Decoded,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        if self.ended.is_some() {
            return;
        }
        // The id is judged last so its finding carries the task, once known.
        if self.is_stream(index) {
            let i = index.unwrap_or(self.frames);
            self.on_frame(i, decoded, reg, now, out);
            self.check_dialect(Some(i), decoded, out);
            self.check_rpc_id(Some(i), decoded, out);
        } else {
            self.on_body(decoded, reg, now, out);
            self.check_dialect(None, decoded, out);
            self.check_rpc_id(None, decoded, out);
        }
    }

    /// `version_mismatch`, once per exchange: a JSON-RPC answer in the other
    /// version's dialect than its request's method (the 1.0 and 0.3 method
    /// names are disjoint): 0.3's `kind` discriminators or its `final` flag
    /// answering a 1.0 method, 1.0 StreamResponse wrappers answering a 0.3
    /// one. HTTP+JSON is not judged: 0.3's proto-JSON REST answers use
    /// wrappers and state names much like 1.0's.
    fn check_dialect(&mut self, ix: Option<u64>, d: &Decoded, out: &mut Vec<Finding>) {
        let ex = &self.exchange;
        if !matches!(ex.binding, Binding::JsonRpc | Binding::Webhook) || self.dialect_reported {
            return;
        }
        // `final` inside a 1.0 wrapper: the frame mixes the dialects.
        let final_in_1_0 = ex.version == Version::V1_0
            && d.dialect == Some(Version::V1_0)
            && matches!(&d.payload, Payload::Event(Event::StatusUpdate(u)) if u.final_flag.is_some());
        let what = match d.dialect {
            Some(v) if v != ex.version => match v {
                Version::V0_3 => "a 0.3 `kind` discriminator",
                Version::V1_0 => "a 1.0 StreamResponse wrapper",
            },
            _ if final_in_1_0 => "0.3's `final` flag on a status update",
            _ => return,
        };
        self.dialect_reported = true;
        let detail = format!(
            "expected the answer to {} (A2A {}) in that version's dialect; it carried {what}",
            ex.operation,
            ex.version.as_str()
        );
        out.push(self.finding(Kind::VersionMismatch, ix, detail));
    }

    /// A frame or body that did not decode (or was oversized / invalid
    /// UTF-8): `malformed_event`. Not reported for operations whose bodies
    /// the engine does not model (push configs, extended card).
    pub fn on_malformed(&mut self, index: Option<u64>, why: &Malformed, out: &mut Vec<Finding>) {
        if self.ended.is_some() {
            return;
        }
        let stream = self.is_stream(index);
        if !stream && Expect::of(self.exchange.operation).is_none() {
            return;
        }
        let (ix, what) = if stream {
            let i = index.unwrap_or(self.frames);
            self.note_frame(i);
            (Some(i), "event")
        } else {
            (None, "response body")
        };
        let detail = format!(
            "expected a JSON A2A {what} for {}; got one that is not ({})",
            self.exchange.operation, why.0
        );
        out.push(self.finding(Kind::MalformedEvent, ix, detail));
    }

    /// A frame (or body) the driver could not analyse (analysis overflowed):
    /// nothing is reported about it, and findings that depend on the whole
    /// history (`stream_start`, artifacts, `stream_truncated`) are withheld.
    pub fn on_skipped(&mut self, index: Option<u64>) {
        self.gap();
        if let Some(i) = index {
            self.frames = self.frames.max(i.saturating_add(1));
        }
    }

    /// The body ended. Returns the stream outcome (for plain bodies:
    /// `Terminal` when the upstream finished it, `Truncated` when the
    /// upstream failed, `ClientGone` when the caller left). Idempotent.
    pub fn on_end(
        &mut self,
        end: End,
        reg: &mut Registry,
        _now: Millis,
        out: &mut Vec<Finding>,
    ) -> Outcome {
        self.release(reg);
        if let Some(o) = self.ended {
            return o;
        }
        let stream = match self.body {
            Body::Stream => true,
            Body::Plain => false,
            Body::Unknown => self.frames > 0,
        };
        let outcome = if stream {
            self.end_stream(end, out)
        } else {
            match end {
                End::Upstream => Outcome::Terminal,
                End::ClientGone => Outcome::ClientGone,
                End::UpstreamError => Outcome::Truncated,
            }
        };
        self.ended = Some(outcome);
        outcome
    }

    /// The stream no longer follows its task (it ended, or its driver
    /// stopped judging it). Idempotent; `on_end` calls it.
    pub fn release(&mut self, reg: &mut Registry) {
        if std::mem::take(&mut self.watching) {
            if let Some(t) = &self.task_id {
                reg.unwatch(t.as_str());
            }
        }
    }

    /// Something of the stream went unread (a skipped or out-of-order
    /// frame).
    pub(super) fn gap(&mut self) {
        self.gapped = true;
        self.terminal_gap |= self.terminal.is_some();
    }

    fn is_stream(&self, index: Option<u64>) -> bool {
        match self.body {
            Body::Stream => true,
            Body::Plain => false,
            Body::Unknown => index.is_some(),
        }
    }
}

//! One SSE frame through the decoder (reusing the last frame's decoding
//! when only skipped text differs) and the reducer.

use super::{EngineConfig, Sink, SkipReason};
use crate::a2a::last_frame::LastFrame;
use crate::a2a::model::{Binding, Decoded, EventKind, Exchange, Malformed, Payload};
use crate::findings::{Finding, Kind};
use crate::lifecycle::{Millis, Reducer, Registry};
use crate::sse::{Frame, Framer};

/// A stream body's state.
pub(super) struct Stream {
    pub(super) framer: Framer,
    pub(super) index: u64,
    pub(super) last: LastFrame,
}

/// Judges one SSE frame. Inlined into the framer's callback, its one
/// caller: called instead, each frame paid the call and the drain of an
/// empty `scratch` (callgrind: ~+500 instructions a 20-event stream).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn on_frame(
    reducer: &mut Reducer,
    last: &mut LastFrame,
    frame: Frame<'_>,
    index: &mut u64,
    reg: &mut Registry,
    now: Millis,
    cfg: &EngineConfig,
    scratch: &mut Vec<Finding>,
    sink: &mut impl Sink,
) {
    let i = *index;
    *index += 1;
    scratch.clear();
    let data: &[u8] = match frame {
        Frame::Event(ev) => {
            sink.read();
            last.decode(ev.data, |decoded| match decoded {
                Ok(d) if not_a_response(reducer.exchange(), d) => {
                    let m = bare_frame(d);
                    sink.decoded(Some(i), Err(&m));
                    reducer.on_malformed(Some(i), &m, scratch)
                }
                Ok(d) => {
                    if let Some(k) = event_kind(d) {
                        sink.event(k);
                    }
                    sink.decoded(Some(i), Ok(d));
                    reducer.on_decoded(Some(i), d, reg, now, scratch);
                }
                Err(m) => {
                    sink.decoded(Some(i), Err(m));
                    reducer.on_malformed(Some(i), m, scratch)
                }
            });
            ev.data
        }
        Frame::Oversized { .. } => {
            // Not read: a gap, not a violation (as a body over its limit
            // is skipped, not accused).
            reducer.on_skipped(Some(i));
            sink.gap(SkipReason::EventTooLarge);
            b""
        }
    };
    if scratch.is_empty() {
        // Most frames find nothing: no drain to set up and drop (which the
        // compiler does not always inline: ~+570 instructions a stream).
        return;
    }
    unaccused(reducer.exchange(), scratch);
    for mut f in scratch.drain(..) {
        if f.event_index == Some(i) && !data.is_empty() {
            f.evidence = Some(cfg.evidence.prepare(data));
        }
        sink.finding(f);
    }
}

/// Whether a frame on a JSON-RPC stream is not a JSON-RPC response: every
/// SSE event's data there is one (JSON-RPC 2.0 §5: `jsonrpc`, `id`, and
/// `result` or `error`; A2A 0.3 §7: "each event's data is a
/// `JSONRPCResponse`"; 1.0 §9, the JSON-RPC binding). A bare A2A object
/// there (a Task, a StreamResponse) is no answer a JSON-RPC client reads:
/// `malformed_event`, not an event. HTTP+JSON streams carry bare objects.
fn not_a_response(exchange: &Exchange, d: &Decoded) -> bool {
    exchange.binding == Binding::JsonRpc && d.rpc_id.is_none()
}

/// Why a frame that `not_a_response` is malformed, saying what it held.
fn bare_frame(d: &Decoded) -> Malformed {
    let what = match &d.payload {
        Payload::Event(e) => e.label(),
        Payload::Error(_) => "error",
        Payload::TaskList(_) => "ListTasks result",
    };
    Malformed(format!(
        "a bare {what} object, not a JSON-RPC response (no `jsonrpc`, `id` or `result`)"
    ))
}

/// On an exchange only its path says is A2A, drops the findings that
/// accuse an answer of not being A2A (`malformed_event`, `unknown_state`):
/// the route may be the agent's own, not the protocol's.
pub(super) fn unaccused(exchange: &Exchange, findings: &mut Vec<Finding>) {
    if exchange.guessed() {
        findings.retain(|f| !matches!(f.kind, Kind::MalformedEvent | Kind::UnknownState));
    }
}

/// The event kind a frame counts as; a task list is no stream event (the
/// reducer reports it as malformed).
fn event_kind(d: &Decoded) -> Option<EventKind> {
    match &d.payload {
        Payload::Event(e) => Some(e.kind()),
        Payload::Error(_) => Some(EventKind::Error),
        Payload::TaskList(_) => None,
    }
}

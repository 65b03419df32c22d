//! The analysis thread's side of tracing: the sampling decision and ids of
//! each exchange's span, and its end, encoded and handed to the exporter.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::live::Live;
use super::Caller;
use crate::a2a::model::Exchange;
use crate::engine::ExchangeEngine;
use crate::trace::context::{Ids, TraceParent};
use crate::trace::export::Spans;
use crate::trace::span::{Begun, Ended, OpenSpan};

/// Spans for the exchanges of one upstream.
pub(crate) struct Tracer {
    ids: Ids,
    spans: Spans,
    /// `server.address` of the first route's spans: its upstream's host
    /// (another route's comes with its settings).
    server_address: String,
    /// A moment on both clocks, to put `Instant`s on the wall clock.
    base: (Instant, u64),
    /// Ids and paths are put on spans cut to this (`analysis.max_id_bytes`).
    max_id: usize,
}

impl Tracer {
    pub(crate) fn new(spans: Spans, sample_ratio: f64, server_address: String) -> Tracer {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Tracer {
            ids: Ids::new(sample_ratio),
            spans,
            server_address,
            base: (Instant::now(), wall),
            max_id: crate::lifecycle::DEFAULT_MAX_ID_BYTES,
        }
    }

    /// Cuts ids on spans to `max_id` bytes.
    pub(crate) fn with_max_id(mut self, max_id: usize) -> Tracer {
        self.max_id = max_id;
        self
    }

    /// `at` as nanoseconds since the Unix epoch.
    pub(crate) fn unix_nanos(&self, at: Instant) -> u64 {
        let (instant, wall) = self.base;
        let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        match at.checked_duration_since(instant) {
            Some(after) => wall.saturating_add(nanos(after)),
            None => wall.saturating_sub(nanos(instant.duration_since(at))),
        }
    }

    /// The span of exchange `id`, when it is sampled (it takes what it
    /// keeps of `caller`).
    pub(crate) fn begin(
        &mut self,
        id: u64,
        exchange: &Exchange,
        parent: Option<TraceParent>,
        caller: &mut Caller,
        at: Instant,
    ) -> Option<Box<OpenSpan>> {
        // With `propagate` the serving path decided, and told the upstream.
        let (trace_id, span_id) = match caller.own {
            Some(own) if !own.sampled => return None,
            Some(own) => (own.trace_id, own.span_id),
            None if !self.ids.sample(parent.as_ref()) => return None,
            None => (
                parent.map_or_else(|| self.ids.trace_id(), |p| p.trace_id),
                self.ids.span_id(),
            ),
        };
        Some(Box::new(OpenSpan::begin(Begun {
            exchange,
            parent,
            trace_state: caller.tracestate.take(),
            trace_id,
            span_id,
            start_unix_nanos: self.unix_nanos(at),
            http_method: caller.http_method.take(),
            path: caller.path.take(),
            request_id: id,
            max_id: self.max_id,
        })))
    }

    /// Hands the gathered spans to the exporter when they have waited long enough.
    pub(crate) fn hand_over_due(&mut self, now: Instant) {
        self.spans.hand_over_due(now);
    }

    /// Ends `span` with what `live` and `engine` saw, at `at`, and queues
    /// it; `server` is its route's upstream host (`None`: the first route's).
    pub(super) fn end(
        &mut self,
        span: &OpenSpan,
        (live, engine): (&Live, &ExchangeEngine),
        at: Instant,
        server: Option<&str>,
    ) {
        let r = engine.reducer();
        let ended = Ended {
            end_unix_nanos: self.unix_nanos(at),
            server_address: server.unwrap_or(&self.server_address),
            http_status: Some(r.http_status()),
            task_id: r.task_id(),
            context_id: r.context_id(),
            task_state: r.state().map(|s| s.as_str()),
            sse_events: engine.is_stream().then(|| r.events()),
            time_to_first_event_ms: live
                .first_event
                .map(|t| t.saturating_duration_since(live.opened).as_secs_f64() * 1000.0),
        };
        self.spans.push(span, &ended);
    }
}

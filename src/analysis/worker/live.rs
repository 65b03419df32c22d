//! What the live proxy keeps of the exchanges the session judges, by
//! request id (the session's id for them).

use std::time::Instant;

use super::Worker;
use crate::a2a::model::Exchange;
use crate::analysis::msg::Caller;
use crate::judge::{Folds, IdMap};
use crate::lifecycle::Seq;
use crate::report::audit::{Origin, Record};
use crate::trace::context::{to_hex, TraceParent};

pub(super) struct Live {
    /// The route it opened on (its index in the worker's routes).
    pub(super) route: usize,
    /// What its engine's `held_bytes()` was after its last piece.
    pub(super) held: usize,
    pub(super) opened: Instant,
    /// When its first event passed.
    pub(super) first_event: Option<Instant>,
    /// Findings recorded on it so far (for its access-log line).
    pub(super) findings: u64,
    /// Its records held for repeats to fold into.
    pub(super) folds: Folds<Record>,
    /// For an agent-card fetch, the authority the caller used.
    pub(super) host: Option<Box<str>>,
    /// Its trace id (hex) for its records: the caller's, or its span's.
    pub(super) trace_id: Option<Box<str>>,
    /// Its span, when it is traced.
    pub(super) span: Option<Box<crate::trace::span::OpenSpan>>,
}

/// The exchanges being judged.
#[derive(Default)]
pub(super) struct LiveSet(IdMap<Live>);

impl LiveSet {
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn open(&mut self, id: u64, live: Live) {
        self.0.insert(id, live);
    }

    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Live> {
        self.0.get_mut(&id)
    }

    /// The ids of the exchanges being judged.
    pub(super) fn ids(&self) -> Vec<u64> {
        self.0.keys().copied().collect()
    }

    /// The origin of findings about `exchange`, exchange `id` (with its
    /// trace id), or, with none, about a task alone.
    pub(super) fn origin(&self, upstream: &str, id: u64, exchange: Option<&Exchange>) -> Origin {
        match exchange {
            Some(ex) => Origin {
                trace_id: self
                    .0
                    .get(&id)
                    .and_then(|l| l.trace_id.as_deref().map(str::to_owned)),
                ..Origin::of(upstream, ex, format_id(id))
            },
            None => Origin {
                upstream: upstream.to_owned(),
                ..Origin::default()
            },
        }
    }

    /// Drops `id`'s state; what it held, if it was there.
    pub(super) fn discard(&mut self, id: u64) -> Option<usize> {
        self.0.remove(&id).map(|live| live.held)
    }
}

impl Live {
    /// What the live proxy keeps of an exchange begun at `at`: its span,
    /// when it is traced, the trace id its records carry (the `parent`'s,
    /// else its span's), the caller's host.
    /// It is judged by route `route`'s session.
    pub(super) fn begin(
        route: usize,
        span: Option<Box<crate::trace::span::OpenSpan>>,
        (parent, host): (Option<TraceParent>, Option<Box<str>>),
        at: Instant,
    ) -> Live {
        let trace_id = parent
            .map(|p| p.trace_id)
            .or_else(|| span.as_ref().map(|s| s.trace_id()))
            .map(|t| to_hex(&t).into_boxed_str());
        Live {
            route,
            held: 0,
            opened: at,
            first_event: None,
            findings: 0,
            folds: Folds::default(),
            host,
            trace_id,
            span,
        }
    }
}

impl Worker {
    /// Stops judging `id`, releasing what it held; whether it was judged.
    pub(super) fn forget(&mut self, id: u64) -> bool {
        // What it found so far is written, not lost with it; its span ends.
        self.flush_folds(id);
        if let Some(route) = self.live.get_mut(id).map(|l| l.route) {
            self.enter(route);
        }
        let engine = self.judge.session.forget(id);
        let server = self
            .judge
            .settings
            .as_ref()
            .map(|s| s.server_address.as_str());
        if let (Some(live), Some(engine)) = (self.live.get_mut(id), engine) {
            if let (Some(tracer), Some(span)) = (&mut self.tracer, live.span.take()) {
                tracer.end(&span, (live, &engine), Instant::now(), server);
            }
        }
        let Some(held) = self.live.discard(id) else {
            return false;
        };
        self.held -= held;
        true
    }

    /// Opens `id` with the session of the route being judged, and what
    /// only the live proxy keeps of it (its span, the caller's host).
    pub(super) fn open(
        &mut self,
        id: u64,
        exchange: Exchange,
        at: Instant,
        seq: Seq,
        mut caller: Caller,
    ) {
        // The session confirms the path against the last card.
        self.judge.session.open(id, exchange, seq);
        let Some(exchange) = self.judge.session.engine(id).map(|e| e.exchange()) else {
            return;
        };
        let parent = caller.traceparent.as_deref().and_then(TraceParent::parse);
        let span = self
            .tracer
            .as_mut()
            .and_then(|t| t.begin(id, exchange, parent, &mut caller, at));
        let live = Live::begin(self.parked.current, span, (parent, caller.host), at);
        self.live.open(id, live);
        self.push_link(id);
    }
}

/// The request id as the proxy's logs write it (`request_id=N`).
fn format_id(id: u64) -> String {
    id.to_string()
}

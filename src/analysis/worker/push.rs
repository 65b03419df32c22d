//! Push relay messages on the analysis thread: registrations and deletes
//! handed to the session, deliveries judged there and reported like an
//! exchange's findings, each delivery with its span (a child of the
//! registering exchange's span when the agent sent no trace context).

use std::collections::HashMap;
use std::time::Instant;

use super::live::Live;
use super::Worker;
use crate::analysis::msg::Caller;
use crate::judge::push::{Delivery, Registration};
use crate::trace::context::TraceParent;

/// The spans registrations were made on, by token: a delivery's span is
/// their child. A registration comes before its exchange is opened (that
/// waits for the answer's head), so its tokens wait for the span by the
/// exchange's id. At most `MAX_LINKS` of each are kept.
#[derive(Default)]
pub(crate) struct PushLinks {
    parents: HashMap<Box<str>, TraceParent>,
    waiting: HashMap<u64, Vec<Box<str>>>,
}

/// Most registration spans (and exchanges waiting for theirs) remembered.
const MAX_LINKS: usize = 65_536;

fn bounded<K: Clone + std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>) {
    if map.len() >= MAX_LINKS {
        let any = map.keys().next().cloned();
        any.map(|k| map.remove(&k));
    }
}

impl Worker {
    pub(super) fn push_registered(&mut self, id: u64, regs: Vec<Registration>) {
        if self.tracer.is_some() {
            bounded(&mut self.links.waiting);
            let tokens = regs.iter().map(|r| r.token.clone()).collect();
            self.links.waiting.insert(id, tokens);
            self.push_link(id);
        }
        self.judge.session.push_registered(id, regs);
    }

    /// Exchange `id` is open: the registrations it carried take its span
    /// (none when it is not traced).
    pub(super) fn push_link(&mut self, id: u64) {
        // Most exchanges carry no registration: no lookup (a hash of the
        // id, about 200 instructions an exchange) for them.
        if self.links.waiting.is_empty() {
            return;
        }
        let Some(live) = self.live.get_mut(id) else {
            return;
        };
        let parent = live.span.as_ref().map(|s| TraceParent {
            trace_id: s.trace_id(),
            span_id: s.span_id(),
            flags: 1,
        });
        let tokens = self.links.waiting.remove(&id).unwrap_or_default();
        let Some(parent) = parent else {
            return;
        };
        for token in tokens {
            bounded(&mut self.links.parents);
            self.links.parents.insert(token, parent);
        }
    }

    pub(super) fn delivery(
        &mut self,
        id: u64,
        delivery: &Delivery,
        at: Instant,
        traceparent: Option<&str>,
    ) {
        self.returned += delivery.body.as_ref().map_or(0, Vec::len);
        let now = self.now(at);
        let mut found = Vec::new();
        let Some(judged) = self.judge.session.deliver(id, delivery, now, &mut found) else {
            return;
        };
        if judged.unordered {
            self.metrics
                .push
                .unordered_total
                .with(&self.judge.upstream)
                .inc();
        }
        let parent = traceparent
            .and_then(TraceParent::parse)
            .or_else(|| self.links.parents.get(&delivery.token).copied());
        let mut caller = Caller {
            http_method: Some(http::Method::POST),
            ..Caller::default()
        };
        let span = self
            .tracer
            .as_mut()
            .and_then(|t| t.begin(id, &judged.exchange, parent, &mut caller, at));
        let live = Live::begin(self.parked.current, span, (parent, None), at);
        self.live.open(id, live);
        let findings = found.into_iter().map(|f| f.finding).collect();
        self.report(id, Some(&judged.exchange), findings);
        self.flush_folds(id);
        let server = self
            .judge
            .settings
            .as_ref()
            .map(|s| s.server_address.as_str());
        if let (Some(tracer), Some(live), Some(engine)) =
            (&mut self.tracer, self.live.get_mut(id), &judged.engine)
        {
            if let Some(span) = live.span.take() {
                tracer.end(&span, (live, engine), at, server);
            }
        }
        self.live.discard(id);
    }
}

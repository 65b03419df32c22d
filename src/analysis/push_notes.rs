//! What the push relay tells the analysis thread of a route, through its
//! queue (so registrations, deletes and deliveries take their place in
//! the route's causal order): the registrations it made for an exchange, the deletes
//! an exchange asks for, and each delivery as it passed.

use std::sync::Arc;
use std::time::Instant;

use super::msg::Msg;
use super::shards::Shards;
use super::Clock;
use crate::judge::push::{Delivery, Registration};
use crate::lifecycle::Seq;

/// The relay's side of the analysis queue. Cheap to clone.
#[derive(Clone)]
pub struct PushNotes {
    pub(super) shards: Arc<Shards>,
    pub(super) clock: Clock,
}

impl PushNotes {
    /// Exchange `id` carried `regs`, on `route` (its name; `None`: the
    /// first). Sent before its request goes upstream, so before the
    /// exchange is opened (that waits for the answer's head).
    pub fn registered(&self, id: u64, regs: Vec<Registration>, route: Option<Arc<str>>) {
        self.shards
            .of(route.as_deref())
            .send(Msg::PushRegistered { id, regs, route });
    }

    /// Exchange `id` on `route` deletes push config `config` of `task`.
    pub fn deleting(
        &self,
        id: u64,
        (task, config): (Option<String>, Option<String>),
        route: Option<Arc<str>>,
    ) {
        self.shards.of(route.as_deref()).send(Msg::PushDeleting {
            id,
            task,
            config,
            route,
        });
    }

    /// The causal stamp of a delivery to a config of `route` (its name)
    /// arriving now.
    pub fn seq(&self, route: &str) -> Seq {
        Seq::after_messages(self.shards.of(Some(route)).sent())
    }

    /// Delivery `id` passed; false when its body did not fit the analysis
    /// budget (then it is sent without its body: judged for what it owes
    /// as a delivery, not for its shape).
    pub fn delivered(
        &self,
        id: u64,
        delivery: Delivery,
        (traceparent, route): (Option<Box<str>>, Option<Arc<str>>),
    ) -> bool {
        let at = self.clock.now();
        let bytes = delivery.body.as_ref().map_or(0, Vec::len);
        let mut held = Some((Box::new(delivery), traceparent));
        let msg = |(delivery, traceparent)| Msg::Delivery {
            id,
            delivery,
            at,
            traceparent,
            route: route.clone(),
        };
        let tx = self.shards.of(route.as_deref());
        let sent = tx.send_with(bytes, |batch| {
            batch.items.extend(held.take().map(msg));
        });
        match held {
            Some((mut delivery, traceparent)) if !sent => {
                delivery.body = None;
                tx.send(msg((delivery, traceparent)));
                false
            }
            _ => true,
        }
    }

    /// Now, on the clock of judging.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }
}

/// Notes going nowhere but the returned receiver (unit tests).
#[cfg(test)]
pub(crate) fn for_tests() -> (PushNotes, super::queue::Receiver<Msg>) {
    let (tx, rx) = super::queue::queue(1 << 20);
    let notes = PushNotes {
        shards: Arc::new(Shards::new(vec![tx], "")),
        clock: Clock::System,
    };
    (notes, rx)
}

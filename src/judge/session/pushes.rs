//! The session's push deliveries (`judge::push`): registrations tied to
//! the exchanges that carried them, deliveries judged whole against the
//! same registry, the promise judged on the tick.

use super::exchanges::Found;
use super::Session;
use crate::a2a::model::{Binding, Exchange, Operation};
use crate::engine::{ExchangeEngine, Head};
use crate::findings::Finding;
use crate::judge::push::{Delivery, PushSettings, Registration};
use crate::lifecycle::{End, Millis, Registry, RegistryConfig};

/// What judging one delivery made of it.
pub struct Delivered {
    /// The delivery as an exchange (binding `webhook`, `PushDelivery`),
    /// for its records and span.
    pub exchange: Exchange,
    /// Its state was not certain to be in order, so the registry did not
    /// take it (counted, not accused).
    pub unordered: bool,
    /// Its engine, when its body was judged (for its span).
    pub engine: Option<ExchangeEngine>,
}

impl Session {
    /// Judges push deliveries with `settings` (the relay is on).
    pub fn with_push(mut self, settings: PushSettings) -> Session {
        self.pushes.settings = settings;
        self
    }

    /// Exchange `id` carried `regs` (the relay put its URL in them).
    pub fn push_registered(&mut self, id: u64, regs: Vec<Registration>) {
        self.pushes.registered(id, regs, self.now);
    }

    /// Exchange `id` asks to delete push config `config` of `task`.
    pub fn push_deleting(&mut self, id: u64, task: Option<String>, config: Option<String>) {
        self.pushes.deleting(id, task, config);
    }

    /// Registrations followed.
    pub fn push_registrations(&self) -> usize {
        self.pushes.len()
    }

    /// Judges delivery `id` at `now`: what it owes as a delivery, then its
    /// body as an answer about its registration's task. `None` when its
    /// token is unknown here (forgotten: TTL, bound).
    pub fn deliver(
        &mut self,
        id: u64,
        d: &Delivery,
        now: Millis,
        out: &mut Vec<Found>,
    ) -> Option<Delivered> {
        let now = self.advance(now);
        let prepared = self.pushes.prepare(d, &self.registry)?;
        let exchange = Exchange {
            binding: Binding::Webhook,
            version: prepared.version,
            operation: Operation::PushDelivery,
            rpc_id: None,
            task_id: prepared.task_id,
            context_id: None,
            blocking: false,
            guessed_path: None,
            message_id: None,
        };
        self.keep(Some(id), prepared.found, out);
        let Some(body) = &d.body else {
            self.pushes.delivered(&d.token, None, false);
            return Some(Delivered {
                exchange,
                unordered: prepared.unordered,
                engine: None,
            });
        };
        let mut engine = ExchangeEngine::new(exchange, d.seq, self.engine);
        engine.head(Head::read(200, Some("application/json"), None));
        // A state not certain to be in order is judged for its shape and
        // task alone, against a registry of its own.
        let mut own = Registry::new(RegistryConfig::default());
        let registry = if prepared.unordered {
            &mut own
        } else {
            &mut self.registry
        };
        let mut found: Vec<Finding> = Vec::new();
        engine.response_data(body, registry, now, &mut found);
        engine.response_end(End::Upstream, registry, now, &mut found);
        let read = engine.skipped().is_none();
        self.pushes
            .delivered(&d.token, engine.reducer().state(), read);
        self.keep(Some(id), found, out);
        let mut exchange = engine.exchange().clone();
        if exchange.task_id.is_none() {
            exchange.task_id = engine.task_id().map(str::to_owned);
        }
        Some(Delivered {
            exchange,
            unordered: prepared.unordered,
            engine: Some(engine),
        })
    }

    /// The push part of the tick: `push_not_delivered`.
    pub(super) fn tick_pushes(&mut self, now: Millis, out: &mut Vec<Found>) {
        let open = &self.open;
        let took = |id: u64| {
            let e = &open.get(&id)?.engine;
            let r = e.reducer();
            let took = r.answered_success() && !r.answered_error() && r.events() > 0;
            took.then(|| (e.task_id().map(str::to_owned), r.seq()))
        };
        let mut found = Vec::new();
        self.pushes.tick(now, &self.registry, &took, &mut found);
        self.keep(None, found, out);
    }

    /// Exchange `id`'s answer ended: its registrations taken or refused,
    /// its delete done.
    pub(super) fn answered_pushes(&mut self, id: u64, engine: &ExchangeEngine) {
        if !self.pushes.awaits_answers() {
            return;
        }
        let r = engine.reducer();
        let took = r.answered_success() && !r.answered_error();
        let task = engine.task_id().or(engine.exchange().task_id.as_deref());
        let seq = r.seq();
        self.pushes.answered(id, took, (task, seq), &self.registry);
    }
}

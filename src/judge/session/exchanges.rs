//! The session's open exchanges, keyed by the driver's id, and the
//! messages that move them: `open` (the request), `head`, `piece` (bytes
//! of the answer as forwarded), `end`, `tick` (the time) and `heard` (a
//! replica's facts). Each returns what it found, kept by the severity
//! policy, with the exchange it belongs to; folding repeats and making
//! records of them is the driver's (its outputs differ). What only the
//! live proxy keeps per exchange (spans, timings, the caller's host) the
//! driver keeps under the same id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

use super::Session;
use crate::a2a::card::{self, CardInfo};
use crate::a2a::grpc::GrpcStatus;
use crate::a2a::model::{Decoded, EventKind, Exchange, Malformed};
use crate::engine::{ExchangeEngine, Head, Sink, SkipReason};
use crate::findings::Finding;
use crate::judge::rules;
use crate::lifecycle::registry::Fact;
use crate::lifecycle::{End, Millis, Outcome, Seq};

/// A finding the policy kept, with the exchange it belongs to (`None`:
/// about a task alone, from a tick).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub id: Option<u64>,
    pub finding: Finding,
}

/// An exchange being judged: its engine, and what the time rules
/// (`judge::rules`) reported of it.
pub(super) struct Open {
    pub(super) engine: ExchangeEngine,
    /// When its stream had its last word and should have closed.
    over_at: Option<Millis>,
    close_reported: bool,
    notify_reported: bool,
}

impl std::fmt::Debug for Open {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Open")
            .field("exchange", self.engine.exchange())
            .field("over_at", &self.over_at)
            .finish_non_exhaustive()
    }
}

/// The open exchanges, by the driver's id.
pub(super) type OpenSet = IdMap<Open>;

/// Maps keyed by a driver's exchange id, looked up for every message.
pub type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Exchange ids are the driver's own counter, never chosen by a peer: one
/// multiply spreads them, and SipHash's flood resistance buys nothing.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(self.0 ^ u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// How an exchange ended.
pub struct Ended {
    /// Its engine, as it stands at the end (for the driver's spans and
    /// counts).
    pub engine: ExchangeEngine,
    /// The stream's outcome, for a stream judged to its end.
    pub outcome: Option<Outcome>,
    /// The agent card it carried and that passed, now the session's.
    pub card: Option<CardInfo>,
}

impl Session {
    /// The causal stamp of an exchange opened now (a driver that stamps
    /// exchanges itself, as the live queue does, passes its own to `open`).
    pub fn next_seq(&mut self) -> Seq {
        self.registry.open_exchange()
    }

    /// Opens exchange `id` for `exchange`'s request, stamped `seq`; the
    /// last agent card seen confirms which paths are A2A.
    pub fn open(&mut self, id: u64, mut exchange: Exchange, seq: Seq) {
        card::confirm(&mut exchange, self.card.as_ref(), &self.base_path);
        let engine = ExchangeEngine::new(exchange, seq, self.engine);
        let open = Open {
            engine,
            over_at: None,
            close_reported: false,
            notify_reported: false,
        };
        self.open.insert(id, open);
    }

    /// The engine of open exchange `id`.
    pub fn engine(&self, id: u64) -> Option<&ExchangeEngine> {
        self.open.get(&id).map(|o| &o.engine)
    }

    /// The ids of the open exchanges.
    pub fn open_ids(&self) -> Vec<u64> {
        self.open.keys().copied().collect()
    }

    /// The answer's head of `id`; why it is not judged, if it is not (the
    /// driver then `forget`s it).
    pub fn head(&mut self, id: u64, head: Head, out: &mut Vec<Found>) -> Option<SkipReason> {
        let open = self.open.get_mut(&id)?;
        open.engine.head(head);
        if let Some(r) = open.engine.skipped() {
            return Some(r);
        }
        self.stream_against_card(id, out);
        None
    }

    /// A piece of `id`'s answer, as forwarded, at `now`; `watch` is told
    /// what each frame decoded to, each event and each gap. Why it is no
    /// longer judged, if it is not (the driver then `forget`s it).
    pub fn piece(
        &mut self,
        id: u64,
        bytes: &[u8],
        now: Millis,
        watch: &mut dyn Sink,
        out: &mut Vec<Found>,
    ) -> Option<SkipReason> {
        let now = self.advance(now);
        let open = self.open.get_mut(&id)?;
        let mut tee = Tee::new(watch);
        open.engine
            .response_data(bytes, &mut self.registry, now, &mut tee);
        let e = &open.engine;
        if open.over_at.is_none() && e.is_stream() && e.reducer().stream_over() {
            open.over_at = Some(now);
        }
        let skipped = open.engine.skipped();
        self.keep(Some(id), tee.findings, out);
        skipped
    }

    /// `id`'s answer ended (`end`, after the gRPC `status` when there is
    /// one) at `now`: it is judged whole and closed. `None` when `id` is
    /// not open.
    pub fn end(
        &mut self,
        id: u64,
        end: End,
        status: Option<&GrpcStatus>,
        now: Millis,
        watch: &mut dyn Sink,
        out: &mut Vec<Found>,
    ) -> Option<Ended> {
        let now = self.advance(now);
        let open = self.open.get_mut(&id)?;
        let mut tee = Tee::new(watch);
        if let Some(status) = status {
            open.engine
                .response_status(status, &mut self.registry, now, &mut tee);
        }
        let outcome = open
            .engine
            .response_end(end, &mut self.registry, now, &mut tee);
        let card = tee.card.take();
        self.keep(Some(id), tee.findings, out);
        if let Some(card) = &card {
            self.card = Some(card.clone());
        }
        if matches!(end, End::Upstream) {
            self.accepted_against_card(id, out);
        }
        if status.is_some() {
            // A gRPC stream shows itself by its messages, not its head.
            self.stream_against_card(id, out);
        }
        let open = self.open.remove(&id)?;
        self.answered_pushes(id, &open.engine);
        Some(Ended {
            engine: open.engine,
            outcome,
            card,
        })
    }

    /// Stops judging `id` before its end (over a limit, lost, shut down):
    /// the registry no longer counts its stream as following a task. Its
    /// engine, if it was open.
    pub fn forget(&mut self, id: u64) -> Option<ExchangeEngine> {
        self.pushes.forgotten(id);
        let mut open = self.open.remove(&id)?;
        open.engine.release(&mut self.registry);
        Some(open.engine)
    }

    /// The time is `now`: the registry's stalls and expiry, and the rules
    /// that judge open exchanges against the time (`stream_not_closed`,
    /// `subscriber_not_notified`), each reported once per exchange.
    pub fn tick(&mut self, now: Millis, out: &mut Vec<Found>) {
        let now = self.advance(now);
        let mut due = Vec::new();
        self.registry.tick(now, &mut due);
        self.keep(None, due, out);
        let wait = self.engine.close_wait;
        let wait_ms = wait.as_millis() as Millis;
        let mut found = Vec::new();
        for (id, open) in &mut self.open {
            if let Some(over) = open.over_at.filter(|_| !open.close_reported) {
                let open_for = Duration::from_millis(now.saturating_sub(over));
                if let Some(f) = rules::stream_not_closed(&open.engine, open_for, wait) {
                    open.close_reported = true;
                    found.push((*id, f));
                }
            }
        }
        for (id, open) in &mut self.open {
            if open.notify_reported {
                continue;
            }
            let f = rules::subscriber_not_notified(&open.engine, &self.registry, now, wait_ms);
            if let Some(f) = f {
                open.notify_reported = true;
                found.push((*id, f));
            }
        }
        for (id, f) in found {
            self.keep(Some(id), vec![f], out);
        }
        self.tick_pushes(now, out);
    }

    /// Facts another replica published (`from`), learnt at `now`.
    pub fn heard(&mut self, from: &str, facts: &[Fact], now: Millis) {
        let now = self.advance(now);
        for f in facts {
            self.registry.learn(f, from, now);
        }
    }

    /// The time of judging: `now`, never before what was judged already.
    pub(super) fn advance(&mut self, now: Millis) -> Millis {
        self.now = self.now.max(now);
        self.now
    }

    /// `findings` through the policy, onto `out`.
    pub(super) fn keep(&self, id: Option<u64>, findings: Vec<Finding>, out: &mut Vec<Found>) {
        let kept = findings.into_iter().filter_map(|f| self.pipeline.keep(f));
        out.extend(kept.map(|finding| Found { id, finding }));
    }

    /// `capability_mismatch` (when the driver judges it): a streaming
    /// operation answered with a stream the card does not declare.
    fn stream_against_card(&self, id: u64, out: &mut Vec<Found>) {
        let (true, Some(card), Some(open)) = (self.card_rules, &self.card, self.open.get(&id))
        else {
            return;
        };
        if let Some(f) = rules::stream_against_card(card, &open.engine) {
            self.keep(Some(id), vec![f], out);
        }
    }

    /// `capability_mismatch` (when the driver judges it): a push-config
    /// creation or the extended card accepted while the card does not
    /// declare it.
    fn accepted_against_card(&self, id: u64, out: &mut Vec<Found>) {
        let (true, Some(card), Some(open)) = (self.card_rules, &self.card, self.open.get(&id))
        else {
            return;
        };
        if let Some(f) = rules::accepted_against_card(card, &open.engine) {
            self.keep(Some(id), vec![f], out);
        }
    }
}

/// The engine's sink of one message: findings and the card kept, the
/// rest told to the driver's watcher.
struct Tee<'w> {
    watch: &'w mut dyn Sink,
    findings: Vec<Finding>,
    card: Option<CardInfo>,
}

impl<'w> Tee<'w> {
    fn new(watch: &'w mut dyn Sink) -> Tee<'w> {
        Tee {
            watch,
            findings: Vec::new(),
            card: None,
        }
    }
}

impl Sink for Tee<'_> {
    fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }
    fn event(&mut self, kind: EventKind) {
        self.watch.event(kind);
    }
    fn read(&mut self) {
        self.watch.read();
    }
    fn gap(&mut self, reason: SkipReason) {
        self.watch.gap(reason);
    }
    fn card(&mut self, card: CardInfo) {
        self.card = Some(card);
    }
    fn decoded(&mut self, index: Option<u64>, decoded: Result<&Decoded<'_>, &Malformed>) {
        self.watch.decoded(index, decoded);
    }
}

//! The analysis thread: queue -> judging session -> outputs. The session
//! (`judge::Session`) owns every exchange's engine, the task registry and
//! the last card, and judges messages in arrival order; the thread keeps
//! what only the live proxy has of an exchange (spans, timings, the
//! caller's host, records folding) under the same id, and writes what the
//! session found to the audit log, metrics, spans and the access log.

mod live;
mod push;
mod records;
mod routes;
mod setup;
pub(crate) mod tracer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::msg::{Caller, Msg};
use super::queue::Receiver;
use crate::engine::SkipReason;
use crate::lifecycle::{End, Millis, Outcome};
use crate::report::access::{AccessLine, AccessLog};
use crate::report::audit::AuditLog;
use crate::report::metrics::Metrics;
use live::LiveSet;
use records::Collect;
use routes::{Parked, RouteJudge};
use tracer::Tracer;

/// Longest a record is held for repeats to fold into before it is written
/// (the contract: the first occurrence on disk within a second).
pub(super) const FOLD_WINDOW: Duration = Duration::from_millis(500);

/// Most findings a second that also go to the log as lines (each is in
/// the audit log and the metrics whatever their rate): a storm of findings
/// must not flood the operators' logs, nor cost the analysis thread a
/// formatted line and a wake-up of the log's thread for each.
const FINDING_LINES: u32 = 50;

/// The findings' log lines' allowance, shared by the analysis threads.
pub(crate) type FindingLines = Arc<std::sync::Mutex<crate::pace::Burst>>;

/// A new allowance of `FINDING_LINES` a second.
pub(crate) fn finding_lines() -> FindingLines {
    Arc::new(std::sync::Mutex::new(crate::pace::Burst::new(
        Duration::from_secs(1),
        FINDING_LINES,
    )))
}

/// How often the registry is ticked (stalls, TTL, gauges).
const TICK: Duration = Duration::from_secs(1);
/// After a message, the thread naps this long between drains. Longer naps
/// mean fewer wake-ups but longer drains, and a drain that holds a core
/// delays the forwarding thread that wanted it: at 4 ms, one-connection
/// SSE p99 was 0.12–0.21 ms above the pass-through's, at 1 ms up to
/// 0.06 ms, for the same throughput at saturation (BENCHMARKS.md)...
const NAP: Duration = Duration::from_millis(1);
/// ...for this long, before it parks on the queue again.
const BUSY_SPELL: Duration = Duration::from_millis(200);
/// While judging keeps up, a drain gives its core away after this much
/// work, so that a forwarding thread woken on that core waits this long
/// rather than the whole drain (BENCHMARKS.md: one connection's p99)...
const SLICE: Duration = Duration::from_micros(25);
/// ...judging keeps up while no more than this many messages wait, taken
/// or not, and they hold no more than `1 / KEEPING_UP_SHARE` of the
/// queue's byte budget. Behind that, drains run whole: on a saturated box
/// a yield waits its turn behind every runnable thread, and judging would
/// fall behind until the queue's budget dropped exchanges.
const KEEPING_UP: u64 = 1024;
const KEEPING_UP_SHARE: usize = 8;
/// The slice's clock is read after every this many messages.
const SLICE_CHECK: usize = 4;

/// When a drain gives its core away: at the end of each `SLICE` of
/// work, while judging keeps up.
struct Courtesy {
    slice_began: Instant,
}

impl Courtesy {
    /// A slice beginning at `now`.
    fn new(now: Instant) -> Courtesy {
        Courtesy { slice_began: now }
    }

    /// Whether to give the core away at `now`, if `keeping_up()` (asked
    /// only once a slice is over: what it reads, the senders write); a
    /// slice that is over is followed by the next.
    fn due(&mut self, now: Instant, keeping_up: impl FnOnce() -> bool) -> bool {
        if now.saturating_duration_since(self.slice_began) < SLICE {
            return false;
        }
        self.slice_began = now;
        keeping_up()
    }
}

/// Whether judging keeps up, `messages` waiting to be judged and holding
/// `bytes` of the queue's `budget`.
fn keeping_up(messages: u64, bytes: usize, budget: usize) -> bool {
    messages <= KEEPING_UP && bytes <= budget / KEEPING_UP_SHARE
}

/// State of the analysis thread.
pub(crate) struct Worker {
    /// The route being judged: its session (the exchanges' engines, the
    /// registry, the last card), label, series.
    judge: Box<RouteJudge>,
    /// The other routes.
    parked: Parked,
    /// What a new route's session is made with.
    registry_config: crate::lifecycle::RegistryConfig,
    engine_config: crate::engine::EngineConfig,
    metrics: Arc<Metrics>,
    audit: AuditLog,
    /// Most bytes the engines may hold across exchanges (`[analysis]
    /// queue_bytes`, the limit the queue also puts on bytes in flight).
    budget: usize,
    epoch: Instant,
    /// The live-only parts of the exchanges the session judges, by the
    /// same id; messages for any other id are ignored.
    live: LiveSet,
    /// Messages handled so far: the index of the next one in the queue's
    /// order, which stamps the registry's observations.
    handled: u64,
    /// Sum of `Live::held` over `live`.
    held: usize,
    /// When the messages being handled were taken from the queue.
    clock: Instant,
    /// `clock` on the registry's clock.
    clock_ms: Millis,
    /// Bytes judged since the queue's budget was last given them back
    /// (once per drain: one lock instead of one per piece).
    returned: usize,
    /// The clock of judging (ticks, stalls, TTL).
    time: Clock,
    /// The access log, when on.
    access: Option<AccessLog>,
    /// When the earliest held record must be written.
    fold_due: Option<Instant>,
    /// The findings' log lines' allowance (the audit log has them all),
    /// shared by every analysis thread.
    finding_lines: FindingLines,
    /// Whether this thread judges the first route (the one built with the
    /// worker); on the others its slot is an empty stand-in.
    first_route: bool,
    /// Spans of the exchanges, when tracing is on.
    tracer: Option<Tracer>,
    /// Where the registry's facts go for the other replicas, when shared.
    publisher: Option<super::shared_registry::Publisher>,
    /// The spans push registrations were made on (deliveries' parents).
    links: push::PushLinks,
}

impl Worker {
    /// Runs until shut down (or every sender is gone); ticks the registry
    /// every second.
    pub(crate) fn run(mut self, rx: Receiver<Msg>) {
        let mut last_tick = self.time.now();
        let mut last_sync = Instant::now();
        let mut last_busy = Instant::now();
        let mut batch = Vec::new();
        let mut bytes = Vec::new();
        'run: loop {
            // Judge what is queued, in order.
            self.clock = self.time.now();
            self.clock_ms = self.now(self.clock);
            bytes.clear();
            rx.take(&mut batch, &mut bytes);
            let drained = !batch.is_empty();
            let mut courtesy = Courtesy::new(Instant::now());
            for (i, msg) in batch.drain(..).enumerate() {
                if matches!(msg, Msg::Shutdown) {
                    break 'run;
                }
                self.handle(msg, &bytes);
                if i % SLICE_CHECK == SLICE_CHECK - 1
                    && courtesy.due(Instant::now(), || {
                        let (in_flight, budget) = rx.in_flight();
                        keeping_up(rx.sent().saturating_sub(self.handled), in_flight, budget)
                    })
                {
                    std::thread::yield_now();
                    courtesy = Courtesy::new(Instant::now());
                }
            }
            rx.give_back(std::mem::take(&mut self.returned));
            self.publish_facts();
            let now = Instant::now();
            if drained {
                last_busy = now;
            } else if rx.senders_gone() {
                break;
            }
            // Stalls and expiry on the clock of judging; the registry's
            // gauges on the wall clock (a manual clock in tests must not
            // hold back what a scrape shows).
            let judged_at = self.time.now();
            if judged_at.duration_since(last_tick) >= TICK {
                last_tick = judged_at;
                self.tick();
            }
            if now.duration_since(last_sync) >= TICK {
                last_sync = now;
                self.sync_registry_metrics();
            }
            if self.fold_due.is_some_and(|due| now >= due) {
                self.flush_all_folds();
            }
            if let Some(tracer) = &mut self.tracer {
                tracer.hand_over_due(now);
            }
            if now.duration_since(last_busy) < BUSY_SPELL {
                // Under traffic, nap instead of parking: a parked receiver
                // makes a send a wake-up, a syscall on the forwarding path.
                std::thread::sleep(NAP);
            } else {
                // Idle: park until a message, the next tick or the folds' due time.
                let due = self
                    .fold_due
                    .map_or(TICK, |d| d.saturating_duration_since(now));
                rx.wait(due.min(TICK));
            }
        }
        // Exchanges still open at exit were cut by shutdown: not judged
        // further, what they found is written.
        self.flush_all_folds();
        for id in self.live.ids() {
            self.forget(id);
        }
        self.tick();
        self.sync_registry_metrics();
        self.publish_facts();
        tracing::debug!(unfinished = self.live.len(), "analysis stopped");
    }

    fn now(&self, at: Instant) -> Millis {
        at.saturating_duration_since(self.epoch).as_millis() as Millis
    }

    /// Handles `msg`, whose piece (if any) lies in `bytes`.
    fn handle(&mut self, msg: Msg, bytes: &[u8]) {
        let index = self.handled;
        self.handled += 1;
        self.enter_route_of(&msg);
        self.judge.session.registry_mut().at_message(index);
        match msg {
            Msg::Open {
                id,
                exchange,
                at,
                seq,
                caller,
                route: _,
            } => self.open(
                id,
                *exchange,
                at,
                seq,
                caller.map(|c| *c).unwrap_or_default(),
            ),
            Msg::Unjudged { reason, route: _ } => self.skipped(reason),
            Msg::Head { id, head } => {
                let mut found = Vec::new();
                if let Some(r) = self.judge.session.head(id, head, &mut found) {
                    self.forget(id);
                    self.skipped(r);
                }
                self.report_found(found, None);
            }
            Msg::Data { id, piece, at } => {
                let data = bytes.get(piece).unwrap_or_default();
                self.returned += data.len();
                self.data(id, data, at);
            }
            Msg::Lost { id } => {
                if self.forget(id) {
                    self.skipped(SkipReason::Overload);
                }
            }
            Msg::End {
                id,
                end,
                at,
                access,
                grpc,
            } => self.end(id, end, at, access, grpc.map(|g| *g)),
            Msg::Facts(heard) => {
                for (from, route, facts) in &heard.entries {
                    self.heard_on((from, route.as_deref()), facts, index);
                }
                self.returned += heard.bytes;
            }
            // A route a reload removed: nothing of it is judged.
            Msg::PushRegistered { route, .. }
            | Msg::PushDeleting { route, .. }
            | Msg::Delivery { route, .. }
                if self.route_named(route.as_deref()).is_none() => {}
            Msg::PushRegistered { id, regs, .. } => self.push_registered(id, regs),
            Msg::PushDeleting {
                id, task, config, ..
            } => {
                self.judge.session.push_deleting(id, task, config);
            }
            Msg::Delivery {
                id,
                delivery,
                at,
                traceparent,
                ..
            } => self.delivery(id, &delivery, at, traceparent.as_deref()),
            Msg::Route(_) | Msg::Shutdown => {}
        }
    }

    /// A response piece; `at` is when it passed, when the observer timed it
    /// (else it is timed by the drain that took it).
    fn data(&mut self, id: u64, data: &[u8], at: Option<Instant>) {
        let now = at.map_or(self.clock_ms, |at| self.now(at));
        let at = at.unwrap_or(self.clock);
        if self.live.get_mut(id).is_none() {
            return;
        }
        let mut sink = Collect::default();
        let mut found = Vec::new();
        let skipped = self
            .judge
            .session
            .piece(id, data, now, &mut sink, &mut found);
        let Some(engine) = self.judge.session.engine(id) else {
            return;
        };
        let held = engine.held_bytes();
        let binding = engine.exchange().binding;
        let Some(live) = self.live.get_mut(id) else {
            return;
        };
        self.held = self.held - live.held + held;
        live.held = held;
        // Bodies held whole across every exchange share the analysis
        // budget: past it, this one goes unjudged rather than grow.
        let skipped = skipped.or_else(|| (self.held > self.budget).then_some(SkipReason::Overload));
        if let Some(r) = skipped {
            // Judging stopped here (body over the limit, corrupt encoding,
            // memory bound).
            self.forget(id);
            self.skipped(r);
            return;
        }
        for reason in &sink.gaps {
            self.judge.series.skipped(*reason).inc();
        }
        let seen: u32 = sink.events.iter().sum();
        if seen > 0 && live.first_event.is_none() {
            live.first_event = Some(at);
            self.judge
                .series
                .first_event()
                .observe(at.saturating_duration_since(live.opened).as_secs_f64());
        }
        let by_kind = self.judge.series.events(binding);
        for (counter, n) in by_kind.iter().zip(sink.events) {
            if n > 0 {
                counter.inc_by(u64::from(n));
            }
        }
        self.report_found(found, None);
    }

    fn end(
        &mut self,
        id: u64,
        end: End,
        at: Instant,
        access: Option<Box<AccessLine>>,
        grpc: Option<crate::a2a::grpc::GrpcStatus>,
    ) {
        let now = self.now(at);
        let Some(live) = self.live.get_mut(id) else {
            // Not judged (left unjudged on the way): its line as it is.
            if let (Some(log), Some(line)) = (&self.access, access) {
                log.write(line.to_json());
            }
            return;
        };
        let host = live.host.take();
        let opened = live.opened;
        let mut sink = Collect::default();
        let mut found = Vec::new();
        let ended = self
            .judge
            .session
            .end(id, end, grpc.as_ref(), now, &mut sink, &mut found);
        let Some(mut ended) = ended else {
            // Open here but not in the session: never so; its line as it is.
            self.forget(id);
            if let (Some(log), Some(line)) = (&self.access, access) {
                log.write(line.to_json());
            }
            return;
        };
        if let Some(outcome) = ended.outcome {
            let outcome = if matches!(end, End::ClientGone) {
                Outcome::ClientGone
            } else {
                outcome
            };
            self.judge
                .series
                .duration(outcome)
                .observe(at.saturating_duration_since(opened).as_secs_f64());
        }
        if let Some(card) = &ended.card {
            tracing::debug!(interfaces = card.interfaces.len(), "agent card seen");
            self.judge
                .bypass
                .judge(card, host.as_deref(), &self.judge.upstream, at);
        }
        self.report_found(found, Some(ended.engine.exchange()));
        // For the access line alone (read only when it is written: a UTF-8
        // check and an allocation an exchange otherwise).
        let task_id = self
            .access
            .as_ref()
            .and_then(|_| ended.engine.task_id().map(str::to_owned));
        let found = self.live.get_mut(id).map_or(0, |l| l.findings) + self.flush_folds(id);
        let server = self
            .judge
            .settings
            .as_ref()
            .map(|s| s.server_address.as_str());
        if let (Some(tracer), Some(live)) = (&mut self.tracer, self.live.get_mut(id)) {
            if let Some(span) = live.span.take() {
                tracer.end(&span, (live, &ended.engine), at, server);
            }
        }
        ended.engine.release(self.judge.session.registry_mut());
        if let Some(held) = self.live.discard(id) {
            self.held -= held;
        }
        if let (Some(log), Some(mut line)) = (&self.access, access) {
            line.task_id = task_id;
            line.findings = Some(u32::try_from(found).unwrap_or(u32::MAX));
            log.write(line.to_json());
        }
    }
}

#[cfg(test)]
mod tests;

//! What the analysis thread makes of findings and counts: the severity
//! policy, the log line, the counter, the audit record; the registry's
//! gauges once a tick.

use super::Worker;
use crate::a2a::card::CardInfo;
use crate::a2a::model::{EventKind, Exchange, TaskState};
use crate::engine::{Sink, SkipReason};
use crate::pace::Every;
use std::time::Instant;

use super::{FINDING_LINES, FOLD_WINDOW};
use crate::findings::{Finding, Kind, Severity};
use crate::judge::Found;
use crate::report::audit::{Origin, Record};
use crate::report::log_safe;

impl Worker {
    /// The session's tick: the registry's stalls and expiry, then the
    /// rules that judge open exchanges against the time
    /// (`stream_not_closed`, `subscriber_not_notified`).
    pub(super) fn tick(&mut self) {
        let over = self
            .finding_lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .over(self.clock);
        if let Some(n) = over {
            findings_not_logged(n);
        }
        let now = self.now(self.time.now());
        for route in 0..self.route_count() {
            self.enter(route);
            self.judge.session.registry_mut().at_message(self.handled);
            let mut found = Vec::new();
            self.judge.session.tick(now, &mut found);
            self.report_found(found, None);
        }
    }

    pub(super) fn skipped(&self, reason: SkipReason) {
        self.judge.series.skipped(reason).inc();
    }

    /// Reports findings the session kept about `exchange` (`None`:
    /// about a task alone, from a tick); an exchange's findings are held
    /// in its folds (written within `FOLD_WINDOW`, or at its end), a
    /// task's are written at once.
    pub(super) fn report(&mut self, id: u64, exchange: Option<&Exchange>, findings: Vec<Finding>) {
        if findings.is_empty() {
            return;
        }
        let origin = self.live.origin(&self.judge.upstream, id, exchange);
        self.report_from(id, exchange.is_some(), &origin, findings);
    }

    /// `report`, with the origin of the findings made (`about_exchange`:
    /// they are about exchange `id`).
    fn report_from(
        &mut self,
        id: u64,
        about_exchange: bool,
        origin: &Origin,
        findings: Vec<Finding>,
    ) {
        for f in findings {
            match self.live.get_mut(id).filter(|_| about_exchange) {
                Some(live) => {
                    let held = live.folds.add(f, |f| Record::new(f, origin));
                    if held && self.fold_due.is_none() {
                        self.fold_due = Some(Instant::now() + FOLD_WINDOW);
                    }
                }
                None => {
                    let (kind, severity) = (f.kind, f.severity);
                    let request_id = about_exchange.then_some(id);
                    self.write(kind, severity, Record::new(f, origin), request_id);
                }
            }
        }
    }

    /// Writes the folds `id` holds; the findings they stand for.
    pub(super) fn flush_folds(&mut self, id: u64) -> u64 {
        let Some(live) = self.live.get_mut(id) else {
            return 0;
        };
        if live.folds.is_empty() {
            return 0;
        }
        // Taken out while its records are written, then put back: no
        // other list is made, and its room is kept.
        let mut folds = std::mem::take(&mut live.folds);
        let mut found = 0;
        for h in folds.take() {
            let mut record = h.first;
            record.occurrences = h.occurrences;
            found += record.occurrences;
            if let (Some(tracer), Some(span)) = (
                &self.tracer,
                self.live.get_mut(id).and_then(|l| l.span.as_mut()),
            ) {
                span.finding(tracer.unix_nanos(Instant::now()), &record);
            }
            self.write(h.kind, h.severity, record, Some(id));
        }
        if let Some(live) = self.live.get_mut(id) {
            live.folds = folds;
        }
        found
    }

    /// Writes the folds of every exchange (their window is over).
    pub(super) fn flush_all_folds(&mut self) {
        self.fold_due = None;
        for id in self.live.ids() {
            let found = self.flush_folds(id);
            if let Some(live) = self.live.get_mut(id) {
                live.findings += found;
            }
        }
    }

    /// One record everywhere: the log line, the counter, the audit log.
    fn write(&mut self, kind: Kind, severity: Severity, record: Record, request_id: Option<u64>) {
        let (admitted, held_back) = self
            .finding_lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .admit(self.clock);
        if let Some(n) = held_back {
            findings_not_logged(n);
        }
        if admitted {
            // Fields of one type in every line: the request id an integer
            // (absent for a task's finding of no exchange), like the
            // proxy's other lines.
            tracing::warn!(
                upstream = %self.judge.upstream,
                request_id,
                kind = record.kind,
                severity = record.severity,
                task_id = record.task_id.as_deref(),
                occurrences = record.occurrences,
                "{}",
                log_safe(&record.detail)
            );
        }
        self.judge.series.violation(kind, severity).inc();
        self.audit.write(record);
    }

    /// Reports what the session found: each finding about the exchange it
    /// belongs to (`ended`'s, for one the session just closed), or about a
    /// task alone.
    pub(super) fn report_found(&mut self, found: Vec<Found>, ended: Option<&Exchange>) {
        let mut found = found.into_iter().peekable();
        while let Some(Found { id, finding }) = found.next() {
            // One exchange's findings in a row are reported together.
            let mut batch = vec![finding];
            while let Some(next) = found.next_if(|f| f.id == id) {
                batch.push(next.finding);
            }
            // The origin is made while the exchange is looked at where it
            // is (no copy of it).
            let (origin, about_exchange) = {
                let exchange = id.and_then(|id| {
                    ended.or_else(|| self.judge.session.engine(id).map(|e| e.exchange()))
                });
                let made = self
                    .live
                    .origin(&self.judge.upstream, id.unwrap_or(0), exchange);
                (made, exchange.is_some())
            };
            self.report_from(id.unwrap_or(0), about_exchange, &origin, batch);
        }
    }

    /// Registry gauges and transition counts, once a tick (they are
    /// scraped, not alerted on to the millisecond).
    pub(super) fn sync_registry_metrics(&mut self) {
        // The first route's gauges are set by the thread that judges it.
        let from = usize::from(!self.first_route);
        for route in from..self.route_count() {
            self.enter(route);
            self.sync_route_metrics();
        }
    }

    fn sync_route_metrics(&mut self) {
        let registry = self.judge.session.registry_mut();
        let long_ids = registry.take_long_ids();
        let by_state = registry.tracked_by_state();
        self.judge.series.long_ids().inc_by(long_ids);
        for (gauge, n) in self.judge.series.tracked().iter().zip(by_state) {
            gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        let metrics = &self.metrics;
        let upstream = &self.judge.upstream;
        self.judge
            .session
            .registry_mut()
            .take_transitions(&mut |from, to, n| {
                metrics
                    .task_transitions_total
                    .with(
                        upstream,
                        from.map_or("none", TaskState::as_str),
                        to.as_str(),
                    )
                    .inc_by(n);
            });
    }
}

#[derive(Default)]
pub(super) struct Collect {
    pub(super) findings: Vec<Finding>,
    /// Decoded events, in `EventKind::ALL` order.
    pub(super) events: [u32; EventKind::ALL.len()],
    /// Events not read (gaps), with why.
    pub(super) gaps: Vec<SkipReason>,
    pub(super) card: Option<CardInfo>,
}

impl Sink for Collect {
    fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }
    fn event(&mut self, kind: EventKind) {
        if let Some(i) = EventKind::ALL.iter().position(|k| *k == kind) {
            self.events[i] += 1;
        }
    }
    fn gap(&mut self, reason: SkipReason) {
        self.gaps.push(reason);
    }
    fn card(&mut self, card: CardInfo) {
        self.card = Some(card);
    }
}

/// Looks at the agent cards that pass (when they are not rewritten) for
/// interface URLs that lead past the proxy: clients that follow the card,
/// the SDKs' normal flow, then talk to the agent directly and the proxy
/// sees only the card fetch. Each such card is counted; the first is
/// logged, with the fix.
pub(crate) struct BypassCheck {
    /// Off while cards are rewritten: the rewrite itself counts the cards
    /// it passes unrewritten (`proxy::card`).
    pub(crate) on: bool,
    /// The authority of the proxy's `public_url`.
    pub(crate) public: Option<String>,
    counter: prometheus::IntCounter,
    warning: Every,
}

impl BypassCheck {
    /// On, with no public URL; the series at zero.
    pub(crate) fn new(metrics: &crate::report::metrics::Metrics, upstream: &str) -> BypassCheck {
        BypassCheck {
            on: true,
            public: None,
            counter: metrics.agent_card_bypass_total.with(upstream),
            warning: Every::new(BYPASS_WARNING_EVERY),
        }
    }

    /// Judges `card`, fetched at `host`, at `at` (the clock of judging).
    pub(crate) fn judge(
        &mut self,
        card: &CardInfo,
        host: Option<&str>,
        upstream: &str,
        at: Instant,
    ) {
        if !self.on {
            return;
        }
        let past = card.bypassing(host, self.public.as_deref());
        if past.is_empty() {
            return;
        }
        self.counter.inc();
        if let Some(cards) = self.warning.due_at(at, 1) {
            tracing::warn!(
                upstream = %upstream,
                urls = %log_safe(&past.join(" ")),
                fetched_at = host.map(log_safe).as_deref(),
                cards,
                "the agent card sends clients past the proxy: clients that follow it talk to the \
                 agent directly, unseen; set --rewrite-agent-card with --public-url = the \
                 proxy's address (rewrite_agent_card = true with public_url in the config); `cards` such \
                 cards since the last such line (logged at most every 10 minutes; counted in \
                 a2a_agent_card_bypass_total)"
            );
        }
    }
}

/// How often the bypass warning is repeated while bypassing cards keep
/// passing: often enough to be seen in any log window, rarely enough not
/// to flood it.
const BYPASS_WARNING_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// The line that stands for the findings a second's allowance held back.
fn findings_not_logged(n: u64) {
    tracing::warn!(
        not_logged = n,
        "{n} findings were not logged as lines (more than {FINDING_LINES} in a second); the audit \
         log and a2a_violations_total have every one"
    );
}

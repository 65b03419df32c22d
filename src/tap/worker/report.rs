//! What the analysis thread makes of findings and counts: the severity
//! policy, the log line, the counter, the audit record; the registry's
//! gauges once a tick.

use super::Worker;
use crate::a2a::card::CardInfo;
use crate::a2a::model::{EventKind, Exchange, TaskState};
use crate::engine::{Sink, SkipReason};
use crate::findings::Finding;
use crate::report::audit::{Origin, Record};
use crate::report::log_safe;

impl Worker {
    pub(super) fn tick(&mut self) {
        let now = self.now(self.time.now());
        let mut found = Vec::new();
        self.registry.tick(now, &mut found);
        self.report(0, None, found);
    }

    pub(super) fn skipped(&self, reason: SkipReason) {
        self.series.skipped(reason).inc();
    }

    /// Applies the severity policy and writes each finding everywhere.
    /// Applies the severity policy and writes each finding everywhere;
    /// how many were written.
    pub(super) fn report(
        &self,
        id: u64,
        exchange: Option<&Exchange>,
        findings: Vec<Finding>,
    ) -> u32 {
        if findings.is_empty() {
            return 0;
        }
        let mut written = 0;
        let origin = match exchange {
            Some(ex) => Origin::of(&self.upstream, ex, format_id(id)),
            None => Origin {
                upstream: self.upstream.clone(),
                ..Origin::default()
            },
        };
        for f in findings {
            let Some(f) = self.pipeline.keep(f) else {
                continue;
            };
            self.series.violation(f.kind, f.severity).inc();
            let record = Record::new(f, &origin);
            // Fields of one type in every line: the request id an integer
            // (absent for a task's finding of no exchange), like the
            // proxy's other lines.
            tracing::warn!(
                upstream = %self.upstream,
                request_id = exchange.map(|_| id),
                kind = record.kind,
                severity = record.severity,
                task_id = record.task_id.as_deref(),
                "{}",
                log_safe(&record.detail)
            );
            self.audit.write(record);
            written += 1;
        }
        written
    }

    /// Registry gauges and transition counts, once a tick (they are
    /// scraped, not alerted on to the millisecond).
    pub(super) fn sync_registry_metrics(&mut self) {
        let by_state = self.registry.tracked_by_state();
        for (gauge, n) in self.series.tracked().iter().zip(by_state) {
            gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        let metrics = &self.metrics;
        let upstream = &self.upstream;
        self.registry.take_transitions(&mut |from, to, n| {
            metrics
                .task_transitions_total
                .with_label_values(&[
                    upstream,
                    from.map_or("none", TaskState::as_str),
                    to.as_str(),
                ])
                .inc_by(n);
        });
    }
}

/// The request id as the proxy's logs write it (`request_id=N`).
fn format_id(id: u64) -> String {
    id.to_string()
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

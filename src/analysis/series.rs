//! The analysis thread's metric series, resolved once per upstream: a
//! label lookup hashes its values, too dear per frame. Every series of a
//! closed label set exists from the start, at zero, so dashboards and
//! `increase()`-based alerts see it before its first increment.

use prometheus::{Histogram, IntCounter, IntGauge};

use crate::a2a::model::{Binding, EventKind, TaskState};
use crate::engine::SkipReason;
use crate::findings::{Kind, Severity};
use crate::lifecycle::Outcome;
use crate::report::Metrics;

/// Series indexed by the `ALL` order of their label enums.
pub(crate) struct AnalysisSeries {
    /// `[kind][severity]`.
    violations: Vec<[IntCounter; 2]>,
    skipped: [IntCounter; SkipReason::ALL.len()],
    long_ids: IntCounter,
    tracked: Vec<IntGauge>,
    durations: Vec<Histogram>,
    /// `[binding][event]`.
    events: [[IntCounter; EventKind::ALL.len()]; Binding::ALL.len()],
    first_event: Histogram,
}

impl AnalysisSeries {
    /// Creates (at zero) and resolves every series of `upstream`.
    pub(crate) fn new(m: &Metrics, upstream: &str) -> AnalysisSeries {
        AnalysisSeries {
            violations: Kind::ALL
                .iter()
                .map(|k| {
                    Severity::ALL.map(|s| m.violations_total.with(upstream, k.as_str(), s.as_str()))
                })
                .collect(),
            skipped: SkipReason::ALL.map(|r| m.analysis_skipped_total.with(upstream, r.as_str())),
            long_ids: m.ids_over_limit_total.with(upstream),
            tracked: TaskState::ALL
                .iter()
                .map(|s| m.tasks_tracked.with(upstream, s.as_str()))
                .collect(),
            durations: Outcome::ALL
                .iter()
                .map(|o| m.stream_duration_seconds.with(upstream, o.as_str()))
                .collect(),
            events: Binding::ALL.map(|b| {
                EventKind::ALL.map(|e| m.stream_events_total.with(upstream, b.as_str(), e.as_str()))
            }),
            first_event: m.time_to_first_event_seconds.with(upstream),
        }
    }

    pub(crate) fn violation(&self, kind: Kind, severity: Severity) -> &IntCounter {
        &self.violations[position(Kind::ALL, kind)][position(&Severity::ALL, severity)]
    }

    pub(crate) fn skipped(&self, reason: SkipReason) -> &IntCounter {
        &self.skipped[position(&SkipReason::ALL, reason)]
    }

    /// `a2a_ids_over_limit_total` of the upstream.
    pub(crate) fn long_ids(&self) -> &IntCounter {
        &self.long_ids
    }

    /// Gauges in `TaskState::ALL` order.
    pub(crate) fn tracked(&self) -> &[IntGauge] {
        &self.tracked
    }

    pub(crate) fn duration(&self, outcome: Outcome) -> &Histogram {
        &self.durations[position(Outcome::ALL, outcome)]
    }

    /// Counters of `binding` in `EventKind::ALL` order.
    pub(crate) fn events(&self, binding: Binding) -> &[IntCounter] {
        &self.events[position(&Binding::ALL, binding)]
    }

    pub(crate) fn first_event(&self) -> &Histogram {
        &self.first_event
    }
}

/// Where `x` stands in `all` (every label enum lists each value once).
fn position<T: PartialEq + Copy>(all: &[T], x: T) -> usize {
    all.iter().position(|v| *v == x).unwrap_or(0)
}

//! One type per labelled metric family: its label names, in one place, and
//! a method taking the label values by name in that order, so no caller
//! writes a positional `with_label_values(&[...])` of its own.

use prometheus::{Histogram, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec};

/// Declares a family: `Name(Vec => Series) { label, ... }` makes
/// `Name::LABELS` (the names registered, docs/metrics.md's order) and
/// `Name::with(label, ...)`, the series of those values.
macro_rules! family {
    ($(#[$doc:meta])* $name:ident($vec:ty => $series:ty) { $($label:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name(pub(super) $vec);

        impl $name {
            /// The label names, in the order `with` takes their values.
            pub const LABELS: &'static [&'static str] = &[$(stringify!($label)),+];

            /// The series of these label values (created at zero if new).
            pub fn with(&self, $($label: &str),+) -> $series {
                self.0.with_label_values(&[$($label),+])
            }

            /// Removes the series of these label values, if there is one.
            pub fn remove(&self, $($label: &str),+) {
                let _ = self.0.remove_label_values(&[$($label),+]);
            }
        }
    };
}

family! {
    /// `a2a_requests_total`; `code` is the status class or `error`.
    Requests(IntCounterVec => IntCounter) { upstream, binding, method, code }
}
family! {
    /// `a2a_request_duration_seconds`.
    RequestDurations(HistogramVec => Histogram) { upstream, binding, method }
}
family! {
    /// `a2a_proxy_overhead_seconds`, `a2a_time_to_first_event_seconds`.
    PerUpstreamHistogram(HistogramVec => Histogram) { upstream }
}
family! {
    /// `a2a_stream_events_total`.
    StreamEvents(IntCounterVec => IntCounter) { upstream, binding, event }
}
family! {
    /// `a2a_streams_active`, `a2a_upstream_up`.
    PerUpstreamGauge(IntGaugeVec => IntGauge) { upstream }
}
family! {
    /// `a2a_stream_duration_seconds`.
    StreamDurations(HistogramVec => Histogram) { upstream, outcome }
}
family! {
    /// `a2a_task_transitions_total`; `from` is `none` for a task's first state.
    Transitions(IntCounterVec => IntCounter) { upstream, from, to }
}
family! {
    /// `a2a_tasks_tracked`.
    TasksTracked(IntGaugeVec => IntGauge) { upstream, state }
}
family! {
    /// `a2a_violations_total`.
    Violations(IntCounterVec => IntCounter) { upstream, kind, severity }
}
family! {
    /// `a2a_upstream_errors_total`, `a2a_analysis_skipped_total`.
    ByReason(IntCounterVec => IntCounter) { upstream, reason }
}
family! {
    /// `a2a_ids_over_limit_total`, `a2a_agent_card_bypass_total`.
    PerUpstreamCounter(IntCounterVec => IntCounter) { upstream }
}
family! {
    /// `a2a_push_deliveries_total`.
    PushDeliveries(IntCounterVec => IntCounter) { upstream, outcome }
}
family! {
    /// `a2a_connections_closed_total`.
    ConnectionsClosed(IntCounterVec => IntCounter) { reason }
}
family! {
    /// `a2a_accept_errors_total`; `listener` is `proxy` or `admin`.
    AcceptErrors(IntCounterVec => IntCounter) { listener }
}
family! {
    /// `a2a_registry_facts_total`; `direction` is `published` or `received`.
    RegistryFacts(IntCounterVec => IntCounter) { direction }
}
family! {
    /// `a2a_registry_errors_total`.
    RegistryErrors(IntCounterVec => IntCounter) { op }
}
family! {
    /// `a2a_config_reloads_total`; `result` is `ok` or `error`.
    ConfigReloads(IntCounterVec => IntCounter) { result }
}
family! {
    /// `a2a_build_info`.
    BuildInfo(IntGaugeVec => IntGauge) { version, commit }
}

//! The push relay's metrics (`[push]`): deliveries by outcome,
//! registrations held, configs the relay could not take, deliveries whose
//! order was not certain.

use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};

use super::families::{ByReason, PerUpstreamCounter, PerUpstreamGauge, PushDeliveries};

/// `a2a_push_deliveries_total` outcomes, in the order the relay indexes them.
pub const DELIVERY_OUTCOMES: [&str; 4] = [
    "delivered",
    "webhook_error",
    "webhook_unreachable",
    "unknown_token",
];

/// Why a push config passed to the agent unrelayed
/// (`a2a_push_unrelayed_total{reason}`).
pub const UNRELAYED_REASONS: [&str; 4] = ["table_full", "too_large", "bad_url", "encoded"];

/// The push relay's families.
#[derive(Clone)]
pub struct PushMetrics {
    /// `a2a_push_deliveries_total{upstream,outcome}`.
    pub deliveries_total: PushDeliveries,
    /// `a2a_push_registrations{upstream}`.
    pub registrations: PerUpstreamGauge,
    /// `a2a_push_unrelayed_total{upstream,reason}`: push configs passed to
    /// the agent with the caller's own URL (its deliveries go past the
    /// proxy, unseen).
    pub unrelayed_total: ByReason,
    /// `a2a_push_unordered_total{upstream}`: deliveries of a state whose
    /// order against the task's terminal state was not certain (no
    /// timestamps): counted, not accused, kept out of the registry.
    pub unordered_total: PerUpstreamCounter,
}

impl PushMetrics {
    /// Registers the families on `registry`.
    pub(super) fn register(registry: &Registry) -> Result<PushMetrics, prometheus::Error> {
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels)?;
            registry.register(Box::new(c.clone()))?;
            Ok::<_, prometheus::Error>(c)
        };
        let gauge = IntGaugeVec::new(
            Opts::new(
                "a2a_push_registrations",
                "Push configs the relay holds (token to the caller's webhook).",
            ),
            PerUpstreamGauge::LABELS,
        )?;
        registry.register(Box::new(gauge.clone()))?;
        Ok(PushMetrics {
            deliveries_total: PushDeliveries(counter(
                "a2a_push_deliveries_total",
                "Push deliveries through the relay, by outcome (delivered, webhook_error, webhook_unreachable, unknown_token).",
                PushDeliveries::LABELS,
            )?),
            registrations: PerUpstreamGauge(gauge),
            unrelayed_total: ByReason(counter(
                "a2a_push_unrelayed_total",
                "Push configs passed to the agent with the caller's own URL, by reason (table_full, too_large, bad_url, encoded).",
                ByReason::LABELS,
            )?),
            unordered_total: PerUpstreamCounter(counter(
                "a2a_push_unordered_total",
                "Push deliveries whose order against the task's terminal state was not certain: counted, not judged for it.",
                PerUpstreamCounter::LABELS,
            )?),
        })
    }

    /// Every series of `upstream` at zero.
    pub fn touch(&self, upstream: &str) {
        for o in DELIVERY_OUTCOMES {
            self.deliveries_total.with(upstream, o);
        }
        for r in UNRELAYED_REASONS {
            self.unrelayed_total.with(upstream, r);
        }
        self.registrations.with(upstream);
        self.unordered_total.with(upstream);
    }
}

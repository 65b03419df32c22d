//! What every exchange with one upstream shares: the metrics, the
//! upstream's label, the access log, and the request series looked up once
//! per label slot.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus::{Histogram, IntCounter};

use crate::proxy::inspect::{ExchangeLabels, LABEL_SLOTS};
use crate::report::access::AccessLog;
use crate::report::Metrics;

/// What every exchange shares: metrics and the upstream label.
pub struct Shared {
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// The upstream's label (config `name`).
    pub upstream: String,
    /// The response idle timeout (`proxy.stream_idle_timeout`).
    pub idle_timeout: Duration,
    /// `a2a_proxy_overhead_seconds{upstream}`, looked up once.
    pub overhead: Histogram,
    /// The access log, when on.
    pub access: Option<AccessLog>,
    /// Series per label slot, looked up on first use (label lookups hash
    /// every value: too slow for each request).
    series: [OnceLock<Series>; LABEL_SLOTS],
}

/// The request series of one label pair.
struct Series {
    counts: [OnceLock<IntCounter>; CODES.len()],
    duration: Histogram,
}

/// The `code` label values, in the order of `Shared::default_counts`.
const CODES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "error"];

impl Shared {
    /// State shared by the exchanges with `upstream`.
    pub fn new(
        metrics: Arc<Metrics>,
        upstream: String,
        idle_timeout: Duration,
        access: Option<AccessLog>,
    ) -> Shared {
        let overhead = metrics.proxy_overhead_seconds.with(upstream.as_str());
        Shared {
            metrics,
            upstream,
            idle_timeout,
            overhead,
            access,
            series: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Counts one exchange with `labels` and status class `code`.
    pub(super) fn count(&self, labels: ExchangeLabels, code: &str, seconds: f64) {
        let m = &self.metrics;
        let upstream = self.upstream.as_str();
        let count = || {
            m.requests_total
                .with(upstream, labels.binding, labels.method, code)
        };
        let duration = || {
            m.request_duration_seconds
                .with(upstream, labels.binding, labels.method)
        };
        let Some(cache) = self.series.get(usize::from(labels.slot)) else {
            // Not cacheable: look the series up each time.
            count().inc();
            duration().observe(seconds);
            return;
        };
        let series = cache.get_or_init(|| Series {
            counts: Default::default(),
            duration: duration(),
        });
        match CODES.iter().position(|c| *c == code) {
            Some(i) => series.counts[i].get_or_init(count).inc(),
            None => count().inc(),
        }
        series.duration.observe(seconds);
    }
}

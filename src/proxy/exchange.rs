//! One exchange's context: its id, clock, observer, and the one place where
//! its end is counted (metrics, logs) whatever way it ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::StatusCode;
use prometheus::{Histogram, IntCounter};

use super::error::{ProxyError, UpstreamReason};
use super::inspect::{ExchangeLabels, ExchangeObserver, LABEL_SLOTS, RUN_MAX};
use super::tee::{BodyEnd, BodyObserver};
use crate::report::metrics::status_class;
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
    pub fn new(metrics: Arc<Metrics>, upstream: String, idle_timeout: Duration) -> Shared {
        let overhead = metrics
            .proxy_overhead_seconds
            .with_label_values(&[upstream.as_str()]);
        Shared {
            metrics,
            upstream,
            idle_timeout,
            overhead,
            series: Default::default(),
        }
    }

    /// Counts one exchange with `labels` and status class `code`.
    fn count(&self, labels: ExchangeLabels, code: &str, seconds: f64) {
        let m = &self.metrics;
        let values = [self.upstream.as_str(), labels.binding, labels.method, code];
        let count = || m.requests_total.with_label_values(&values);
        let duration = || m.request_duration_seconds.with_label_values(&values[..3]);
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

/// One request/response pair passing through.
pub struct Exchange {
    /// The proxy's id for this exchange (also in logs).
    pub id: u64,
    /// When the request arrived.
    pub start: Instant,
    /// The inspector's observer, if any.
    pub observer: Option<Arc<dyn ExchangeObserver>>,
    /// Shared state.
    pub shared: Arc<Shared>,
    /// The caller's request body broke (the caller went away mid-upload):
    /// a failed upstream send is then not the upstream's fault.
    pub request_failed: AtomicBool,
    /// The response was cut for silence (an idle timeout, not a reset).
    pub idle_fired: AtomicBool,
    /// Whether the exchange was counted; one dropped uncounted (the caller
    /// went away before the response head) is counted when dropped.
    counted: AtomicBool,
}

// === impl Exchange ===

impl Exchange {
    /// A new exchange that arrived at `start`.
    pub fn new(
        id: u64,
        start: Instant,
        observer: Option<Arc<dyn ExchangeObserver>>,
        shared: Arc<Shared>,
    ) -> Exchange {
        Exchange {
            id,
            start,
            observer,
            shared,
            request_failed: AtomicBool::new(false),
            idle_fired: AtomicBool::new(false),
            counted: AtomicBool::new(false),
        }
    }

    fn labels(&self) -> ExchangeLabels {
        self.observer
            .as_ref()
            .map(|o| o.labels())
            .unwrap_or_default()
    }

    /// Counts a finished exchange under `code`.
    pub fn count(&self, code: &str) {
        if self.counted.swap(true, Ordering::Relaxed) {
            return;
        }
        let seconds = self.start.elapsed().as_secs_f64();
        self.shared.count(self.labels(), code, seconds);
    }

    /// Counts an upstream failure of `reason`.
    pub fn upstream_error(&self, reason: UpstreamReason) {
        self.shared
            .metrics
            .upstream_errors_total
            .with_label_values(&[self.shared.upstream.as_str(), reason.as_str()])
            .inc();
    }

    /// Accounts for an exchange the proxy answered itself (413, 502, 504).
    pub fn failed(&self, err: &ProxyError) {
        match err.upstream_reason() {
            Some(reason) => {
                tracing::warn!(request_id = self.id, reason = reason.as_str(), error = %err, "upstream failed");
                self.upstream_error(reason);
                self.count("error");
            }
            None => {
                tracing::info!(request_id = self.id, error = %err, "request refused");
                self.count(status_class(err.status()));
            }
        }
        if let Some(o) = &self.observer {
            o.upstream_failed(err);
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.counted.load(Ordering::Relaxed) {
            tracing::debug!(request_id = self.id, "caller went away before the response");
            self.count("error");
        }
    }
}

/// Tees the request body to the observer.
pub struct RequestTap(pub Arc<Exchange>);

impl BodyObserver for RequestTap {
    fn data(&mut self, chunk: &Bytes) {
        if let Some(o) = &self.0.observer {
            o.request_data(chunk);
        }
    }

    fn end(&mut self, end: BodyEnd) {
        if end == BodyEnd::Error {
            self.0.request_failed.store(true, Ordering::Relaxed);
        }
        if let Some(o) = &self.0.observer {
            o.request_end(end);
        }
    }
}

/// Tees the response body to the observer, a run of chunks at a time, and
/// counts the exchange at its end.
pub struct ResponseTap {
    exchange: Arc<Exchange>,
    status: StatusCode,
    /// Chunks seen since the last hand-over (this side owns them: no lock
    /// per chunk).
    run: Vec<Bytes>,
}

impl ResponseTap {
    /// For a response with `status`, whose head just arrived.
    pub fn new(exchange: Arc<Exchange>, status: StatusCode) -> ResponseTap {
        ResponseTap {
            exchange,
            status,
            run: Vec::new(),
        }
    }

    fn hand_over(&mut self) {
        if let (Some(o), false) = (&self.exchange.observer, self.run.is_empty()) {
            o.response_data(&mut self.run);
            self.run.clear();
        }
    }
}

impl BodyObserver for ResponseTap {
    fn data(&mut self, chunk: &Bytes) {
        if self.exchange.observer.is_some() {
            if self.run.capacity() == 0 {
                // Once, at its full length: growing it costs more.
                self.run.reserve_exact(RUN_MAX);
            }
            self.run.push(chunk.clone());
            if self.run.len() >= RUN_MAX {
                self.hand_over();
            }
        }
    }

    fn pause(&mut self) {
        self.hand_over();
    }

    fn end(&mut self, end: BodyEnd) {
        let ex = &self.exchange;
        match end {
            BodyEnd::Complete => {}
            BodyEnd::Dropped => {
                tracing::debug!(
                    request_id = ex.id,
                    "caller went away before the response ended"
                );
            }
            BodyEnd::Error => {
                let reason = if ex.idle_fired.load(Ordering::Relaxed) {
                    UpstreamReason::Timeout
                } else {
                    UpstreamReason::Reset
                };
                tracing::warn!(
                    request_id = ex.id,
                    reason = reason.as_str(),
                    "upstream response body failed"
                );
                ex.upstream_error(reason);
            }
        }
        ex.count(status_class(self.status));
        if let Some(o) = &ex.observer {
            // The last run goes with the end, in one hand-over.
            o.response_end(&mut self.run, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What the observer was handed: the bytes of each run, and the ends.
    #[derive(Default)]
    struct Runs(Mutex<(Vec<Vec<u8>>, Vec<BodyEnd>)>);

    impl ExchangeObserver for Runs {
        fn request_data(&self, _: &Bytes) {}
        fn request_end(&self, _: BodyEnd) {}
        fn response_head(&self, _: &http::response::Parts) {}
        fn response_data(&self, chunks: &mut Vec<Bytes>) {
            let run = chunks.drain(..).flat_map(|c| c.to_vec()).collect();
            self.0.lock().expect("lock").0.push(run);
        }
        fn response_end(&self, chunks: &mut Vec<Bytes>, end: BodyEnd) {
            let mut runs = self.0.lock().expect("lock");
            runs.0
                .push(chunks.drain(..).flat_map(|c| c.to_vec()).collect());
            runs.1.push(end);
        }
        fn upstream_failed(&self, _: &ProxyError) {}
    }

    #[test]
    fn response_chunks_reach_the_observer_a_run_at_a_time_and_with_the_end() {
        let runs = Arc::new(Runs::default());
        let metrics = Arc::new(Metrics::new().expect("metrics"));
        let shared = Arc::new(Shared::new(metrics, "up".into(), Duration::from_secs(1)));
        let observer: Arc<dyn ExchangeObserver> = runs.clone();
        let exchange = Arc::new(Exchange::new(1, Instant::now(), Some(observer), shared));
        let mut tap = ResponseTap::new(exchange, StatusCode::OK);
        let byte = |i: usize| Bytes::from(vec![i as u8]);
        let handed = || runs.0.lock().expect("lock").0.clone();

        // A read that brought more than a run: full runs go at once...
        (0..RUN_MAX * 2 + 3).for_each(|i| tap.data(&byte(i)));
        assert_eq!(handed().len(), 2);
        assert!(handed().iter().all(|r| r.len() == RUN_MAX));
        // ...the rest when the body pauses; a pause with nothing new hands
        // over nothing.
        tap.pause();
        tap.pause();
        assert_eq!(handed().len(), 3);
        assert_eq!(handed()[2].len(), 3);
        // What came after the last pause goes with the end.
        tap.data(&byte(100));
        tap.end(BodyEnd::Complete);
        let (all, ends) = runs.0.lock().expect("lock").clone();
        assert_eq!(all.len(), 4);
        assert_eq!(all[3], [100]);
        assert_eq!(ends, [BodyEnd::Complete]);
        let bytes: Vec<u8> = all.concat();
        let sent: Vec<u8> = (0..RUN_MAX * 2 + 3).map(|i| i as u8).chain([100]).collect();
        assert_eq!(bytes, sent, "every chunk once, in order");
    }
}

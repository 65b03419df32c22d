//! One exchange's context: its id, clock, observer, and the one place where
//! its end is counted (metrics, logs) whatever way it ended.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::StatusCode;

use super::activity::Activity;
use super::error::{ProxyError, UpstreamReason};
use super::inspect::{ExchangeLabels, ExchangeObserver, RUN_BYTES};
use super::tee::{BodyEnd, BodyObserver};
use crate::report::access::{AccessLine, CallerIds};
use crate::report::metrics::status_class;
pub use shared::Shared;

/// One request/response pair passing through the proxy (the A2A view of
/// it, once classified, is `a2a::model::Exchange`).
pub struct InFlight {
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
    /// The caller connection's activity (its deadlines watch it).
    pub activity: Option<Arc<Activity>>,
    /// What the access log reads of the request (only when it is on).
    caller: Option<Box<CallerIds>>,
    /// The status the caller got (0: none yet).
    status: AtomicU16,
    /// Body bytes from the caller, and to it, once each body ended.
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

// === impl InFlight ===

impl InFlight {
    /// A new exchange that arrived at `start`.
    pub fn new(
        id: u64,
        start: Instant,
        observer: Option<Arc<dyn ExchangeObserver>>,
        shared: Arc<Shared>,
    ) -> InFlight {
        InFlight {
            id,
            start,
            observer,
            shared,
            request_failed: AtomicBool::new(false),
            idle_fired: AtomicBool::new(false),
            counted: AtomicBool::new(false),
            activity: None,
            caller: None,
            status: AtomicU16::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
        }
    }

    /// Keeps what the access log needs of the request head, when it is on.
    pub fn with_caller(mut self, head: &http::request::Parts) -> InFlight {
        if self.shared.access.is_some() {
            self.caller = Some(Box::new(CallerIds::read(
                &head.method,
                &head.uri,
                &head.headers,
            )));
        }
        self
    }

    /// This exchange is in flight on a connection with `activity`, until
    /// it is dropped.
    pub fn on_connection(mut self, activity: Option<Arc<Activity>>) -> InFlight {
        if let Some(a) = &activity {
            a.begin();
        }
        self.activity = activity;
        self
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
        let labels = self.labels();
        self.shared.count(labels, code, seconds);
        if let (Some(access), Some(caller)) = (&self.shared.access, &self.caller) {
            let line = AccessLine {
                log: "access",
                ts: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
                request_id: self.id,
                upstream: self.shared.upstream.clone(),
                trace_id: caller.trace_id.clone(),
                x_request_id: caller.x_request_id.clone(),
                http_method: caller.http_method.clone(),
                path: caller.path.clone(),
                binding: labels.binding,
                method: labels.method,
                status: Some(self.status.load(Ordering::Relaxed)).filter(|s| *s != 0),
                duration_ms: seconds * 1000.0,
                bytes_in: self.bytes_in.load(Ordering::Relaxed),
                bytes_out: self.bytes_out.load(Ordering::Relaxed),
                task_id: None,
                findings: None,
            };
            let unjudged = match &self.observer {
                Some(o) => o.access(line),
                None => Some(line),
            };
            if let Some(line) = unjudged {
                access.write(line.to_json());
            }
        }
    }

    /// Counts an upstream failure of `reason`.
    pub fn upstream_error(&self, reason: UpstreamReason) {
        self.shared
            .metrics
            .upstream_errors_total
            .with(self.shared.upstream.as_str(), reason.as_str())
            .inc();
    }

    /// Accounts for an exchange the proxy answered itself (413, 502, 504).
    pub fn failed(&self, err: &ProxyError) {
        self.status.store(err.status().as_u16(), Ordering::Relaxed);
        match err.upstream_reason() {
            Some(reason) => {
                tracing::warn!(
                    upstream = %self.shared.upstream,
                    request_id = self.id,
                    reason = reason.as_str(),
                    error = %err,
                    "upstream failed"
                );
                self.upstream_error(reason);
                self.count("error");
            }
            None => {
                tracing::info!(
                    upstream = %self.shared.upstream,
                    request_id = self.id,
                    error = %err,
                    "request refused"
                );
                self.count(status_class(err.status()));
            }
        }
        if let Some(o) = &self.observer {
            o.upstream_failed(err);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.counted.load(Ordering::Relaxed) {
            tracing::debug!(request_id = self.id, "caller went away before the response");
            self.count("error");
        }
        if let Some(a) = &self.activity {
            a.end();
        }
    }
}

/// Tees the request body to the observer.
pub struct RequestTap {
    exchange: Arc<InFlight>,
    bytes: u64,
}

impl RequestTap {
    /// For the request of `exchange`.
    pub fn new(exchange: Arc<InFlight>) -> RequestTap {
        RequestTap { exchange, bytes: 0 }
    }
}

impl BodyObserver for RequestTap {
    fn data(&mut self, chunk: &Bytes) {
        self.bytes += chunk.len() as u64;
        if let Some(o) = &self.exchange.observer {
            o.request_data(chunk);
        }
    }

    fn end(&mut self, end: BodyEnd) {
        let ex = &self.exchange;
        ex.bytes_in.store(self.bytes, Ordering::Relaxed);
        if end == BodyEnd::Error {
            ex.request_failed.store(true, Ordering::Relaxed);
        }
        if let Some(o) = &ex.observer {
            o.request_end(end);
        }
    }
}

/// Tees the response body to the observer, a run of chunks at a time, and
/// counts the exchange at its end.
pub struct ResponseTap {
    exchange: Arc<InFlight>,
    status: StatusCode,
    /// The one chunk seen since the last hand-over, held rather than
    /// copied: what one upstream read brought comes as one chunk
    /// (`UpstreamResponseBody` gathers it), handed over as it is at the
    /// pause or the end, in the same poll; its bytes are then copied once,
    /// into the queue. Held on this thread only. `None` while `run` holds
    /// bytes.
    held: Option<Bytes>,
    /// The bytes of the chunks seen since the last hand-over, copied (this
    /// side owns them: no lock per chunk, and no reference to the read
    /// buffer a chunk shares, whose count two threads would touch). Empty
    /// and unallocated until the first chunk; then a buffer of `RUN_BYTES`
    /// from this thread's spares, given back when the response is done.
    run: Vec<u8>,
    /// Body bytes passed to the caller.
    bytes: u64,
}

/// Most run buffers a serving thread keeps for its next responses (one
/// per response it has open at once, up to this).
const SPARE_RUNS: usize = 64;

thread_local! {
    /// Run buffers of finished responses, for the next ones on this thread:
    /// a run never reallocates, and its buffer is allocated once per
    /// thread rather than once per response.
    static SPARES: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A cleared run buffer of `RUN_BYTES`: a spare, or a new one.
fn spare_run() -> Vec<u8> {
    SPARES
        .with_borrow_mut(Vec::pop)
        .unwrap_or_else(|| Vec::with_capacity(RUN_BYTES))
}

/// Keeps `run` for a later response on this thread, if there is room.
fn keep_run(mut run: Vec<u8>) {
    if run.capacity() == RUN_BYTES {
        run.clear();
        // At thread exit the spares are already gone: the buffer is freed.
        let _ = SPARES.try_with(|spares| {
            let mut spares = spares.borrow_mut();
            if spares.len() < SPARE_RUNS {
                spares.push(run);
            }
        });
    }
}

impl ResponseTap {
    /// For a response with `status`, whose head just arrived.
    pub fn new(exchange: Arc<InFlight>, status: StatusCode) -> ResponseTap {
        exchange.status.store(status.as_u16(), Ordering::Relaxed);
        ResponseTap {
            exchange,
            status,
            held: None,
            run: Vec::new(),
            bytes: 0,
        }
    }

    fn hand_over(&mut self) {
        let Some(o) = &self.exchange.observer else {
            return;
        };
        if let Some(chunk) = self.held.take() {
            o.response_data(&chunk);
        } else if !self.run.is_empty() {
            o.response_data(&self.run);
            self.run.clear();
        }
    }
}

impl BodyObserver for ResponseTap {
    fn polled(&mut self) {
        if let Some(a) = &self.exchange.activity {
            a.taken();
        }
    }

    fn data(&mut self, chunk: &Bytes) {
        self.bytes += chunk.len() as u64;
        if let Some(a) = &self.exchange.activity {
            a.handed();
        }
        if self.exchange.observer.is_none() {
            return;
        }
        if self.held.is_none() && self.run.is_empty() && chunk.len() < RUN_BYTES {
            self.held = Some(chunk.clone());
            return;
        }
        if let Some(held) = self.held.take() {
            // A second chunk before a pause: both are gathered.
            if self.run.capacity() == 0 {
                self.run = spare_run();
            }
            self.run.extend_from_slice(&held);
        }
        if self.run.len() + chunk.len() > RUN_BYTES {
            self.hand_over();
        }
        if chunk.len() >= RUN_BYTES {
            // A run's worth alone: handed over as it is, not gathered.
            if let Some(o) = &self.exchange.observer {
                o.response_data(chunk);
            }
        } else {
            if self.run.capacity() == 0 {
                self.run = spare_run();
            }
            self.run.extend_from_slice(chunk);
        }
    }

    fn pause(&mut self) {
        self.hand_over();
    }

    fn trailers(&mut self, trailers: &http::HeaderMap) {
        if let Some(o) = &self.exchange.observer {
            o.response_trailers(trailers);
        }
    }

    fn end(&mut self, end: BodyEnd) {
        let ex = &self.exchange;
        ex.bytes_out.store(self.bytes, Ordering::Relaxed);
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
                    upstream = %ex.shared.upstream,
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
            match self.held.take() {
                Some(chunk) => o.response_end(&chunk, end),
                None => {
                    o.response_end(&self.run, end);
                    self.run.clear();
                }
            }
        }
    }
}

impl Drop for ResponseTap {
    fn drop(&mut self) {
        keep_run(std::mem::take(&mut self.run));
    }
}

mod shared;
#[cfg(test)]
mod tests;

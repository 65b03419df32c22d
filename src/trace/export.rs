//! The span exporter: a bounded queue to one thread that batches spans and
//! POSTs them as OTLP/HTTP protobuf (`/v1/traces`) with hyper, the proxy's
//! own HTTP stack. Nothing on the serving or analysis path waits for it: a
//! full queue drops the span, a failed export drops its batch; both are
//! counted in `a2a_trace_spans_dropped_total`, and failures are logged at
//! most once every ten seconds. At most 64 KiB of a collector's answer is
//! read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use tokio::sync::mpsc::{self, error::TrySendError, Receiver, Sender};

use super::encode::{len_delimited, Out};
use super::span::{Ended, OpenSpan};
use crate::pace::Every;
use crate::tls::TlsError as ClientError;

/// Where and how spans are exported.
#[derive(Debug, Clone)]
pub struct ExportConfig {
    /// The full URL spans are POSTed to (`.../v1/traces`).
    pub url: http::Uri,
    pub service_name: String,
    /// Spans waiting for export, at most.
    pub queue_spans: usize,
    /// Bytes of encoded spans waiting for export, at most.
    pub queue_bytes: usize,
    /// Spans per request, at most.
    pub batch_spans: usize,
    /// A batch goes out at least this often while spans wait.
    pub batch_delay: Duration,
    pub timeout: Duration,
}

/// Gathers finished spans on the analysis thread, already encoded, and
/// hands them to the exporter thread a batch at a time (a hand-over per
/// span would wake the exporter for each).
pub struct Spans {
    tx: Sender<Batch>,
    /// Bytes handed over and not yet exported (the exporter takes them
    /// off), bounded by `queue_bytes`.
    queued: Arc<AtomicUsize>,
    queue_bytes: usize,
    dropped: prometheus::IntCounter,
    pending: Batch,
    /// One span's encoding, reused.
    scratch: Vec<u8>,
    batch: usize,
    delay: Duration,
    since: Instant,
}

/// A batch is handed over once it holds this many bytes, whatever its
/// count of spans.
const BATCH_BYTES: usize = 1 << 20;

/// Encoded spans: `ScopeSpans.spans` fields, one after another.
#[derive(Debug, Default)]
pub struct Batch {
    bytes: Vec<u8>,
    spans: usize,
}

impl Spans {
    /// Another gatherer for the same exporter and bounds (one for each
    /// analysis thread), with a batch of its own.
    pub fn sibling(&self) -> Spans {
        Spans {
            tx: self.tx.clone(),
            queued: self.queued.clone(),
            queue_bytes: self.queue_bytes,
            dropped: self.dropped.clone(),
            pending: Batch::default(),
            scratch: Vec::new(),
            batch: self.batch,
            delay: self.delay,
            since: Instant::now(),
        }
    }

    /// Encodes the finished `span` into the batch; a full batch is handed over.
    pub fn push(&mut self, span: &OpenSpan, ended: &Ended<'_>) {
        if self.pending.spans == 0 {
            self.since = Instant::now();
        }
        self.scratch.clear();
        span.encode(ended, &mut self.scratch);
        Out(&mut self.pending.bytes).bytes(2, &self.scratch);
        self.pending.spans += 1;
        if self.pending.spans >= self.batch || self.pending.bytes.len() >= BATCH_BYTES {
            self.hand_over();
        }
    }

    /// Hands the batch over when its oldest span has waited `batch_delay`.
    pub fn hand_over_due(&mut self, now: Instant) {
        if self.pending.spans > 0 && now.saturating_duration_since(self.since) >= self.delay {
            self.hand_over();
        }
    }

    /// Hands the batch over; a full queue (by batches or by bytes) drops
    /// it (counted).
    fn hand_over(&mut self) {
        let batch = std::mem::take(&mut self.pending);
        let n = batch.spans as u64;
        let size = batch.bytes.len();
        if self.queued.load(Ordering::Acquire).saturating_add(size) > self.queue_bytes {
            self.dropped.inc_by(n);
            return;
        }
        self.queued.fetch_add(size, Ordering::AcqRel);
        if let Err(TrySendError::Full(_) | TrySendError::Closed(_)) = self.tx.try_send(batch) {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            self.dropped.inc_by(n);
        }
    }
}

impl Drop for Spans {
    /// What is gathered is handed over when the analysis thread ends.
    fn drop(&mut self) {
        if self.pending.spans > 0 {
            self.hand_over();
        }
    }
}

/// The exporter thread; `finish` flushes what is queued and joins it.
pub struct Exporter {
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Starts the thread. Spans stop coming when every [`Spans`] is dropped;
    /// the thread then exports what is left and ends.
    pub fn start(
        cfg: ExportConfig,
        dropped: prometheus::IntCounter,
    ) -> std::io::Result<(Spans, Exporter)> {
        // The queue holds batches: `queue_spans` spans in all.
        let batches = (cfg.queue_spans / cfg.batch_spans.max(1)).max(1);
        let (tx, rx) = mpsc::channel(batches);
        let counter = dropped.clone();
        let queued = Arc::new(AtomicUsize::new(0));
        let exported = queued.clone();
        let spans = Spans {
            tx,
            queued,
            queue_bytes: cfg.queue_bytes,
            dropped,
            pending: Batch::default(),
            scratch: Vec::new(),
            batch: cfg.batch_spans.max(1),
            delay: cfg.batch_delay,
            since: Instant::now(),
        };
        let thread = std::thread::Builder::new()
            .name("a2a-tap-traces".into())
            .spawn(move || run(cfg, rx, &counter, &exported))?;
        Ok((
            spans,
            Exporter {
                thread: Some(thread),
            },
        ))
    }

    /// Waits (at most `within`) for the queued spans to be exported.
    pub fn finish(mut self, within: Duration) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let deadline = Instant::now() + within;
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if thread.is_finished() {
            let _ = thread.join();
        } else {
            tracing::warn!(
                "span export did not finish in time (the grace period; none after a second \
                 signal): the rest is dropped"
            );
        }
    }
}

fn run(
    cfg: ExportConfig,
    mut rx: Receiver<Batch>,
    dropped: &prometheus::IntCounter,
    queued: &AtomicUsize,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "span export cannot start: spans are dropped");
            while let Some(batch) = rx.blocking_recv() {
                queued.fetch_sub(batch.bytes.len(), Ordering::AcqRel);
                dropped.inc_by(batch.spans as u64);
            }
            return;
        }
    };
    // The whole loop runs on the runtime, so the client's connections are
    // driven between batches too (one the exporter gave up on is closed
    // at once, not at the next batch).
    runtime.block_on(export(cfg, rx, dropped, queued));
}

async fn export(
    cfg: ExportConfig,
    mut rx: Receiver<Batch>,
    dropped: &prometheus::IntCounter,
    queued: &AtomicUsize,
) {
    let client = match connector(&cfg.url) {
        Ok(c) => Client::builder(TokioExecutor::new()).build::<_, Full<Bytes>>(c),
        Err(e) => {
            tracing::error!(error = %e, "span export cannot start: spans are dropped");
            while let Some(batch) = rx.recv().await {
                queued.fetch_sub(batch.bytes.len(), Ordering::AcqRel);
                dropped.inc_by(batch.spans as u64);
            }
            return;
        }
    };
    let (resource, scope) = envelope(&cfg.service_name);
    let mut failures = Failures::default();
    // A batch as the analysis thread gathered it (full, or waited
    // `batch_delay`), until every sender is gone.
    while let Some(mut batch) = rx.recv().await {
        // Whatever else is already waiting goes in the same request.
        while batch.spans < cfg.batch_spans {
            match rx.try_recv() {
                Ok(more) => {
                    batch.bytes.extend_from_slice(&more.bytes);
                    batch.spans += more.spans;
                }
                Err(_) => break,
            }
        }
        let n = batch.spans as u64;
        // Off the queue's byte count: what is sent now is held once, here.
        queued.fetch_sub(batch.bytes.len(), Ordering::AcqRel);
        let body = Bytes::from(request(&resource, &scope, &batch.bytes));
        if let Err(why) = post(&client, &cfg, body).await {
            dropped.inc_by(n);
            failures.note(&cfg.url, n, &why);
        }
    }
}

type OtlpClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

fn connector(url: &http::Uri) -> Result<hyper_rustls::HttpsConnector<HttpConnector>, ClientError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(Duration::from_secs(5)));
    let https = url.scheme_str() == Some("https");
    let tls = crate::tls::tls_config(https, None)?;
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http))
}

/// Why a batch of spans was not taken.
#[derive(Debug, thiserror::Error)]
enum ExportError {
    #[error("{0}")]
    Request(#[from] http::Error),
    #[error("{}", error_chain(.0))]
    Send(#[from] hyper_util::client::legacy::Error),
    #[error("the collector answered {0}")]
    Status(http::StatusCode),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

async fn post(client: &OtlpClient, cfg: &ExportConfig, body: Bytes) -> Result<(), ExportError> {
    let req = http::Request::post(cfg.url.clone())
        .header(http::header::CONTENT_TYPE, "application/x-protobuf")
        .body(Full::new(body))?;
    let answer = tokio::time::timeout(cfg.timeout, async {
        let resp = client.request(req).await?;
        let status = resp.status();
        read_answer(resp.into_body()).await;
        if status.is_success() {
            Ok(())
        } else {
            Err(ExportError::Status(status))
        }
    })
    .await;
    answer.unwrap_or(Err(ExportError::Timeout(cfg.timeout)))
}

/// Most of a collector's answer that is read. An OTLP answer is a small
/// `ExportTraceServiceResponse`; whatever sits at the endpoint may send
/// more, without end.
const MAX_ANSWER: usize = 64 * 1024;

/// Reads the collector's answer, so its connection can be reused, up to
/// [`MAX_ANSWER`] bytes; a longer answer is dropped unread, and with it the
/// connection (hyper does not reuse a connection whose body was left
/// unread). The status alone says whether the spans were taken.
async fn read_answer(mut body: hyper::body::Incoming) {
    let mut read = 0;
    while let Some(Ok(frame)) = body.frame().await {
        read += frame.data_ref().map_or(0, Bytes::len);
        if read > MAX_ANSWER {
            return;
        }
    }
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Export failures, logged at most once every ten seconds with how many
/// spans were lost since the last line.
struct Failures(Every);

impl Default for Failures {
    fn default() -> Failures {
        Failures(Every::new(Duration::from_secs(10)))
    }
}

impl Failures {
    fn note(&mut self, url: &http::Uri, spans: u64, why: &ExportError) {
        let Some(dropped) = self.0.due_at(Instant::now(), spans) else {
            return;
        };
        tracing::warn!(
            endpoint = %url,
            dropped,
            error = %crate::report::log_safe(&why.to_string()),
            "span export failed; the spans are dropped (counted in a2a_trace_spans_dropped_total)"
        );
    }
}

/// The `Resource` (service name and version) and `InstrumentationScope`
/// every request carries, encoded once.
fn envelope(service_name: &str) -> (Vec<u8>, Vec<u8>) {
    let mut resource = Vec::new();
    let mut o = Out(&mut resource);
    o.attr_str(1, "service.name", service_name);
    o.attr_str(1, "service.version", env!("CARGO_PKG_VERSION"));
    let mut scope = Vec::new();
    let mut o = Out(&mut scope);
    o.string(1, "a2a-tap");
    o.string(2, env!("CARGO_PKG_VERSION"));
    (resource, scope)
}

/// `ExportTraceServiceRequest { resource_spans = 1: ResourceSpans {
/// resource = 1; scope_spans = 2: ScopeSpans { scope = 1; spans = 2... } } }`.
fn request(resource: &[u8], scope: &[u8], spans: &[u8]) -> Vec<u8> {
    let scope_spans = len_delimited(scope.len()) + spans.len();
    let resource_spans = len_delimited(resource.len()) + len_delimited(scope_spans);
    let mut out = Vec::with_capacity(len_delimited(resource_spans));
    let mut o = Out(&mut out);
    o.nested(1, resource_spans, |o| {
        o.bytes(1, resource);
        o.nested(2, scope_spans, |o| {
            o.bytes(1, scope);
            o.0.extend_from_slice(spans);
        });
    });
    out
}

//! The analysis thread alone: how many exchanges one analysis thread
//! judges a second, its task registry full (100,000 tasks), fed through
//! the observer calls a serving thread makes for each exchange (open, the
//! request, the response head, the response in one run, the end). The
//! bench's own thread plays the serving threads. A sample's time is the
//! analysis thread's own time on a core (`/proc/self/task/TID/schedstat`)
//! until it has judged every exchange it was given: what an exchange costs
//! a fully busy analysis thread, whose inverse is the exchanges a second
//! one analysis thread can judge (BENCHMARKS.md, "The analysis path past
//! one thread").
//!
//! `cargo bench --bench analysis`

mod load;

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tap::analysis::{Tap, TapConfig};
use a2a_tap::engine::EngineConfig;
use a2a_tap::lifecycle::RegistryConfig;
use a2a_tap::proxy::{BodyEnd, Inspector};
use a2a_tap::report::audit::{AuditLog, MemoryAudit, Target};
use a2a_tap::report::metrics::Metrics;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const REQUEST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m-1","parts":[{"text":"book a flight"}]}}}"#;

/// An analysis thread with its registry's default size (100,000 tasks)
/// and a queue that never sheds (every exchange is judged).
struct Bench {
    tap: Tap,
    metrics: Arc<Metrics>,
    next: u64,
    /// SSE streams sent so far (20 events each).
    streams: u64,
    request: Bytes,
    request_head: http::request::Parts,
    /// The analysis thread's id (`/proc/self/task/ID`).
    analysis: String,
    sse: Template,
    json: Template,
}

/// A body and where its task id's 16 hex digits are.
struct Template {
    bytes: Vec<u8>,
    ids: Vec<usize>,
}

impl Template {
    fn new(bytes: Vec<u8>) -> Template {
        const ID: &[u8] = b"tsk_0000000000000000";
        let ids = (0..bytes.len().saturating_sub(ID.len()))
            .filter(|&i| &bytes[i..i + ID.len()] == ID)
            .map(|i| i + 4)
            .collect();
        Template { bytes, ids }
    }
}

impl Bench {
    fn start() -> Bench {
        let metrics = Arc::new(Metrics::new().expect("metrics"));
        let (audit, _writer) = AuditLog::start(
            Target::Memory(MemoryAudit::default()),
            10_000,
            metrics.audit_records_dropped_total.clone(),
        )
        .expect("audit writer");
        let cfg = TapConfig {
            upstream: "bench".into(),
            max_request_bytes: 64 * 1024,
            queue_bytes: 1 << 30,
            engine: EngineConfig::default(),
            registry: RegistryConfig::default(),
            policy: Default::default(),
            card: None,
            public_authority: None,
            trace: None,
            upstream_base_path: String::new(),
            clock: Default::default(),
            access: None,
            share: None,
            push: None,
        };
        let (tap, handle) = Tap::start(cfg, metrics.clone(), audit).expect("analysis thread");
        // The thread lives as long as the bench.
        std::mem::forget(handle);
        // The thread names itself once it runs, which on a busy host may
        // be after `start` returned: looked for until it has (bounded).
        let find = || {
            std::fs::read_dir("/proc/self/task")
                .expect("/proc/self/task")
                .filter_map(Result::ok)
                .find(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("a2a-tap-analysi"))
                })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let analysis = loop {
            match find() {
                Some(t) => break t.file_name().to_string_lossy().into_owned(),
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                None => panic!("the analysis thread"),
            }
        };
        let (request_head, ()) = http::Request::post("/")
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(())
            .expect("request")
            .into_parts();
        Bench {
            tap,
            metrics,
            next: 0,
            streams: 0,
            request: Bytes::from_static(REQUEST.as_bytes()),
            request_head,
            analysis,
            sse: Template::new(load::stream("tsk_0000000000000000", 1)),
            json: Template::new(load::answer("tsk_0000000000000000", 1)),
        }
    }

    /// One exchange as a serving thread reports it; a new task each (its
    /// id written into the body's copy in place, so that the bench's side
    /// costs little beside the analysis thread's).
    fn exchange(&mut self, sse: bool) {
        self.next += 1;
        let (media, body) = if sse {
            ("text/event-stream", &mut self.sse)
        } else {
            ("application/json", &mut self.json)
        };
        let id = format!("{:016x}", self.next);
        for &at in &body.ids {
            body.bytes[at..at + 16].copy_from_slice(id.as_bytes());
        }
        let body = &body.bytes;
        let obs = self
            .tap
            .begin(self.next, &self.request_head, true)
            .expect("an observer");
        obs.request_data(&self.request);
        obs.request_end(BodyEnd::Complete);
        let (head, ()) = http::Response::builder()
            .header("content-type", media)
            .body(())
            .expect("response")
            .into_parts();
        obs.response_head(&head);
        obs.response_data(body);
        obs.response_end(&[], BodyEnd::Complete);
    }

    /// The analysis thread's time on a core so far.
    fn analysis_cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/schedstat", self.analysis))
            .expect("the analysis thread's schedstat");
        let ns = stat
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .expect("nanoseconds on a core");
        Duration::from_nanos(ns)
    }

    /// Stream events the analysis thread has judged so far.
    fn events(&self) -> u64 {
        self.metrics
            .registry()
            .gather()
            .iter()
            .filter(|f| f.get_name() == "a2a_stream_events_total")
            .flat_map(|f| f.get_metric())
            .map(|m| m.get_counter().get_value() as u64)
            .sum()
    }

    /// Sends one more SSE stream and waits until its 20 events are judged:
    /// the thread judges in order, so every exchange before it is too.
    fn settle(&mut self) {
        self.exchange(true);
        self.streams += 1;
        let want = self.streams * 20;
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.events() < want {
            assert!(Instant::now() < deadline, "the analysis thread fell silent");
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut b = Bench::start();
    // Fill the registry: every exchange below finds it full.
    for _ in 0..100_000 {
        b.exchange(false);
    }
    b.settle();
    let mut g = c.benchmark_group("analysis");
    g.throughput(Throughput::Elements(1));
    g.sample_size(20);
    for (name, sse) in [
        (
            "the load script's SSE stream (20 events), registry full",
            true,
        ),
        ("the load script's JSON answer, registry full", false),
    ] {
        g.bench_function(name, |bench| {
            bench.iter_custom(|iters| {
                let start = b.analysis_cpu();
                for _ in 0..iters {
                    b.exchange(sse);
                }
                if sse {
                    b.streams += iters;
                }
                // One stream more, to know when all are judged: its cost
                // is spread over the sample's `iters` exchanges.
                b.settle();
                b.analysis_cpu() - start
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

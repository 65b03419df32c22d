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
//! The second group shards: N routes on N analysis threads (`[analysis]
//! threads = N`), each route fed by a thread of its own, every exchange a
//! new task: a sample's time is the wall time until every thread has
//! judged all it was given, so its throughput is the exchanges a second N
//! analysis threads judge together (on a host whose cores can run them and
//! their feeders at once), and a second figure is their CPU a stream
//! summed over the analysis threads (what sharding adds to a stream).
//!
//! `cargo bench --bench analysis`

mod load;

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_tap::analysis::{Tap, TapConfig};
use a2a_tap::config::Config;
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
        let (metrics, audit) = outputs();
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
            threads: 1,
        };
        let before = analysis_threads();
        let (tap, handle) = Tap::start(cfg, metrics.clone(), audit).expect("analysis thread");
        // The thread lives as long as the bench.
        std::mem::forget(handle);
        let analysis = started_threads(&before, 1).remove(0);
        let request_head = request_head();
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

    /// One exchange as a serving thread reports it.
    fn exchange(&mut self, sse: bool) {
        self.next += 1;
        let body = if sse { &mut self.sse } else { &mut self.json };
        feed(
            &self.tap,
            &self.request_head,
            &self.request,
            body,
            self.next,
            sse,
        );
    }

    /// The analysis thread's time on a core so far.
    fn analysis_cpu(&self) -> Duration {
        thread_cpu(&self.analysis)
    }

    /// Stream events the analysis thread has judged so far.
    fn events(&self) -> u64 {
        events(&self.metrics)
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

/// One exchange `id` as a serving thread reports it to `tap`; a new task
/// each (its id written into the body's copy in place, so that the
/// bench's side costs little beside the analysis thread's).
fn feed(
    tap: &Tap,
    request_head: &http::request::Parts,
    request: &Bytes,
    body: &mut Template,
    id: u64,
    sse: bool,
) {
    let media = if sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let task = format!("{id:016x}");
    for &at in &body.ids {
        body.bytes[at..at + 16].copy_from_slice(task.as_bytes());
    }
    let obs = tap.begin(id, request_head, true).expect("an observer");
    obs.request_data(request);
    obs.request_end(BodyEnd::Complete);
    let (head, ()) = http::Response::builder()
        .header("content-type", media)
        .body(())
        .expect("response")
        .into_parts();
    obs.response_head(&head);
    obs.response_data(&body.bytes);
    obs.response_end(&[], BodyEnd::Complete);
}

/// Thread `tid`'s time on a core so far.
fn thread_cpu(tid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .expect("the analysis thread's schedstat");
    let ns = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("nanoseconds on a core");
    Duration::from_nanos(ns)
}

/// Stream events judged so far, over every route.
fn events(metrics: &Metrics) -> u64 {
    events_of(metrics, None)
}

/// Stream events judged so far on route `route` (`None`: every route).
fn events_of(metrics: &Metrics, route: Option<&str>) -> u64 {
    metrics
        .registry()
        .gather()
        .iter()
        .filter(|f| f.get_name() == "a2a_stream_events_total")
        .flat_map(|f| f.get_metric())
        .filter(|m| {
            route.is_none_or(|r| {
                m.get_label()
                    .iter()
                    .any(|l| l.get_name() == "upstream" && l.get_value() == r)
            })
        })
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

/// Streams a feeder may be ahead of its route's analysis thread (about
/// 100 MB queued, within each thread's share of the 1 GiB budget).
const BACKLOG: u64 = 20_000;

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

/// `n` routes (`r0`..), each on its own analysis thread, and a tap each.
struct Sharded {
    taps: Vec<Tap>,
    metrics: Arc<Metrics>,
    /// Every analysis thread's id.
    threads: Vec<String>,
    request_head: http::request::Parts,
    /// SSE streams sent so far, over all routes.
    streams: u64,
    next: u64,
}

impl Sharded {
    fn start(n: usize) -> Sharded {
        let mut text = format!(
            "listen = \"127.0.0.1:8080\"\n[analysis]\nthreads = {n}\nqueue_bytes = \"1GiB\"\n"
        );
        for i in 0..n {
            text.push_str(&format!(
                "[[route]]\nname = \"r{i}\"\nupstream = \"http://127.0.0.1:9999\"\npath_prefix = \"/r{i}\"\n"
            ));
        }
        let config: Config = text.parse().expect("config");
        let (metrics, audit) = outputs();
        let before = analysis_threads();
        let cfg = TapConfig::try_from(&config).expect("tap config");
        assert_eq!(cfg.threads, n);
        let (tap, handle) = Tap::start(cfg, metrics.clone(), audit).expect("analysis threads");
        std::mem::forget(handle);
        let taps = config
            .route_specs()
            .iter()
            .map(|r| tap.for_route(&config, r, &metrics).expect("route tap"))
            .collect();
        let threads = started_threads(&before, n);
        let request_head = request_head();
        Sharded {
            taps,
            metrics,
            threads,
            request_head,
            streams: 0,
            next: 0,
        }
    }

    /// Feeds every route `per_route` SSE streams at once, a thread a
    /// route, and waits until all are judged.
    fn run(&mut self, per_route: u64) {
        let first = self.next;
        let head = &self.request_head;
        let metrics = &self.metrics;
        std::thread::scope(|s| {
            for (r, tap) in self.taps.iter().enumerate() {
                s.spawn(move || {
                    let mut sse = Template::new(load::stream("tsk_0000000000000000", 1));
                    let request = Bytes::from_static(REQUEST.as_bytes());
                    let route = format!("r{r}");
                    let judged_before = events_of(metrics, Some(&route)) / 20;
                    for k in 0..per_route {
                        // Never more than a backlog's worth ahead of the
                        // route's thread (past its queue's budget,
                        // streams would go unjudged).
                        if k % 1024 == 0 {
                            while k.saturating_sub(
                                events_of(metrics, Some(&route)) / 20 - judged_before,
                            ) > BACKLOG
                            {
                                std::thread::sleep(Duration::from_micros(200));
                            }
                        }
                        // Ids unique over routes and samples.
                        let id = first + k * 64 + r as u64;
                        feed(tap, head, &request, &mut sse, id, true);
                    }
                });
            }
        });
        self.next = first + per_route * 64;
        self.streams += per_route * self.taps.len() as u64;
        let want = self.streams * 20;
        let deadline = Instant::now() + Duration::from_secs(120);
        while events(&self.metrics) < want {
            assert!(
                Instant::now() < deadline,
                "the analysis threads fell silent"
            );
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// The analysis threads' time on a core so far, summed.
    fn cpu(&self) -> Duration {
        self.threads.iter().map(|t| thread_cpu(t)).sum()
    }
}

/// Where the benches' outputs go: metrics, and an audit log in memory.
fn outputs() -> (Arc<Metrics>, AuditLog) {
    let metrics = Arc::new(Metrics::new().expect("metrics"));
    let (audit, _writer) = AuditLog::start(
        Target::Memory(MemoryAudit::default()),
        10_000,
        metrics.audit_records_dropped_total.clone(),
    )
    .expect("audit writer");
    (metrics, audit)
}

/// The head of the exchanges' request.
fn request_head() -> http::request::Parts {
    http::Request::post("/")
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(())
        .expect("request")
        .into_parts()
        .0
}

/// The `n` analysis threads started since `before` was listed (a thread
/// names itself once it runs: waited for).
fn started_threads(before: &[String], n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let threads: Vec<String> = analysis_threads()
            .into_iter()
            .filter(|t| !before.contains(t))
            .collect();
        if threads.len() == n {
            return threads;
        }
        assert!(Instant::now() < deadline, "{n} new analysis threads");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The ids of this process's analysis threads.
fn analysis_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(Result::ok)
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("a2a-tap-analysi") || c.starts_with("a2a-analysis-"))
        })
        .map(|t| t.file_name().to_string_lossy().into_owned())
        .collect()
}

fn bench_sharded(c: &mut Criterion) {
    let mut g = c.benchmark_group("analysis threads");
    g.sample_size(10);
    for n in [1, 2] {
        let mut b = Sharded::start(n);
        b.run(1_000);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(
            format!("SSE streams judged, {n} routes on {n} threads (wall)"),
            |bench| {
                bench.iter_custom(|iters| {
                    let start = Instant::now();
                    b.run(iters);
                    start.elapsed()
                })
            },
        );
        g.bench_function(
            format!("SSE stream, {n} routes on {n} threads (analysis CPU summed)"),
            |bench| {
                bench.iter_custom(|iters| {
                    let start = b.cpu();
                    b.run(iters);
                    b.cpu() - start
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench, bench_sharded);
criterion_main!(benches);

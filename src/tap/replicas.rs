//! The task registry shared by the replicas in front of one agent
//! (`[registry] backend = "redis"`). Each replica publishes the facts its
//! registry records (a task's new state or context) to one Redis stream
//! and reads the others' from it. A fact heard is handed to the analysis
//! thread through the same queue as the traffic, so it takes its place in
//! this replica's causal order when it arrives: a request that began after
//! that was sent after the state was seen somewhere, and one that began
//! before is not judged by it. No finding rests on another machine's clock.
//!
//! Nothing here is on the serving path: two threads of their own (one
//! publishes, one reads), each with its own connection; the analysis
//! thread only offers facts to a bounded channel. Redis down or slow: the
//! replica judges with what it saw itself, the failures are counted and
//! logged (at most every 10 s), and each thread reconnects with backoff.

mod consume;
mod publish;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::{IntCounter, IntGauge};

use super::queue::Sender;
use super::worker::Msg;
use crate::lifecycle::registry::Fact;
use crate::report::metrics::Metrics;

/// How the replicas share facts.
#[derive(Debug, Clone)]
pub struct ShareSettings {
    /// `redis://` or `rediss://`, credentials included.
    pub url: String,
    /// The same URL with its credentials masked, for logs.
    pub masked_url: String,
    /// The stream every replica of the deployment writes and reads.
    pub stream: String,
    /// Entries the stream keeps at most (trimmed approximately).
    pub max_len: usize,
    /// Entries older than this are trimmed (by the Redis server's clock).
    pub ttl: Duration,
}

/// Batches of facts the analysis thread may have waiting for the
/// publisher; beyond, facts are dropped and counted.
const OFFERED_BATCHES: usize = 1024;
/// Longest a Redis command may take before it counts as failed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// How long stopping waits for the last facts to be published.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// The analysis thread's side: offers the facts its registry recorded.
pub(crate) struct Publisher {
    tx: SyncSender<Vec<Fact>>,
    dropped: IntCounter,
}

impl Publisher {
    /// Hands `facts` to the publishing thread; never waits (a full channel
    /// drops them, counted).
    pub(crate) fn offer(&self, facts: Vec<Fact>) {
        if facts.is_empty() {
            return;
        }
        if let Err(TrySendError::Full(f) | TrySendError::Disconnected(f)) = self.tx.try_send(facts)
        {
            self.dropped.inc_by(f.len() as u64);
        }
    }
}

/// The sharing threads, stopped at shutdown after the analysis thread.
pub struct Replicas {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Replicas {
    /// Starts publishing to and reading from `settings.stream`; what is
    /// heard goes to the analysis thread through `queue`.
    pub(crate) fn start(
        settings: ShareSettings,
        metrics: &Metrics,
        queue: Sender<Msg>,
    ) -> std::io::Result<(Replicas, Publisher)> {
        let replica = format!("{:016x}", fastrand::u64(..));
        let health = Health::new(metrics, settings.masked_url.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = sync_channel(OFFERED_BATCHES);
        let publisher = Publisher {
            tx,
            dropped: health.errors("dropped"),
        };
        let published = metrics
            .registry_facts_total
            .with_label_values(&["published"]);
        let received = metrics
            .registry_facts_total
            .with_label_values(&["received"]);
        let p =
            publish::Publishing::new(settings.clone(), replica.clone(), health.clone(), published);
        let c = consume::Consuming::new(settings, replica, health, received, queue);
        let threads = vec![
            spawn("a2a-tap-registry-publish", {
                let stop = stop.clone();
                move || p.run(rx, &stop)
            })?,
            spawn("a2a-tap-registry-read", {
                let stop = stop.clone();
                move || c.run(&stop)
            })?,
        ];
        Ok((Replicas { stop, threads }, publisher))
    }

    /// Stops reading, publishes what is still waiting (for up to 2 s), and
    /// joins both threads. Call after the analysis thread has ended.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// What both threads report through: the metrics, and a log of failures
/// at most every 10 s (with how many were not logged).
#[derive(Clone)]
struct Health {
    up: IntGauge,
    errors: prometheus::IntCounterVec,
    url: String,
    log: Arc<Mutex<LogLimit>>,
}

struct LogLimit {
    last: Option<Instant>,
    unlogged: u64,
}

/// Shortest time between two failure logs.
const LOG_EVERY: Duration = Duration::from_secs(10);

impl Health {
    fn new(metrics: &Metrics, url: String) -> Health {
        for op in ["connect", "publish", "read", "decode", "dropped"] {
            metrics.registry_errors_total.with_label_values(&[op]);
        }
        metrics.registry_up.set(0);
        Health {
            up: metrics.registry_up.clone(),
            errors: metrics.registry_errors_total.clone(),
            url,
            log: Arc::new(Mutex::new(LogLimit {
                last: None,
                unlogged: 0,
            })),
        }
    }

    fn errors(&self, op: &str) -> IntCounter {
        self.errors.with_label_values(&[op])
    }

    /// `op` failed with `why`: counted, logged unless a log was written
    /// within `LOG_EVERY`.
    fn failed(&self, op: &'static str, why: &dyn std::fmt::Display) {
        self.errors(op).inc();
        if op != "decode" {
            self.up.set(0);
        }
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if log.last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
            log.unlogged += 1;
            return;
        }
        let unlogged = std::mem::take(&mut log.unlogged);
        log.last = Some(now);
        tracing::warn!(
            op,
            redis = %self.url,
            unlogged,
            "shared task registry: {why}; judging with what this replica sees until it is back"
        );
    }

    /// A command succeeded.
    fn answered(&self) {
        if self.up.get() == 0 {
            self.up.set(1);
            tracing::info!(redis = %self.url, "shared task registry connected");
        }
    }
}

/// Doubling waits between reconnects, 100 ms to 5 s.
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: Duration::from_millis(100),
        }
    }

    /// The wait before the next attempt (then doubled).
    fn step(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(Duration::from_secs(5));
        wait
    }

    fn reset(&mut self) {
        *self = Backoff::new();
    }
}

/// Sleeps `d` in short naps, returning early once `stop` is raised.
fn nap(d: Duration, stop: &AtomicBool) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::Acquire) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// A connection with the command timeout on both directions.
fn connect(
    client: &redis::Client,
    read_timeout: Duration,
) -> redis::RedisResult<redis::Connection> {
    let con = client.get_connection_with_timeout(COMMAND_TIMEOUT)?;
    con.set_read_timeout(Some(read_timeout))?;
    con.set_write_timeout(Some(COMMAND_TIMEOUT))?;
    Ok(con)
}

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
mod entry;
mod publish;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::{IntCounter, IntGauge};

use super::shards::Shards;
use crate::lifecycle::registry::Fact;
use crate::pace::{Backoff, Every};
use crate::report::metrics::{Metrics, RegistryErrors};

/// How the replicas share facts.
#[derive(Clone)]
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
    /// The shared key entries are signed with and checked against.
    pub key: Option<ring::hmac::Key>,
    /// Most bytes of entries one read brings.
    pub max_read_bytes: usize,
    /// Whether entries name their route (`u`): with `[[route]]` tables.
    /// Without, entries are as before routes (the one upstream's).
    pub name_routes: bool,
}

impl std::fmt::Debug for ShareSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShareSettings")
            .field("url", &self.masked_url)
            .field("stream", &self.stream)
            .field("max_len", &self.max_len)
            .field("ttl", &self.ttl)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .field("max_read_bytes", &self.max_read_bytes)
            .finish()
    }
}

/// Facts waiting to be published, shared by the analysis thread (which
/// adds) and the publisher (which takes): one bounded backlog, so while
/// the publisher waits on Redis nothing but this bound drops a fact.
const MAX_WAITING: usize = publish::MAX_BACKLOG - publish::PIPELINE;
/// Longest a Redis command may take before it counts as failed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// How long stopping waits for the last facts to be published.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// How far past this replica's (or the server's) clock a status timestamp
/// or an entry id may lie and still be trusted.
const SKEW: Duration = Duration::from_secs(300);

/// The backlog both sides share.
struct Waiting {
    state: Mutex<Backlog>,
    /// Signalled when facts are added while the publisher waits for some.
    added: Condvar,
}

#[derive(Default)]
struct Backlog {
    /// Each fact with its route, when entries name routes.
    facts: VecDeque<(Option<Arc<str>>, Fact)>,
    /// The publisher waits on `added`: the next offer must wake it.
    parked: bool,
}

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, Backlog> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An analysis thread's side: offers the facts its registries recorded
/// (each thread has a clone; they share one backlog).
#[derive(Clone)]
pub(crate) struct Publisher {
    waiting: Arc<Waiting>,
    dropped: IntCounter,
    /// Whether facts are published with their route's name.
    name_routes: bool,
}

impl Publisher {
    /// Adds `facts`, of the route named `route`, to the backlog; never
    /// waits for Redis (past the backlog's bound the oldest waiting go,
    /// counted).
    pub(crate) fn offer(&self, route: &str, facts: Vec<Fact>) {
        if facts.is_empty() {
            return;
        }
        let route: Option<Arc<str>> = self.name_routes.then(|| route.into());
        // Past the bound the oldest go: of those waiting first, then of
        // these (a burst bigger than the bound keeps its newest).
        let mut facts = facts;
        let mut dropped = facts.len().saturating_sub(MAX_WAITING);
        facts.drain(..dropped);
        let mut waiting = self.waiting.lock();
        let over = (waiting.facts.len() + facts.len()).saturating_sub(MAX_WAITING);
        waiting.facts.drain(..over);
        dropped += over;
        waiting
            .facts
            .extend(facts.into_iter().map(|f| (route.clone(), f)));
        let wake = std::mem::take(&mut waiting.parked);
        drop(waiting);
        if dropped > 0 {
            self.dropped.inc_by(dropped as u64);
        }
        if wake {
            self.waiting.added.notify_one();
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
    /// heard goes to the analysis thread of its route, through `shards`.
    pub(crate) fn start(
        settings: ShareSettings,
        metrics: &Metrics,
        shards: Arc<Shards>,
    ) -> std::io::Result<(Replicas, Publisher)> {
        let replica = replica_name();
        tracing::info!(
            replica = %replica,
            signed = settings.key.is_some(),
            "shared task registry: this replica publishes its facts under its name"
        );
        let health = Health::new(metrics, settings.masked_url.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(Waiting {
            state: Mutex::new(Backlog::default()),
            added: Condvar::new(),
        });
        let publisher = Publisher {
            waiting: waiting.clone(),
            dropped: health.errors("dropped"),
            name_routes: settings.name_routes,
        };
        let published = metrics.registry_facts_total.with("published");
        let received = metrics.registry_facts_total.with("received");
        let p =
            publish::Publishing::new(settings.clone(), replica.clone(), health.clone(), published);
        let c = consume::Consuming::new(settings, replica, health, received, shards);
        let threads = vec![
            spawn("a2a-tap-registry-publish", {
                let stop = stop.clone();
                move || p.run(&waiting, &stop)
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

/// This replica's name in the entries it writes (and in the findings of
/// the others that rest on them): the host's name (a pod's name in
/// Kubernetes) and a random part, so a restart is a new replica.
fn replica_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '/')
        .take(64)
        .collect();
    let random = format!("{:016x}", fastrand::u64(..));
    if host.is_empty() {
        random
    } else {
        format!("{host}/{random}")
    }
}

/// What both threads report through: the metrics, and logs at most every
/// 10 s per kind (with how many were not logged).
#[derive(Clone)]
struct Health {
    up: IntGauge,
    errors: RegistryErrors,
    url: String,
    /// Failures of the connection, entries skipped, a stream that cannot
    /// take entries: each logged on its own limit, so one cannot hide
    /// another.
    logs: Arc<[Mutex<Every>; 3]>,
}

/// Shortest time between two logs of one kind.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The `op` labels of `a2a_registry_errors_total`.
const OPS: [&str; 10] = [
    "connect",
    "publish",
    "read",
    "decode",
    "dropped",
    "unsigned",
    "bad_signature",
    "oversized",
    "future_timestamp",
    "stream_id",
];

impl Health {
    fn new(metrics: &Metrics, url: String) -> Health {
        for op in OPS {
            metrics.registry_errors_total.with(op);
        }
        metrics.registry_up.set(0);
        Health {
            up: metrics.registry_up.clone(),
            errors: metrics.registry_errors_total.clone(),
            url,
            logs: Arc::new([(); 3].map(|()| Mutex::new(Every::new(LOG_EVERY)))),
        }
    }

    fn errors(&self, op: &str) -> IntCounter {
        self.errors.with(op)
    }

    /// Whether to log kind `log` now; if so, how many of it were not
    /// logged since the last line.
    fn due(&self, log: usize) -> Option<u64> {
        self.logs[log]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .due()
            .map(|n| n.saturating_sub(1))
    }

    /// `op` (connecting, publishing, reading) failed with `why`: counted,
    /// logged unless a failure was logged within `LOG_EVERY`.
    fn failed(&self, op: &'static str, why: &dyn std::fmt::Display) {
        self.errors(op).inc();
        self.up.set(0);
        let Some(unlogged) = self.due(0) else {
            return;
        };
        tracing::warn!(
            op,
            redis = %self.url,
            unlogged,
            "shared task registry: {why}; judging with what this replica sees until it is back"
        );
    }

    /// Something read was not used as it came (`op`: an entry skipped, a
    /// timestamp not trusted): counted, logged at most every `LOG_EVERY`.
    fn skipped(&self, op: &'static str, why: &dyn std::fmt::Display) {
        self.errors(op).inc();
        let Some(unlogged) = self.due(1) else {
            return;
        };
        tracing::warn!(op, redis = %self.url, unlogged, "shared task registry: {why}");
    }

    /// The stream cannot take this replica's entries (or takes them where
    /// no replica reads them) until an operator acts: counted, and logged
    /// as an error every `LOG_EVERY` for as long as it lasts.
    fn stuck(&self, why: &dyn std::fmt::Display) {
        self.errors("stream_id").inc();
        self.up.set(0);
        let Some(unlogged) = self.due(2) else {
            return;
        };
        tracing::error!(
            op = "stream_id",
            redis = %self.url,
            unlogged,
            "shared task registry: {why}"
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
fn reconnects() -> Backoff {
    Backoff::new(Duration::from_millis(100), Duration::from_secs(5))
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

#[cfg(test)]
mod tests;

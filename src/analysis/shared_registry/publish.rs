//! The publishing thread: facts the analysis thread put in the shared
//! backlog, written to the stream in pipelines of packed entries (signed
//! with the shared key when set); the stream trimmed by length on every
//! write and by age every 30 s.
//!
//! The analysis thread adds to the backlog directly (no hand-off channel
//! that could overflow while this thread waits in a command): while Redis
//! is slow or away only the backlog's bound drops a fact, counted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus::IntCounter;
use redis::Value;

use super::{
    connect, entry, nap, reconnects, Health, ShareSettings, Waiting, COMMAND_TIMEOUT,
    FLUSH_TIMEOUT, SKEW,
};
use crate::lifecycle::registry::Fact;

/// Facts kept while Redis cannot take them, those being written included;
/// past it the oldest waiting go (counted as `dropped`).
pub(super) const MAX_BACKLOG: usize = 65_536;
/// Facts written per round trip (in entries of `entry::PACK`).
pub(super) const PIPELINE: usize = 4096;
/// How long facts are gathered before they are written (a bound on the
/// writes per second, and a part of the time a fact takes to reach the
/// other replicas).
const LINGER: Duration = Duration::from_millis(5);
/// How often entries older than the TTL are trimmed.
const TRIM_EVERY: Duration = Duration::from_secs(30);
/// How long the thread waits for facts before it looks at the stop flag
/// and the trim again.
const IDLE: Duration = Duration::from_millis(100);

/// Redis's answer to `XADD *` once the stream's last id is the largest.
const EXHAUSTED: &str = "exhausted the last possible ID";

pub(super) struct Publishing {
    settings: ShareSettings,
    replica: String,
    health: Health,
    published: IntCounter,
    oversized: IntCounter,
    /// The facts being written, each with its route when entries name
    /// routes (taken from the backlog, at most `PIPELINE`); kept, and
    /// written first, when a write fails.
    batch: Vec<(Option<Arc<str>>, Fact)>,
}

/// Why a write did not go through.
enum Failure {
    /// The connection or the server failed: reconnect.
    Redis(redis::RedisError),
    /// The stream cannot take entries where replicas read them, until an
    /// operator acts: logged as such, retried on the same connection.
    Stuck(String),
}

impl Publishing {
    pub(super) fn new(
        settings: ShareSettings,
        replica: String,
        health: Health,
        published: IntCounter,
    ) -> Publishing {
        let oversized = health.errors("oversized");
        Publishing {
            settings,
            replica,
            health,
            published,
            oversized,
            batch: Vec::with_capacity(PIPELINE),
        }
    }

    pub(super) fn run(mut self, waiting: &Waiting, stop: &AtomicBool) {
        let client = match redis::Client::open(self.settings.url.as_str()) {
            Ok(c) => c,
            Err(e) => return self.health.failed("connect", &e),
        };
        let mut con: Option<redis::Connection> = None;
        let mut backoff = reconnects();
        let mut retry_at = Instant::now();
        let mut trimmed = Instant::now();
        loop {
            if stop.load(Ordering::Acquire) {
                return self.flush(&client, con, waiting);
            }
            let now = Instant::now();
            if now < retry_at {
                nap(retry_at.duration_since(now).min(IDLE), stop);
                continue;
            }
            if self.batch.is_empty() && wait_for(waiting, 1, IDLE) > 0 {
                // Gather what follows for a moment: one write per LINGER,
                // not one per drain of the analysis thread.
                wait_for(waiting, PIPELINE, LINGER);
            }
            let trim_due = trimmed.elapsed() >= TRIM_EVERY;
            if self.batch.is_empty() && waiting.lock().facts.is_empty() && !trim_due {
                continue;
            }
            let c = match con.as_mut() {
                Some(c) => c,
                None => match connect(&client, COMMAND_TIMEOUT) {
                    Ok(c) => con.insert(c),
                    Err(e) => {
                        self.health.failed("connect", &e);
                        retry_at = Instant::now() + backoff.step();
                        continue;
                    }
                },
            };
            let done = self.write(c, waiting).and_then(|()| {
                if trim_due {
                    trimmed = Instant::now();
                    self.trim(c).map_err(Failure::Redis)?;
                }
                Ok(())
            });
            match done {
                Ok(()) => {
                    self.health.answered();
                    backoff.reset();
                }
                Err(Failure::Redis(e)) => {
                    self.health.failed("publish", &e);
                    con = None;
                    retry_at = Instant::now() + backoff.step();
                }
                Err(Failure::Stuck(why)) => {
                    self.health.stuck(&why);
                    retry_at = Instant::now() + backoff.step();
                }
            }
        }
    }

    /// Takes facts from the backlog into the batch, up to `PIPELINE`; a
    /// fact over the limits every replica reads by is not published
    /// (counted as `oversized`).
    fn refill(&mut self, waiting: &Waiting) {
        let mut w = waiting.lock();
        while self.batch.len() < PIPELINE {
            let Some(f) = w.facts.pop_front() else {
                break;
            };
            if entry::fits(&f.1) {
                self.batch.push(f);
            } else {
                self.oversized.inc();
            }
        }
    }

    /// Writes the backlog, a pipeline at a time, until it is empty; what
    /// was not written stays (a pipeline that failed part-way is written
    /// again: a fact heard twice changes nothing).
    fn write(&mut self, con: &mut redis::Connection, waiting: &Waiting) -> Result<(), Failure> {
        loop {
            self.refill(waiting);
            if self.batch.is_empty() {
                return Ok(());
            }
            let mut pipe = redis::pipe();
            pipe.cmd("TIME");
            // One entry per run of facts of one route, at most PACK each.
            for facts in self.batch.chunk_by(|a, b| a.0 == b.0) {
                for facts in facts.chunks(entry::PACK) {
                    self.add_entry(&mut pipe, facts);
                }
            }
            let reply: Vec<Value> = pipe.query(con).map_err(|e| self.failure(e))?;
            self.published.inc_by(self.batch.len() as u64);
            self.batch.clear();
            if let Some(why) = self.ahead(&reply) {
                return Err(Failure::Stuck(why));
            }
        }
    }

    /// Adds to `pipe` the `XADD` of an entry holding `facts` (of one route).
    fn add_entry(&self, pipe: &mut redis::Pipeline, facts: &[(Option<Arc<str>>, Fact)]) {
        let route = facts.first().and_then(|(r, _)| r.as_deref());
        let packed = entry::pack(facts.iter().map(|(_, f)| f));
        let cmd = pipe
            .cmd("XADD")
            .arg(&self.settings.stream)
            .arg("MAXLEN")
            .arg("~")
            .arg(self.settings.max_len)
            .arg("*")
            .arg("v")
            .arg(entry::FORMAT)
            .arg("r")
            .arg(&self.replica);
        if let Some(route) = route {
            cmd.arg("u").arg(route);
        }
        if let Some(key) = &self.settings.key {
            let who = (self.replica.as_bytes(), route.map(str::as_bytes));
            let tag = entry::sign(key, &self.settings.stream, who, &packed);
            cmd.arg("s").arg(tag.as_ref());
        }
        cmd.arg("f").arg(packed);
    }

    /// A failed write: the stream at its largest id is stuck for good.
    fn failure(&self, e: redis::RedisError) -> Failure {
        if !e.to_string().contains(EXHAUSTED) {
            return Failure::Redis(e);
        }
        Failure::Stuck(format!(
            "cannot publish: the stream {stream} holds an entry at the largest possible id \
             (18446744073709551615-18446744073709551615, written by something other than a \
             replica), so Redis refuses every new entry and the other replicas hear nothing from \
             this one. It does not recover by itself: delete the stream (`DEL {stream}`; the \
             replicas keep what they know) and restrict who may write it (docs/registry.md, \
             \"Who may write the stream\"). Facts wait meanwhile, up to {MAX_BACKLOG}",
            stream = self.settings.stream
        ))
    }

    /// Whether the ids Redis gave the entries just written lie beyond its
    /// clock plus `SKEW` (an entry with a future id was written before
    /// them): no replica reads them until then.
    fn ahead(&self, reply: &[Value]) -> Option<String> {
        let server_ms = match reply.first() {
            Some(Value::Array(t)) => match t.first() {
                Some(Value::BulkString(s)) => std::str::from_utf8(s)
                    .ok()?
                    .parse::<u64>()
                    .ok()?
                    .saturating_mul(1000),
                _ => return None,
            },
            _ => return None,
        };
        let id = match reply.last()? {
            Value::BulkString(id) => String::from_utf8_lossy(id).into_owned(),
            Value::SimpleString(id) => id.clone(),
            _ => return None,
        };
        let id_ms: u64 = id.split('-').next()?.parse().ok()?;
        let skew = SKEW.as_millis() as u64;
        (id_ms > server_ms.saturating_add(skew)).then(|| {
            format!(
                "published entries get ids far past the Redis server's clock (the last {id}, \
                 {}s ahead): an entry with a future id was written to the stream {stream} by \
                 something other than a replica, and no replica reads entries more than {}s \
                 ahead, so the other replicas hear nothing from this one until then. Delete the \
                 stream (`DEL {stream}`) and restrict who may write it (docs/registry.md)",
                (id_ms - server_ms) / 1000,
                SKEW.as_secs(),
                stream = self.settings.stream
            )
        })
    }

    /// Trims entries older than the TTL, by the server's own clock.
    fn trim(&self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        let (secs, _micros): (u64, u64) = redis::cmd("TIME").query(con)?;
        let ttl = u64::try_from(self.settings.ttl.as_millis()).unwrap_or(u64::MAX);
        let min_id = secs.saturating_mul(1000).saturating_sub(ttl);
        redis::cmd("XTRIM")
            .arg(&self.settings.stream)
            .arg("MINID")
            .arg("~")
            .arg(min_id)
            .query::<()>(con)
    }

    /// At shutdown: the backlog written within `FLUSH_TIMEOUT`, else
    /// counted as dropped.
    fn flush(mut self, client: &redis::Client, con: Option<redis::Connection>, waiting: &Waiting) {
        if self.batch.is_empty() && waiting.lock().facts.is_empty() {
            return;
        }
        let written = match con {
            Some(mut c) => self.write(&mut c, waiting),
            None => connect(client, FLUSH_TIMEOUT)
                .map_err(Failure::Redis)
                .and_then(|mut c| self.write(&mut c, waiting)),
        };
        let why = match written {
            Ok(()) => return,
            Err(Failure::Redis(e)) => e.to_string(),
            Err(Failure::Stuck(why)) => why,
        };
        self.health.failed("publish", &why);
        let left = self.batch.len() + waiting.lock().facts.len();
        self.health.errors("dropped").inc_by(left as u64);
    }
}

/// Waits until the backlog holds `enough` facts, or `timeout` passes;
/// how many it holds.
fn wait_for(waiting: &Waiting, enough: usize, timeout: Duration) -> usize {
    let deadline = Instant::now() + timeout;
    let mut w = waiting.lock();
    while w.facts.len() < enough {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        w.parked = true;
        w = match waiting.added.wait_timeout(w, left) {
            Ok((w, _)) => w,
            Err(p) => p.into_inner().0,
        };
    }
    w.parked = false;
    w.facts.len()
}

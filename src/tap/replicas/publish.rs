//! The publishing thread: facts the analysis thread offered, written to
//! the stream in pipelines of packed entries; a backlog (bounded) while
//! Redis is away; the stream trimmed by length on every write and by age
//! every 30 s.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use prometheus::IntCounter;

use super::{connect, nap, wire, Backoff, Health, ShareSettings, COMMAND_TIMEOUT, FLUSH_TIMEOUT};
use crate::lifecycle::registry::Fact;

/// Facts kept while Redis cannot take them; past it the oldest go (counted
/// as `dropped`).
const MAX_BACKLOG: usize = 65_536;
/// Facts written per round trip (in entries of `wire::PACK`).
const PIPELINE: usize = 4096;
/// How long facts are gathered before they are written (a bound on the
/// writes per second, and a part of the time a fact takes to reach the
/// other replicas).
const LINGER: Duration = Duration::from_millis(5);
/// How often entries older than the TTL are trimmed.
const TRIM_EVERY: Duration = Duration::from_secs(30);

pub(super) struct Publishing {
    settings: ShareSettings,
    replica: String,
    health: Health,
    published: IntCounter,
    dropped: IntCounter,
    backlog: VecDeque<Fact>,
}

impl Publishing {
    pub(super) fn new(
        settings: ShareSettings,
        replica: String,
        health: Health,
        published: IntCounter,
    ) -> Publishing {
        let dropped = health.errors("dropped");
        Publishing {
            settings,
            replica,
            health,
            published,
            dropped,
            backlog: VecDeque::new(),
        }
    }

    pub(super) fn run(mut self, rx: Receiver<Vec<Fact>>, stop: &AtomicBool) {
        let client = match redis::Client::open(self.settings.url.as_str()) {
            Ok(c) => c,
            Err(e) => return self.health.failed("connect", &e),
        };
        let mut con: Option<redis::Connection> = None;
        let mut backoff = Backoff::new();
        let mut retry_at = Instant::now();
        let mut trimmed = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(facts) => {
                    self.take(facts);
                    // Gather what follows for a moment: one write per
                    // LINGER, not one per drain of the analysis thread.
                    let until = Instant::now() + LINGER;
                    while self.backlog.len() < PIPELINE {
                        let left = until.saturating_duration_since(Instant::now());
                        match rx.recv_timeout(left) {
                            Ok(more) => self.take(more),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) if !stop.load(Ordering::Acquire) => {
                    nap(Duration::from_millis(100), stop);
                }
                Err(RecvTimeoutError::Disconnected) => {}
            }
            while let Ok(facts) = rx.try_recv() {
                self.take(facts);
            }
            if stop.load(Ordering::Acquire) {
                return self.flush(&client, con);
            }
            let trim_due = trimmed.elapsed() >= TRIM_EVERY;
            if (self.backlog.is_empty() && !trim_due) || Instant::now() < retry_at {
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
            let done = self.write(c).and_then(|()| {
                if trim_due {
                    trimmed = Instant::now();
                    self.trim(c)?;
                }
                Ok(())
            });
            match done {
                Ok(()) => {
                    self.health.answered();
                    backoff.reset();
                }
                Err(e) => {
                    self.health.failed("publish", &e);
                    con = None;
                    retry_at = Instant::now() + backoff.step();
                }
            }
        }
    }

    fn take(&mut self, facts: Vec<Fact>) {
        for f in facts {
            if self.backlog.len() >= MAX_BACKLOG {
                self.backlog.pop_front();
                self.dropped.inc();
            }
            self.backlog.push_back(f);
        }
    }

    /// Writes the backlog, a pipeline at a time; what was not written stays
    /// (a pipeline that failed part-way is written again: a fact heard
    /// twice changes nothing).
    fn write(&mut self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        while !self.backlog.is_empty() {
            let n = self.backlog.len().min(PIPELINE);
            let mut pipe = redis::pipe();
            let batch = &self.backlog.make_contiguous()[..n];
            for facts in batch.chunks(wire::PACK) {
                pipe.cmd("XADD")
                    .arg(&self.settings.stream)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(self.settings.max_len)
                    .arg("*")
                    .arg("v")
                    .arg(wire::FORMAT)
                    .arg("r")
                    .arg(&self.replica)
                    .arg("f")
                    .arg(wire::pack(facts))
                    .ignore();
            }
            pipe.query::<()>(con)?;
            self.backlog.drain(..n);
            self.published.inc_by(n as u64);
        }
        Ok(())
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
    fn flush(mut self, client: &redis::Client, con: Option<redis::Connection>) {
        if self.backlog.is_empty() {
            return;
        }
        let written = match con {
            Some(mut c) => self.write(&mut c),
            None => connect(client, FLUSH_TIMEOUT).and_then(|mut c| self.write(&mut c)),
        };
        if let Err(e) = written {
            self.health.failed("publish", &e);
            self.dropped.inc_by(self.backlog.len() as u64);
        }
    }
}

//! The reading thread: the other replicas' facts, read from the stream in
//! order (from its start when the replica starts, so a late one knows the
//! recent past) and handed to the analysis thread as one message per read.
//!
//! Reads go through a script on the server (`READ`), so what comes back is
//! bounded whatever the stream holds: at most `READ_COUNT` entries and
//! `max_read_bytes` of their fields, an entry over `entry::MAX_ENTRY` named
//! by its id and size only, and no entry whose id lies beyond the server's
//! clock plus `SKEW` (one written at the largest id cannot stop the reading,
//! nor move where it resumes). A plain `XREAD` would bring whole entries of
//! any size; the price is a poll instead of a blocking read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prometheus::IntCounter;
use redis::Value;

use super::entry::{self, Skip};
use super::{connect, nap, reconnects, Health, ShareSettings, COMMAND_TIMEOUT, SKEW};
use crate::analysis::msg::{HeardFacts, Msg};
use crate::analysis::queue::Sender;
use crate::analysis::shards::Shards;
use crate::lifecycle::registry::Fact;
use crate::lifecycle::timestamp;

/// Entries read per round trip (each up to `entry::PACK` facts).
const READ_COUNT: usize = 64;
/// Shortest time between two reads that found facts.
const PACE: Duration = Duration::from_millis(5);
/// Longest time between two reads while the stream is quiet (the wait
/// doubles from `PACE` up to it).
const IDLE_POLL: Duration = Duration::from_millis(10);
/// How long a read waits for the analysis queue's byte budget to take
/// what it heard before it tries again.
const QUEUE_RETRY: Duration = Duration::from_millis(5);

/// The read, on the server: the entries after `ARGV[1]` up to the server's
/// clock plus the skew (`ARGV[5]` ms), one `XRANGE` at a time so that the
/// server too holds one entry at a time; at most `ARGV[2]` entries and
/// `ARGV[4]` bytes of fields; an entry over `ARGV[3]` bytes comes back as
/// its id and size.
const READ: &str = r"
local stream, last = KEYS[1], ARGV[1]
local count, max_entry, budget = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local horizon = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[5]))
local out, total = {}, 0
for _ = 1, count do
  local e = redis.call('XRANGE', stream, '(' .. last, horizon, 'COUNT', 1)[1]
  if not e then break end
  local size = 0
  for _, v in ipairs(e[2]) do size = size + #v end
  if size > max_entry then
    out[#out + 1] = {e[1], size}
  elseif total + size > budget and #out > 0 then
    break
  else
    total = total + size
    out[#out + 1] = e
  end
  last = e[1]
end
return out
";

/// A stream entry: its id and its fields, or its size when it is over
/// `entry::MAX_ENTRY` (not brought).
type Entry = (String, Result<Vec<(Vec<u8>, Vec<u8>)>, i64>);

pub(super) struct Consuming {
    settings: ShareSettings,
    replica: String,
    health: Health,
    received: IntCounter,
    /// The analysis threads' queues: each entry goes to its route's.
    shards: Arc<Shards>,
    /// The id of the last entry read (`0`: from the stream's start).
    last_id: String,
}

impl Consuming {
    pub(super) fn new(
        settings: ShareSettings,
        replica: String,
        health: Health,
        received: IntCounter,
        shards: Arc<Shards>,
    ) -> Consuming {
        Consuming {
            settings,
            replica,
            health,
            received,
            shards,
            last_id: "0".to_string(),
        }
    }

    pub(super) fn run(mut self, stop: &AtomicBool) {
        let client = match redis::Client::open(self.settings.url.as_str()) {
            Ok(c) => c,
            Err(e) => return self.health.failed("connect", &e),
        };
        let mut con: Option<(redis::Connection, String)> = None;
        let mut backoff = reconnects();
        let mut idle = PACE;
        while !stop.load(Ordering::Acquire) {
            let (c, sha) = match con.as_mut() {
                Some(c) => c,
                None => match connect(&client, COMMAND_TIMEOUT).and_then(|mut c| {
                    let sha: String = redis::cmd("SCRIPT").arg("LOAD").arg(READ).query(&mut c)?;
                    Ok((c, sha))
                }) {
                    Ok(c) => con.insert(c),
                    Err(e) => {
                        self.health.failed("connect", &e);
                        nap(backoff.step(), stop);
                        continue;
                    }
                },
            };
            let began = Instant::now();
            match self.read(c, sha) {
                Ok(entries) => {
                    self.health.answered();
                    backoff.reset();
                    let found = !entries.is_empty();
                    let heard = self.heard(entries);
                    if !heard.is_empty() && !self.hand_over(heard, stop) {
                        return;
                    }
                    // Reads at most every PACE while facts keep coming (a
                    // read per burst, not per entry), less often when quiet.
                    idle = if found {
                        PACE
                    } else {
                        (idle * 2).min(IDLE_POLL)
                    };
                    nap(idle.saturating_sub(began.elapsed()), stop);
                }
                Err(e) => {
                    self.health.failed("read", &e);
                    con = None;
                    nap(backoff.step(), stop);
                }
            }
        }
    }

    /// One read: the entries after `last_id`, bounded (see `READ`).
    fn read(&mut self, con: &mut redis::Connection, sha: &str) -> Result<Vec<Entry>, ReadError> {
        let reply: Value = redis::cmd("EVALSHA")
            .arg(sha)
            .arg(1)
            .arg(&self.settings.stream)
            .arg(&self.last_id)
            .arg(READ_COUNT)
            .arg(entry::MAX_ENTRY)
            .arg(self.settings.max_read_bytes)
            .arg(SKEW.as_millis() as u64)
            .query(con)?;
        entries(reply)
    }

    /// The facts of `entries` that other replicas wrote, each entry read
    /// whole or skipped (counted under why); `last_id` moves past them.
    fn heard(&mut self, entries: Vec<Entry>) -> Vec<entry::Read> {
        let reader = entry::Reader {
            own: &self.replica,
            stream: &self.settings.stream,
            key: self.settings.key.as_ref(),
        };
        let horizon = wall_secs().saturating_add(SKEW.as_secs());
        let mut heard = Vec::new();
        for (id, fields) in entries {
            let read = match &fields {
                Ok(fields) => reader.read(fields),
                Err(size) => Err(Skip::Oversized(format!(
                    "{size} bytes, over the {} an entry may hold (not read)",
                    entry::MAX_ENTRY
                ))),
            };
            match read {
                Ok(None) => {}
                Ok(Some((from, route, mut facts))) => {
                    for f in &mut facts {
                        if future(f, horizon) {
                            f.timestamp = None;
                            self.health.skipped(
                                "future_timestamp",
                                &format_args!(
                                    "entry {id}: a status timestamp more than {}s past this \
                                     replica's clock; the fact is used without it",
                                    SKEW.as_secs()
                                ),
                            );
                        }
                    }
                    heard.push((from, route, facts));
                }
                Err(why) => self
                    .health
                    .skipped(why.op(), &format_args!("entry {id} skipped: {why}")),
            }
            self.last_id = id;
        }
        heard
    }

    /// Queues what was heard for the analysis threads (each entry for its
    /// route's), within each queue's byte budget: while a budget is spent,
    /// waits (Redis keeps the entries meanwhile; nothing is dropped). False
    /// once stopped.
    fn hand_over(&self, heard: Vec<entry::Read>, stop: &AtomicBool) -> bool {
        let mut by_thread: Vec<Vec<entry::Read>> = std::iter::repeat_with(Vec::new)
            .take(self.shards.all().len())
            .collect();
        for read in heard {
            let i = self.shards.index_of(read.1.as_deref());
            by_thread[i].push(read);
        }
        for (tx, heard) in self.shards.all().iter().zip(by_thread) {
            if !heard.is_empty() && !self.queue_facts(tx, heard, stop) {
                return false;
            }
        }
        true
    }

    /// Queues `heard` for one analysis thread, waiting while its budget
    /// is spent; false once stopped.
    fn queue_facts(&self, tx: &Sender<Msg>, heard: Vec<entry::Read>, stop: &AtomicBool) -> bool {
        let n: usize = heard.iter().map(|(_, _, f)| f.len()).sum();
        let bytes: usize = heard
            .iter()
            .map(|(from, route, facts)| {
                from.len()
                    + route.as_deref().map_or(0, str::len)
                    + facts.iter().map(held).sum::<usize>()
            })
            .sum();
        let mut msg = Some(Msg::Facts(HeardFacts {
            entries: heard,
            bytes,
        }));
        loop {
            let sent = tx.send_with(bytes, |b| {
                if let Some(m) = msg.take() {
                    b.items.push(m);
                }
            });
            if sent {
                // Counted once queued: what the count shows is in the
                // analysis thread's order.
                self.received.inc_by(n as u64);
                return true;
            }
            if stop.load(Ordering::Acquire) {
                return false;
            }
            nap(QUEUE_RETRY, stop);
        }
    }
}

/// The bytes a fact holds while it waits for the analysis thread.
fn held(f: &Fact) -> usize {
    std::mem::size_of::<Fact>()
        + f.task_id.len()
        + f.context_id.as_deref().map_or(0, str::len)
        + f.timestamp.as_deref().map_or(0, str::len)
}

/// Whether `f`'s status timestamp lies past `horizon` (Unix seconds).
fn future(f: &Fact, horizon: u64) -> bool {
    let stamp = f.timestamp.as_deref().and_then(timestamp::parse);
    stamp.is_some_and(|s| s.secs > i64::try_from(horizon).unwrap_or(i64::MAX))
}

fn wall_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Why a read of the stream failed.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("{0}")]
    Redis(#[from] redis::RedisError),
    #[error("a read reply that is not an array")]
    NotAnArray,
    #[error("an entry that is not [id, fields]")]
    NotAnEntry,
    #[error("an entry id that is not text")]
    IdNotText,
    #[error("entry {0}: fields that are not name, value pairs")]
    NotPairs(String),
}

/// The entries of a `READ` reply; another shape is an error.
fn entries(reply: Value) -> Result<Vec<Entry>, ReadError> {
    let list = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(list) => list,
        _ => return Err(ReadError::NotAnArray),
    };
    list.into_iter().map(entry_of).collect()
}

fn entry_of(entry: Value) -> Result<Entry, ReadError> {
    let Value::Array(parts) = entry else {
        return Err(ReadError::NotAnEntry);
    };
    let mut parts = parts.into_iter();
    let (Some(id), fields, None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ReadError::NotAnEntry);
    };
    let id = bytes(id).and_then(|b| String::from_utf8(b).ok());
    let Some(id) = id else {
        return Err(ReadError::IdNotText);
    };
    let flat = match fields {
        Some(Value::Int(size)) => return Ok((id, Err(size))),
        Some(Value::Array(flat)) => flat,
        _ => Vec::new(),
    };
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    let mut flat = flat.into_iter();
    while let Some(name) = flat.next() {
        match (bytes(name), flat.next().and_then(bytes)) {
            (Some(n), Some(v)) => pairs.push((n, v)),
            _ => return Err(ReadError::NotPairs(id)),
        }
    }
    Ok((id, Ok(pairs)))
}

fn bytes(v: Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn read_replies() {
        let entry = Value::Array(vec![
            bulk("1-0"),
            Value::Array(vec![bulk("t"), bulk("x"), bulk("s"), bulk("working")]),
        ]);
        let big = Value::Array(vec![bulk("2-0"), Value::Int(1 << 30)]);
        let got = entries(Value::Array(vec![entry, big])).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "1-0");
        assert_eq!(
            got[0].1.as_ref().unwrap()[1],
            (b"s".to_vec(), b"working".to_vec())
        );
        assert_eq!(got[1], ("2-0".to_string(), Err(1 << 30)));
        assert!(entries(Value::Nil).unwrap().is_empty());
        assert!(entries(Value::Int(3)).is_err());
        let odd = Value::Array(vec![Value::Array(vec![
            bulk("2-0"),
            Value::Array(vec![bulk("t")]),
        ])]);
        assert!(entries(odd).is_err());
    }

    #[test]
    fn a_timestamp_past_the_horizon_is_the_future() {
        let f = |ts: &str| Fact {
            task_id: "t".into(),
            context_id: None,
            state: crate::a2a::model::TaskState::Working,
            timestamp: Some(ts.into()),
        };
        let now = wall_secs() + SKEW.as_secs();
        assert!(future(&f("9999-12-31T23:59:59Z"), now));
        assert!(!future(&f("2020-01-01T00:00:00Z"), now));
        assert!(!future(&f("not a time"), now));
    }
}

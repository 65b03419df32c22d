//! The reading thread: the other replicas' facts, read from the stream in
//! order (from its start when the replica starts, so a late one knows the
//! recent past) and handed to the analysis thread as one message per read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use prometheus::IntCounter;
use redis::Value;

use super::{connect, nap, wire, Backoff, Health, ShareSettings, COMMAND_TIMEOUT};
use crate::lifecycle::registry::Fact;
use crate::tap::queue::Sender;
use crate::tap::worker::Msg;

/// Entries read per round trip (each up to `wire::PACK` facts).
const READ_COUNT: usize = 64;
/// Shortest time between two reads that found facts.
const PACE: Duration = Duration::from_millis(5);
/// How long a read waits for new entries (and so how soon a stop is seen).
const BLOCK: Duration = Duration::from_millis(500);

/// A stream entry: its id and its fields.
type Entry = (String, Vec<(Vec<u8>, Vec<u8>)>);

pub(super) struct Consuming {
    settings: ShareSettings,
    replica: String,
    health: Health,
    received: IntCounter,
    queue: Sender<Msg>,
    /// The id of the last entry read (`0`: from the stream's start).
    last_id: String,
}

impl Consuming {
    pub(super) fn new(
        settings: ShareSettings,
        replica: String,
        health: Health,
        received: IntCounter,
        queue: Sender<Msg>,
    ) -> Consuming {
        Consuming {
            settings,
            replica,
            health,
            received,
            queue,
            last_id: "0".to_string(),
        }
    }

    pub(super) fn run(mut self, stop: &AtomicBool) {
        let client = match redis::Client::open(self.settings.url.as_str()) {
            Ok(c) => c,
            Err(e) => return self.health.failed("connect", &e),
        };
        let mut con: Option<redis::Connection> = None;
        let mut backoff = Backoff::new();
        while !stop.load(Ordering::Acquire) {
            let c = match con.as_mut() {
                Some(c) => c,
                None => match connect(&client, BLOCK + COMMAND_TIMEOUT) {
                    Ok(c) => con.insert(c),
                    Err(e) => {
                        self.health.failed("connect", &e);
                        nap(backoff.step(), stop);
                        continue;
                    }
                },
            };
            let began = Instant::now();
            match self.read(c) {
                Ok(facts) => {
                    self.health.answered();
                    backoff.reset();
                    if !facts.is_empty() {
                        // Counted once queued: what the count shows is in
                        // the analysis thread's order.
                        let n = facts.len() as u64;
                        self.queue.send(Msg::Facts(facts));
                        self.received.inc_by(n);
                        // Reads at most every PACE while facts keep coming:
                        // a read per burst, not per entry.
                        nap(PACE.saturating_sub(began.elapsed()), stop);
                    }
                }
                Err(e) => {
                    self.health.failed("read", &e);
                    con = None;
                    nap(backoff.step(), stop);
                }
            }
        }
    }

    /// One read: the facts of the entries after `last_id` that other
    /// replicas wrote. An entry that is not a whole fact is skipped
    /// (counted as `decode`); none of it is used.
    fn read(&mut self, con: &mut redis::Connection) -> Result<Vec<Fact>, String> {
        let reply: Value = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(READ_COUNT)
            .arg("BLOCK")
            .arg(BLOCK.as_millis() as u64)
            .arg("STREAMS")
            .arg(&self.settings.stream)
            .arg(&self.last_id)
            .query(con)
            .map_err(|e| e.to_string())?;
        let mut facts = Vec::new();
        for (id, fields) in entries(reply)? {
            self.last_id = id;
            match wire::read(&fields, &self.replica) {
                Ok(None) => {}
                Ok(Some(some)) => facts.extend(some),
                Err(why) => self
                    .health
                    .failed("decode", &format_args!("entry {}: {why}", self.last_id)),
            }
        }
        Ok(facts)
    }
}

/// The entries of an XREAD reply (RESP2 arrays or RESP3 maps); nil when
/// the read timed out. A reply of another shape is an error.
fn entries(reply: Value) -> Result<Vec<Entry>, String> {
    let streams = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(streams) => streams
            .into_iter()
            .map(|s| match s {
                Value::Array(mut kv) if kv.len() == 2 => Ok(kv.swap_remove(1)),
                _ => Err("a stream that is not [key, entries]".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Value::Map(streams) => streams.into_iter().map(|(_, v)| v).collect(),
        _ => return Err("an XREAD reply that is not an array".to_string()),
    };
    let mut out = Vec::new();
    for list in streams {
        let Value::Array(list) = list else {
            return Err("stream entries that are not an array".to_string());
        };
        for entry in list {
            out.push(entry_of(entry)?);
        }
    }
    Ok(out)
}

fn entry_of(entry: Value) -> Result<Entry, String> {
    let Value::Array(parts) = entry else {
        return Err("an entry that is not [id, fields]".to_string());
    };
    let mut parts = parts.into_iter();
    let (Some(id), fields, None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("an entry that is not [id, fields]".to_string());
    };
    let id = bytes(id).and_then(|b| String::from_utf8(b).ok());
    let Some(id) = id else {
        return Err("an entry id that is not text".to_string());
    };
    let flat = match fields {
        Some(Value::Array(flat)) => flat,
        _ => Vec::new(),
    };
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    let mut flat = flat.into_iter();
    while let Some(name) = flat.next() {
        match (bytes(name), flat.next().and_then(bytes)) {
            (Some(n), Some(v)) => pairs.push((n, v)),
            _ => return Err(format!("entry {id}: fields that are not name, value pairs")),
        }
    }
    Ok((id, pairs))
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
    fn xread_replies_in_both_protocols() {
        let entry = Value::Array(vec![
            bulk("1-0"),
            Value::Array(vec![bulk("t"), bulk("x"), bulk("s"), bulk("working")]),
        ]);
        let resp2 = Value::Array(vec![Value::Array(vec![
            bulk("k"),
            Value::Array(vec![entry.clone()]),
        ])]);
        let resp3 = Value::Map(vec![(bulk("k"), Value::Array(vec![entry]))]);
        for reply in [resp2, resp3] {
            let got = entries(reply).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].0, "1-0");
            assert_eq!(got[0].1[1], (b"s".to_vec(), b"working".to_vec()));
        }
        assert!(entries(Value::Nil).unwrap().is_empty());
        assert!(entries(Value::Int(3)).is_err());
        let odd = Value::Array(vec![Value::Array(vec![
            bulk("k"),
            Value::Array(vec![Value::Array(vec![
                bulk("2-0"),
                Value::Array(vec![bulk("t")]),
            ])]),
        ])]);
        assert!(entries(odd).is_err());
    }
}

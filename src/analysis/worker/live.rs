//! The exchanges being judged, by request id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use super::Worker;
use crate::engine::ExchangeEngine;
use crate::judge::Folds;
use crate::report::audit::Record;

pub(super) struct Live {
    pub(super) engine: ExchangeEngine,
    /// What `engine.held_bytes()` was after its last piece.
    pub(super) held: usize,
    pub(super) opened: Instant,
    /// When its first event passed.
    pub(super) first_event: Option<Instant>,
    /// Findings recorded on it so far (for its access-log line).
    pub(super) findings: u64,
    /// Its records held for repeats to fold into.
    pub(super) folds: Folds<Record>,
    /// For an agent-card fetch, the authority the caller used.
    pub(super) host: Option<Box<str>>,
    /// Its trace id (hex) for its records: the caller's, or its span's.
    pub(super) trace_id: Option<Box<str>>,
    /// Its span, when it is traced.
    pub(super) span: Option<Box<crate::trace::span::OpenSpan>>,
    /// When (on the judging clock) the stream had its last word and should
    /// have closed (`stream_not_closed`); and whether that was reported.
    pub(super) over_at: Option<Instant>,
    pub(super) close_reported: bool,
    /// `subscriber_not_notified` was reported.
    pub(super) notify_reported: bool,
}

/// Maps keyed by request id, looked up for every message.
type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The exchanges being judged.
#[derive(Default)]
pub(super) struct LiveSet(IdMap<Live>);

impl LiveSet {
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn open(&mut self, id: u64, live: Live) {
        self.0.insert(id, live);
    }

    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Live> {
        self.0.get_mut(&id)
    }

    /// The exchanges being judged, with their ids.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (u64, &mut Live)> {
        self.0.iter_mut().map(|(id, l)| (*id, l))
    }

    /// The ids of the exchanges being judged.
    pub(super) fn ids(&self) -> Vec<u64> {
        self.0.keys().copied().collect()
    }

    /// Drops `id`'s state; what it held, if it was there.
    pub(super) fn discard(&mut self, id: u64) -> Option<usize> {
        self.0.remove(&id).map(|live| live.held)
    }
}

/// Request ids are the proxy's own counter, never chosen by a peer: one
/// multiply spreads them, and SipHash's flood resistance buys nothing.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(self.0 ^ u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Worker {
    /// Stops judging `id`, releasing what it held; whether it was judged.
    pub(super) fn forget(&mut self, id: u64) -> bool {
        // What it found so far is written, not lost with it; its span ends.
        self.flush_folds(id);
        if let Some(live) = self.live.get_mut(id) {
            if let (Some(tracer), Some(span)) = (&mut self.tracer, live.span.take()) {
                tracer.end(&span, live, Instant::now());
            }
            live.engine.release(&mut self.registry);
        }
        let Some(held) = self.live.discard(id) else {
            return false;
        };
        self.held -= held;
        true
    }
}

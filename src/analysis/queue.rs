//! The one FIFO from the observers to the analysis thread. Senders append
//! under a short lock (no allocation once the buffers have grown, no
//! wake-up unless the thread is parked); the analysis thread takes all that
//! is queued at once, swapping buffers, so each drain costs one lock. Items
//! may refer to bytes the senders copy into the queue's byte buffer, which
//! is swapped with the items: the bytes cross threads in buffers that are
//! reused, never in allocations one thread makes and the other frees. The
//! same lock keeps the byte budget: bytes sent and not yet given back by
//! the receiver are bounded, their count changed only under it. Both
//! counts, items sent and bytes in flight, are read without the lock:
//! by senders, the place a message sent then would take in the order; by
//! the receiver, whether judging keeps up.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// A drained buffer bigger than this many messages is not kept for reuse
/// (a burst must not pin its memory for the process's life)...
const KEEP_CAPACITY: usize = 1 << 16;
/// ...nor a byte buffer bigger than this.
const KEEP_BYTES: usize = 4 << 20;

struct Queue<T> {
    state: Mutex<State<T>>,
    queued: Condvar,
    /// Most bytes in flight.
    limit: usize,
    /// Items sent so far, counted after they are in `items` (updated
    /// under the lock, read without it).
    sent: AtomicU64,
    /// Bytes sent (or reserved) and not yet given back: changed only
    /// under the lock, read without it.
    in_flight: AtomicUsize,
}

struct State<T> {
    items: Vec<T>,
    /// The bytes the items refer to (`Batch::bytes`).
    bytes: Vec<u8>,
    /// The receiver is waiting on `queued`: the next send must wake it.
    parked: bool,
}

impl<T> Queue<T> {
    /// The state; a panic elsewhere while holding the lock leaves a
    /// consistent `Vec`, so poisoning is ignored rather than spread.
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `bytes` of the budget if they fit: true if so. `_locked`
    /// shows the lock is held, which orders every change of `in_flight`
    /// (so a load and a store suffice).
    fn admit(&self, _locked: &State<T>, bytes: usize) -> bool {
        match self.in_flight.load(Ordering::Relaxed).checked_add(bytes) {
            Some(n) if n <= self.limit => {
                self.in_flight.store(n, Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// Gives back `bytes` of the budget.
    fn free(&self, bytes: usize) {
        if bytes > 0 {
            let _locked = self.lock();
            let n = self.in_flight.load(Ordering::Relaxed).saturating_sub(bytes);
            self.in_flight.store(n, Ordering::Relaxed);
        }
    }

    /// How many items have been sent, in all.
    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }
}

/// The sending side; clones share the queue.
pub(crate) struct Sender<T>(Arc<Queue<T>>);

/// The receiving side (one).
pub(crate) struct Receiver<T>(Arc<Queue<T>>);

/// A new, empty queue allowing `limit` bytes in flight.
pub(crate) fn queue<T>(limit: usize) -> (Sender<T>, Receiver<T>) {
    let q = Arc::new(Queue {
        state: Mutex::new(State {
            items: Vec::new(),
            bytes: Vec::new(),
            parked: false,
        }),
        queued: Condvar::new(),
        limit,
        sent: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
    });
    (Sender(q.clone()), Receiver(q))
}

// === impl Sender ===

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender(self.0.clone())
    }
}

impl<T> Sender<T> {
    /// Appends `item`; never waits for the receiver.
    pub(crate) fn send(&self, item: T) {
        let mut state = self.0.lock();
        state.items.push(item);
        self.release(state, 1);
    }

    /// How many items have been sent, in all: every item counted was in
    /// the queue before this call (one being sent at the same moment may
    /// not be counted yet).
    pub(crate) fn sent(&self) -> u64 {
        self.0.sent()
    }

    /// If `bytes` more fit in the budget, lets `fill` append items, in
    /// order, in one hand-over (no other sender's items come between them),
    /// and the bytes they refer to, and answers true; otherwise calls
    /// nothing and answers false. Never waits for the receiver; `fill` runs
    /// under the queue's lock, so it must only move items and copy bytes in.
    pub(crate) fn send_with(&self, bytes: usize, fill: impl FnOnce(&mut Batch<'_, T>)) -> bool {
        let mut state = self.0.lock();
        if !self.0.admit(&state, bytes) {
            return false;
        }
        let before = state.items.len();
        let State { items, bytes, .. } = &mut *state;
        fill(&mut Batch { items, bytes });
        let added = state.items.len() - before;
        self.release(state, added);
        true
    }

    /// Takes `bytes` of the budget for bytes held outside the queue (a
    /// request body gathered for classification): true if they fit.
    /// Whatever analysis holds, queued or gathered, shares one bound.
    pub(crate) fn reserve(&self, bytes: usize) -> bool {
        let state = self.0.lock();
        self.0.admit(&state, bytes)
    }

    /// Gives back `bytes` taken by `reserve`.
    pub(crate) fn unreserve(&self, bytes: usize) {
        self.0.free(bytes);
    }

    /// Counts the `added` items and releases the lock, waking the receiver
    /// if it is parked.
    fn release(&self, mut state: MutexGuard<'_, State<T>>, added: usize) {
        // Only ever changed under the lock: a load and a store suffice.
        let sent = self.0.sent.load(Ordering::Relaxed);
        self.0.sent.store(sent + added as u64, Ordering::Release);
        let wake = std::mem::take(&mut state.parked);
        drop(state);
        if wake {
            self.0.queued.notify_one();
        }
    }
}

/// What a sender appends in one hand-over: items, and the bytes they refer
/// to by their place in `bytes` (which holds what earlier items of the
/// same drain refer to as well).
pub(crate) struct Batch<'a, T> {
    pub(crate) items: &'a mut Vec<T>,
    pub(crate) bytes: &'a mut Vec<u8>,
}

impl<T> Batch<'_, T> {
    /// Copies `data` in; where it lies in the bytes taken with the items.
    pub(crate) fn copy(&mut self, data: &[u8]) -> std::ops::Range<usize> {
        let from = self.bytes.len();
        self.bytes.extend_from_slice(data);
        from..self.bytes.len()
    }
}

// === impl Receiver ===

impl<T> Receiver<T> {
    /// Moves everything queued, in order, into `into`, and the bytes the
    /// items refer to into `bytes` (both must be empty; their capacity is
    /// handed to the senders for reuse).
    pub(crate) fn take(&self, into: &mut Vec<T>, bytes: &mut Vec<u8>) {
        debug_assert!(into.is_empty() && bytes.is_empty());
        if into.capacity() > KEEP_CAPACITY {
            *into = Vec::new();
        }
        if bytes.capacity() > KEEP_BYTES {
            *bytes = Vec::new();
        }
        let mut state = self.0.lock();
        std::mem::swap(&mut state.items, into);
        std::mem::swap(&mut state.bytes, bytes);
    }

    /// How many items have been sent, in all (as `Sender::sent`): with
    /// the count taken so far, how far the receiver is behind.
    pub(crate) fn sent(&self) -> u64 {
        self.0.sent()
    }

    /// The bytes in flight when last changed, read without the lock (a
    /// change being made at the same moment may not be seen), and the
    /// most there may be.
    pub(crate) fn in_flight(&self) -> (usize, usize) {
        (self.0.in_flight.load(Ordering::Relaxed), self.0.limit)
    }

    /// Gives back `bytes` of the budget (what was judged).
    pub(crate) fn give_back(&self, bytes: usize) {
        self.0.free(bytes);
    }

    /// Parks until something is queued or `timeout` passes.
    pub(crate) fn wait(&self, timeout: Duration) {
        let mut state = self.0.lock();
        if !state.items.is_empty() {
            return;
        }
        state.parked = true;
        let (mut state, _) = self
            .0
            .queued
            .wait_timeout_while(state, timeout, |s| s.items.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        state.parked = false;
    }

    /// Whether every sender has been dropped.
    pub(crate) fn senders_gone(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }
}

#[cfg(test)]
mod tests;

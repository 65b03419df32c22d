//! The one FIFO from the observers to the analysis thread. Senders append
//! under a short lock (no allocation once the buffers have grown, no
//! wake-up unless the thread is parked); the analysis thread takes all that
//! is queued at once, swapping buffers, so each drain costs one lock. Items
//! may refer to bytes the senders copy into the queue's byte buffer, which
//! is swapped with the items: the bytes cross threads in buffers that are
//! reused, never in allocations one thread makes and the other frees. The
//! same lock keeps the byte budget: bytes sent and not yet given back by
//! the receiver are bounded, with no second shared counter to update.
//! Senders read, without the lock, how many items have been sent: the
//! place a message sent then would take in the order.

use std::sync::atomic::{AtomicU64, Ordering};
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
}

struct State<T> {
    items: Vec<T>,
    /// The bytes the items refer to (`Batch::bytes`).
    bytes: Vec<u8>,
    /// Bytes sent and not yet given back.
    in_flight: usize,
    /// The receiver is waiting on `queued`: the next send must wake it.
    parked: bool,
}

impl<T> Queue<T> {
    /// The state; a panic elsewhere while holding the lock leaves a
    /// consistent `Vec`, so poisoning is ignored rather than spread.
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
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
            in_flight: 0,
            parked: false,
        }),
        queued: Condvar::new(),
        limit,
        sent: AtomicU64::new(0),
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
        self.0.sent.load(Ordering::Acquire)
    }

    /// If `bytes` more fit in the budget, lets `fill` append items, in
    /// order, in one hand-over (no other sender's items come between them),
    /// and the bytes they refer to, and answers true; otherwise calls
    /// nothing and answers false. Never waits for the receiver; `fill` runs
    /// under the queue's lock, so it must only move items and copy bytes in.
    pub(crate) fn send_with(&self, bytes: usize, fill: impl FnOnce(&mut Batch<'_, T>)) -> bool {
        let mut state = self.0.lock();
        match state.in_flight.checked_add(bytes) {
            Some(n) if n <= self.0.limit => state.in_flight = n,
            _ => return false,
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
        let mut state = self.0.lock();
        match state.in_flight.checked_add(bytes) {
            Some(n) if n <= self.0.limit => {
                state.in_flight = n;
                true
            }
            _ => false,
        }
    }

    /// Gives back `bytes` taken by `reserve`.
    pub(crate) fn unreserve(&self, bytes: usize) {
        if bytes > 0 {
            let mut state = self.0.lock();
            state.in_flight = state.in_flight.saturating_sub(bytes);
        }
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

    /// Gives back `bytes` of the budget (what was judged).
    pub(crate) fn give_back(&self, bytes: usize) {
        if bytes > 0 {
            let mut state = self.0.lock();
            state.in_flight = state.in_flight.saturating_sub(bytes);
        }
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
mod tests {
    use super::*;
    use std::time::Instant;

    /// Runs `send(tx, t)` on four threads (`t` = 0..4) and takes all they sent.
    fn sent_by_four_threads(
        send: impl Fn(&Sender<(usize, usize)>, usize) + Clone + Send + 'static,
    ) -> Vec<(usize, usize)> {
        let (tx, rx) = queue::<(usize, usize)>(usize::MAX);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (tx, send) = (tx.clone(), send.clone());
                std::thread::spawn(move || send(&tx, t))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().expect("sender"));
        let mut all = Vec::new();
        rx.take(&mut all, &mut Vec::new());
        all
    }

    #[test]
    fn items_come_out_in_the_order_they_were_sent_from_all_threads() {
        let all = sent_by_four_threads(|tx, t| (0..10_000).for_each(|i| tx.send((t, i))));
        assert_eq!(all.len(), 40_000);
        // Each sender's items keep their order.
        let mut next = [0usize; 4];
        for (t, i) in all {
            assert_eq!(i, next[t], "sender {t}");
            next[t] += 1;
        }
    }

    #[test]
    fn bytes_past_the_budget_are_refused_until_given_back() {
        let (tx, rx) = queue::<u32>(100);
        let send = |items: &[u32], bytes| tx.send_with(bytes, |q| q.items.extend_from_slice(items));
        assert!(send(&[1, 2], 60));
        let refused = tx.send_with(41, |_| panic!("filled over the budget"));
        assert!(!refused, "61..=101 is over");
        assert!(send(&[4, 5], 40), "exactly the limit");
        tx.send(6); // weightless
        assert!(!send(&[7], 1));
        let mut got = Vec::new();
        rx.take(&mut got, &mut Vec::new());
        assert_eq!(got, [1, 2, 4, 5, 6], "a refused batch is not queued");
        assert!(!send(&[8], 1), "taken is not given back");
        rx.give_back(60);
        assert!(send(&[9], 60));
        assert!(!send(&[10], usize::MAX), "no overflow");
    }

    #[test]
    fn a_batch_is_not_interleaved_with_other_senders() {
        let all = sent_by_four_threads(|tx, t| {
            for b in 0..1_000 {
                assert!(tx.send_with(0, |q| q.items.extend((0..5).map(|i| (t, b * 5 + i)))));
            }
        });
        assert_eq!(all.len(), 20_000);
        for batch in all.chunks(5) {
            let (t, first) = batch[0];
            assert_eq!(first % 5, 0, "a batch starts at its first item");
            let expected: Vec<_> = (first..first + 5).map(|i| (t, i)).collect();
            assert_eq!(batch, expected.as_slice());
        }
    }

    #[test]
    fn the_count_sent_is_what_was_queued_and_nothing_refused() {
        let (tx, rx) = queue::<u32>(10);
        assert_eq!(tx.sent(), 0);
        tx.send(1);
        assert!(tx.send_with(10, |q| q.items.extend([2, 3, 4])));
        assert!(!tx.send_with(1, |q| q.items.push(5)), "over the budget");
        assert!(tx.send_with(0, |_| {}), "an empty batch");
        assert_eq!(tx.sent(), 4);
        let mut got = Vec::new();
        rx.take(&mut got, &mut Vec::new());
        assert_eq!(got, [1, 2, 3, 4], "item n was the n-th counted");
        assert_eq!(tx.sent(), 4, "taking does not uncount");
        // From every thread, each item counted once.
        let all = sent_by_four_threads(|tx, t| (0..1_000).for_each(|i| tx.send((t, i))));
        assert_eq!(all.len(), 4_000);
    }

    #[test]
    fn a_parked_receiver_wakes_for_a_send_and_not_before() {
        let (tx, rx) = queue::<u32>(usize::MAX);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            tx.send(7);
        });
        let started = Instant::now();
        rx.wait(Duration::from_secs(30));
        let waited = started.elapsed();
        let mut got = Vec::new();
        rx.take(&mut got, &mut Vec::new());
        assert_eq!(got, [7]);
        assert!(waited >= Duration::from_millis(40), "{waited:?}");
        assert!(waited < Duration::from_secs(10), "{waited:?}");
        sender.join().expect("sender");
        assert!(rx.senders_gone());
    }

    #[test]
    fn waiting_on_an_empty_queue_times_out() {
        let (tx, rx) = queue::<u32>(usize::MAX);
        let started = Instant::now();
        rx.wait(Duration::from_millis(20));
        assert!(started.elapsed() >= Duration::from_millis(20));
        let mut got = Vec::new();
        rx.take(&mut got, &mut Vec::new());
        assert!(got.is_empty());
        assert!(!rx.senders_gone());
        drop(tx);
        assert!(rx.senders_gone());
    }

    #[test]
    fn items_find_their_bytes_in_the_buffer_taken_with_them() {
        let (tx, rx) = queue::<std::ops::Range<usize>>(usize::MAX);
        for piece in [&b"abc"[..], b"", b"defgh"] {
            assert!(tx.send_with(piece.len(), |q| {
                let at = q.copy(piece);
                q.items.push(at);
            }));
        }
        let (mut items, mut bytes) = (Vec::new(), Vec::new());
        rx.take(&mut items, &mut bytes);
        let pieces: Vec<&[u8]> = items.iter().map(|r| &bytes[r.clone()]).collect();
        assert_eq!(pieces, [&b"abc"[..], b"", b"defgh"]);
        // The next drain's bytes start afresh in the buffer handed back.
        items.clear();
        bytes.clear();
        rx.take(&mut items, &mut bytes);
        assert!(tx.send_with(2, |q| {
            let at = q.copy(b"ij");
            q.items.push(at);
        }));
        let (mut items, mut bytes) = (Vec::new(), Vec::new());
        rx.take(&mut items, &mut bytes);
        assert_eq!(items, vec![0..2]);
        assert_eq!(bytes, b"ij");
    }

    #[test]
    fn an_oversized_byte_buffer_is_not_kept() {
        let (tx, rx) = queue::<u8>(usize::MAX);
        let mut big = Vec::with_capacity(KEEP_BYTES + 1);
        rx.take(&mut Vec::new(), &mut big);
        assert!(rx.0.lock().bytes.capacity() <= KEEP_BYTES);
        assert!(tx.send_with(1, |q| {
            q.copy(b"x");
        }));
        let mut bytes = Vec::new();
        rx.take(&mut Vec::new(), &mut bytes);
        assert_eq!(bytes, b"x");
    }

    #[test]
    fn an_oversized_buffer_is_not_kept() {
        let (tx, rx) = queue::<u8>(usize::MAX);
        let mut big = Vec::with_capacity(KEEP_CAPACITY + 1);
        rx.take(&mut big, &mut Vec::new());
        // The senders append to a fresh buffer, never the oversized one.
        assert!(rx.0.lock().items.capacity() <= KEEP_CAPACITY);
        tx.send(1);
        let mut got = Vec::new();
        rx.take(&mut got, &mut Vec::new());
        assert_eq!(got, [1]);
    }
}

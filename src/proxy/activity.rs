//! One caller connection's activity, for the deadlines every connection
//! state has: the first request's headers (`header_read_timeout`, from the
//! accept: a caller that sends nothing, or an h2c preface and nothing more,
//! is closed), no exchange in flight (`idle_timeout`), and a response the
//! caller stopped taking (`write_timeout`). The exchanges and the
//! connection's HTTP/1.1 writer update it from the serving thread; the
//! connection's watchdog reads it (`verdict`).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The deadlines of a caller connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    pub header_read: Duration,
    pub idle: Duration,
    pub write: Duration,
}

/// Why a connection was closed by its watchdog: the `reason` label of
/// `a2a_connections_closed_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// No request headers within `header_read_timeout` of the accept.
    HeaderTimeout,
    /// No exchange in flight for `idle_timeout`.
    Idle,
    /// A response the caller took nothing of for `write_timeout`.
    WriteTimeout,
    /// Still open when the shutdown's grace period ran out (or at a second
    /// signal).
    Grace,
}

impl Closed {
    /// Every reason, for pre-registering label values.
    pub const ALL: [Closed; 4] = [
        Closed::HeaderTimeout,
        Closed::Idle,
        Closed::WriteTimeout,
        Closed::Grace,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Closed::HeaderTimeout => "header_timeout",
            Closed::Idle => "idle",
            Closed::WriteTimeout => "write_timeout",
            Closed::Grace => "grace",
        }
    }
}

/// What the watchdog does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Look again after this long.
    Wait(Duration),
    Close(Closed),
}

/// The activity of one caller connection.
#[derive(Debug)]
pub struct Activity {
    opened: Instant,
    /// Exchanges whose request arrived and that have not ended.
    in_flight: AtomicU32,
    /// Whether any request arrived.
    begun: AtomicU32,
    /// When (ms since `opened`) the last exchange ended.
    last_end: AtomicU64,
    /// Response chunks handed to the connection so far...
    handed: AtomicU64,
    /// ...and how many had been handed when a response body was last
    /// asked for more: while `handed` is ahead, the connection holds a
    /// chunk it has not written out.
    taken: AtomicU64,
    /// The connection's own writer (HTTP/1.1) waits for the caller to
    /// take bytes it is writing. It asks the body for more before it
    /// writes a chunk (to send an end already there with the data), so
    /// `taken` alone counts a chunk not yet written as taken.
    writing: AtomicBool,
    /// That writer's writes that moved bytes to the caller: a caller
    /// taking a long answer slowly is still taking it.
    wrote: AtomicU64,
    /// The watchdog's own note: what it saw ahead (`handed`, `wrote`), and
    /// since when.
    stalled: std::sync::Mutex<Option<((u64, u64), Instant)>>,
}

// === impl Activity ===

impl Activity {
    /// A connection accepted at `opened`.
    pub fn new(opened: Instant) -> Activity {
        Activity {
            opened,
            in_flight: AtomicU32::new(0),
            begun: AtomicU32::new(0),
            last_end: AtomicU64::new(0),
            handed: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            writing: AtomicBool::new(false),
            wrote: AtomicU64::new(0),
            stalled: std::sync::Mutex::new(None),
        }
    }

    /// An exchange's request arrived.
    pub fn begin(&self) {
        self.begun.store(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// An exchange ended (its request and response are done or dropped).
    pub fn end(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_end.store(ms, Ordering::Relaxed);
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// A response chunk was handed to the connection to write.
    pub fn handed(&self) {
        self.handed.fetch_add(1, Ordering::Relaxed);
    }

    /// A response body was asked for more: what was handed is written.
    pub fn taken(&self) {
        let handed = self.handed.load(Ordering::Relaxed);
        self.taken.store(handed, Ordering::Relaxed);
    }

    /// The connection's writer waits for the caller to take what it
    /// writes.
    pub fn write_waits(&self) {
        self.writing.store(true, Ordering::Relaxed);
    }

    /// The connection's writer moved bytes to the caller (`moved`), or
    /// its write ended without (an error).
    pub fn write_went(&self, moved: bool) {
        self.writing.store(false, Ordering::Relaxed);
        if moved {
            self.wrote.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What to do at `now` under `d`.
    pub fn verdict(&self, now: Instant, d: &Deadlines) -> Verdict {
        let age = now.saturating_duration_since(self.opened);
        if self.begun.load(Ordering::Relaxed) == 0 {
            return match d.header_read.checked_sub(age) {
                Some(left) if !left.is_zero() => Verdict::Wait(left),
                _ => Verdict::Close(Closed::HeaderTimeout),
            };
        }
        // An answer whose body has ended may still be being written: the
        // caller not taking it is a stalled write, not an idle connection.
        let writing = self.writing.load(Ordering::Relaxed);
        if self.in_flight.load(Ordering::Relaxed) == 0 && !writing {
            let last = Duration::from_millis(self.last_end.load(Ordering::Relaxed));
            let quiet = age.saturating_sub(last);
            return match d.idle.checked_sub(quiet) {
                Some(left) if !left.is_zero() => Verdict::Wait(left),
                _ => Verdict::Close(Closed::Idle),
            };
        }
        // In flight or writing: a chunk handed and never taken, or a write
        // the caller takes nothing of, the same since the last look, is a
        // caller that stopped reading.
        let handed = self.handed.load(Ordering::Relaxed);
        let wrote = self.wrote.load(Ordering::Relaxed);
        let ahead = handed > self.taken.load(Ordering::Relaxed) || writing;
        let mut stalled = self.stalled.lock().unwrap_or_else(|e| e.into_inner());
        let check = (d.write / 4).max(Duration::from_millis(250));
        match (*stalled, ahead) {
            (Some((seen, since)), true) if seen == (handed, wrote) => {
                if now.saturating_duration_since(since) >= d.write {
                    return Verdict::Close(Closed::WriteTimeout);
                }
            }
            (_, true) => *stalled = Some(((handed, wrote), now)),
            (_, false) => *stalled = None,
        }
        Verdict::Wait(check)
    }
}

#[cfg(test)]
mod tests;

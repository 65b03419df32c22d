//! Pacing what repeats: at most one log line per period, a burst's
//! allowance of lines, and doubling waits between retries.

use std::time::{Duration, Instant};

/// A log line's rate: the first occurrence at once, then at most one line
/// per `every`, each saying how many occurrences it stands for.
#[derive(Debug)]
pub(crate) struct Every {
    every: Duration,
    last: Option<Instant>,
    /// Occurrences since the last line (this one included).
    since: u64,
}

// === impl Every ===

impl Every {
    /// At most one line per `every`.
    pub(crate) const fn new(every: Duration) -> Every {
        Every {
            every,
            last: None,
            since: 0,
        }
    }

    /// Counts `n` occurrences at `at`; `Some(occurrences since the last
    /// line, these included)` when a line is due.
    pub(crate) fn due_at(&mut self, at: Instant, n: u64) -> Option<u64> {
        self.since = self.since.saturating_add(n);
        let due = self
            .last
            .is_none_or(|last| at.saturating_duration_since(last) >= self.every);
        due.then(|| {
            self.last = Some(at);
            std::mem::take(&mut self.since)
        })
    }

    /// Counts one occurrence now; `Some(occurrences since the last line,
    /// this one included)` when a line is due.
    pub(crate) fn due(&mut self) -> Option<u64> {
        self.due_at(Instant::now(), 1)
    }
}

/// A burst's allowance of log lines: up to `max` in each `window`; the rest
/// are held back and counted, and the count is told once the window is
/// over (by the next line, or by a periodic check).
#[derive(Debug)]
pub(crate) struct Burst {
    window: Duration,
    max: u32,
    start: Option<Instant>,
    /// Lines written in the window that began at `start`.
    written: u32,
    /// Lines held back in that window.
    held: u64,
}

// === impl Burst ===

impl Burst {
    /// Up to `max` lines per `window`.
    pub(crate) const fn new(window: Duration, max: u32) -> Burst {
        Burst {
            window,
            max,
            start: None,
            written: 0,
            held: 0,
        }
    }

    /// One line wants out at `at`: whether it may be written, and first
    /// `Some(lines held back)` when the window they were held back in just
    /// ended.
    pub(crate) fn admit(&mut self, at: Instant) -> (bool, Option<u64>) {
        let told = self.roll(at);
        let admitted = self.written < self.max;
        if admitted {
            self.written += 1;
        } else {
            self.held += 1;
        }
        (admitted, told)
    }

    /// `Some(lines held back)` once the window they were held back in is
    /// over (a periodic check: no line may come to tell it).
    pub(crate) fn over(&mut self, at: Instant) -> Option<u64> {
        if self.held == 0 {
            return None;
        }
        self.roll(at)
    }

    /// Begins a new window if the current one is over, giving the count of
    /// lines it held back.
    fn roll(&mut self, at: Instant) -> Option<u64> {
        if self
            .start
            .is_some_and(|s| at.saturating_duration_since(s) < self.window)
        {
            return None;
        }
        self.start = Some(at);
        self.written = 0;
        (self.held > 0).then(|| std::mem::take(&mut self.held))
    }
}

/// Doubling waits between attempts, from `first` up to `max`.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    first: Duration,
    max: Duration,
    next: Duration,
}

// === impl Backoff ===

impl Backoff {
    /// Waits of `first`, twice that, ... at most `max`.
    pub(crate) const fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max,
            next: first,
        }
    }

    /// The wait before the next attempt (then doubled).
    pub(crate) fn step(&mut self) -> Duration {
        let wait = self.next.min(self.max);
        self.next = self.next.saturating_mul(2).min(self.max);
        wait
    }

    /// An attempt succeeded: the next wait is `first` again.
    pub(crate) fn reset(&mut self) {
        self.next = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_at_once_then_at_most_one_line_per_period_with_the_count() {
        let t0 = Instant::now();
        let mut e = Every::new(Duration::from_secs(600));
        assert_eq!(e.due_at(t0, 1), Some(1));
        for s in 1..600 {
            assert_eq!(e.due_at(t0 + Duration::from_secs(s), 1), None, "at {s} s");
        }
        assert_eq!(e.due_at(t0 + Duration::from_secs(600), 1), Some(600));
        assert_eq!(e.due_at(t0 + Duration::from_secs(601), 1), None);
        assert_eq!(e.due_at(t0 + Duration::from_secs(5000), 1), Some(2));
    }

    #[test]
    fn weights_add_up() {
        let t0 = Instant::now();
        let mut e = Every::new(Duration::from_secs(10));
        assert_eq!(e.due_at(t0, 5), Some(5));
        assert_eq!(e.due_at(t0 + Duration::from_secs(1), 7), None);
        assert_eq!(e.due_at(t0 + Duration::from_secs(10), 3), Some(10));
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_starts_over() {
        let mut b = Backoff::new(Duration::from_millis(10), Duration::from_secs(1));
        let waits: Vec<u64> = (0..9).map(|_| b.step().as_millis() as u64).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        b.reset();
        assert_eq!(b.step(), Duration::from_millis(10));
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        let waits: Vec<u64> = (0..8).map(|_| b.step().as_millis() as u64).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }

    #[test]
    fn a_burst_writes_its_allowance_and_tells_what_it_held_back() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut b = Burst::new(Duration::from_secs(1), 3);
        let first: Vec<(bool, Option<u64>)> = (0..5).map(|i| b.admit(t0 + ms(i))).collect();
        assert_eq!(
            first,
            [
                (true, None),
                (true, None),
                (true, None),
                (false, None),
                (false, None)
            ]
        );
        assert_eq!(b.over(t0 + ms(999)), None, "the window still lasts");
        // The next window's first line tells the count first.
        assert_eq!(b.admit(t0 + ms(1000)), (true, Some(2)));
        for i in 1..5 {
            b.admit(t0 + ms(1000 + i));
        }
        // No line comes: the periodic check tells it, once.
        assert_eq!(b.over(t0 + ms(2500)), Some(2));
        assert_eq!(b.over(t0 + ms(3600)), None);
        assert_eq!(b.admit(t0 + ms(3700)), (true, None));
    }
}

//! The clock of judging: when exchanges open and end, how long a task sat,
//! when the registry ticks. The system clock in production; a manual one
//! in tests, which advance it instead of sleeping (the stall limits and
//! the registry's TTL are measured on it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where judging reads the time.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// `Instant::now()`.
    #[default]
    System,
    /// A clock that moves only when told.
    Manual(Arc<ManualClock>),
}

impl Clock {
    /// A manual clock, and the handle that moves it.
    pub fn manual() -> (Clock, Arc<ManualClock>) {
        let m = Arc::new(ManualClock {
            base: Instant::now(),
            offset_nanos: AtomicU64::new(0),
        });
        (Clock::Manual(m.clone()), m)
    }

    /// The time now.
    #[inline]
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant::now(),
            Clock::Manual(m) => m.now(),
        }
    }
}

/// A clock that moves only by `advance`.
#[derive(Debug)]
pub struct ManualClock {
    base: Instant,
    offset_nanos: AtomicU64,
}

impl ManualClock {
    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.offset_nanos.fetch_add(nanos, Ordering::SeqCst);
    }

    fn now(&self) -> Instant {
        self.base + Duration::from_nanos(self.offset_nanos.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let (clock, hand) = Clock::manual();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        hand.advance(Duration::from_secs(90));
        assert_eq!(clock.now() - t0, Duration::from_secs(90));
        assert!(Clock::System.now() >= t0);
    }
}

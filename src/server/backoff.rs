//! Backing off failed accepts, on both listeners.

use std::time::Duration;

use crate::pace::{Backoff, Every};

/// The accept loop's answer to failed accepts (out of descriptors, say):
/// wait longer each time, up to a second, and log at most one line every
/// ten seconds, with how many failed; every failure is counted.
pub(crate) struct AcceptBackoff {
    /// 10 ms, doubling, at most 1 s.
    waits: Backoff,
    /// The wait after the last failure.
    wait: Duration,
    log: Every,
}

impl Default for AcceptBackoff {
    fn default() -> AcceptBackoff {
        AcceptBackoff {
            waits: Backoff::new(Duration::from_millis(10), Duration::from_secs(1)),
            wait: Duration::ZERO,
            log: Every::new(Duration::from_secs(10)),
        }
    }
}

impl AcceptBackoff {
    pub(super) fn failed(
        &mut self,
        e: &std::io::Error,
        counter: &prometheus::IntCounter,
        what: &str,
    ) {
        counter.inc();
        self.wait = self.waits.step();
        if let Some(failures) = self.log.due() {
            tracing::warn!(error = %e, failures, "{what}; backing off");
        }
    }

    pub(super) fn reset(&mut self) {
        self.waits.reset();
    }

    /// The wait after the last failure: 10 ms, doubling, at most 1 s.
    pub(super) fn delay(&self) -> Duration {
        self.wait
    }
}

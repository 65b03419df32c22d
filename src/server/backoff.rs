//! Backing off failed accepts, on both listeners.

use std::time::{Duration, Instant};

/// The accept loop's answer to failed accepts (out of descriptors, say):
/// wait longer each time, up to a second, and log at most one line every
/// ten seconds, with how many failed; every failure is counted.
#[derive(Default)]
pub(crate) struct AcceptBackoff {
    pub(super) failures: u32,
    pub(super) unlogged: u64,
    pub(super) logged: Option<Instant>,
}

impl AcceptBackoff {
    pub(super) fn failed(
        &mut self,
        e: &std::io::Error,
        counter: &prometheus::IntCounter,
        what: &str,
    ) {
        counter.inc();
        self.failures = self.failures.saturating_add(1);
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .logged
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(10))
        {
            tracing::warn!(error = %e, failures = self.unlogged, "{what}; backing off");
            self.logged = Some(now);
            self.unlogged = 0;
        }
    }

    pub(super) fn reset(&mut self) {
        self.failures = 0;
    }

    /// 10 ms, doubling, at most 1 s.
    pub(super) fn delay(&self) -> Duration {
        let exp = self.failures.saturating_sub(1).min(7);
        Duration::from_millis(10 << exp).min(Duration::from_secs(1))
    }
}

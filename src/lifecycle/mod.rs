//! The task-lifecycle reducer (per exchange) and registry (across exchanges).
//!
//! Pure: no I/O, no clock reads, no async. The driver (proxy or `check`)
//! opens an exchange on the [`Registry`] when the request goes upstream,
//! builds a [`Reducer`] with the returned [`Seq`], tells it the response head,
//! feeds it every decoded (or malformed) frame or body, and ends it once.
//! Time comes in as [`Millis`] on a monotonic clock chosen by the driver.
//!
//! ```text
//! let seq = registry.open_exchange();
//! let mut r = Reducer::new(exchange, seq);
//! r.on_response_head(200, true);
//! r.on_decoded(Some(0), &decoded, &mut registry, now, &mut findings);
//! let outcome = r.on_end(End::Upstream, &mut registry, now, &mut findings);
//! registry.tick(now, &mut findings); // periodically
//! ```

mod artifacts;
mod lru;
mod reducer;
pub mod registry;
mod short;
pub mod timestamp;

pub use reducer::{End, Outcome, Reducer};
pub use registry::{Observation, Registry, RegistryConfig, StallLimits, Verdict};
pub use short::{cut, cut_owned, DEFAULT_MAX_ID_BYTES};

/// Milliseconds on the driver's monotonic clock.
pub type Millis = u64;

/// Logical clock stamp of an exchange: when its request was sent (causal
/// ordering). Terminal observations take stamps from the same clock, so an
/// exchange whose `Seq` is greater was sent after the terminal state was seen.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seq(pub u64);

impl Seq {
    /// The stamp of an exchange that began once `count` messages of the
    /// driver's causal order had been sent: after what they carried (see
    /// `Registry::at_message`), before anything later.
    pub fn after_messages(count: u64) -> Seq {
        Seq(count.saturating_mul(2))
    }
}

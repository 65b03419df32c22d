//! Validation in the live path: observers tee each exchange's bytes to one
//! analysis thread that owns the engine state and the task registry; its
//! findings go to the audit log, the tracing log and the metrics.
//!
//! Ordering is the causal clock: every message goes through one FIFO
//! channel, sent at the moment the proxy forwards the bytes, so the
//! analysis thread sees a request completed after a terminal frame passed
//! only if it really was.

mod observer;
mod worker;

pub use observer::{Tap, TapConfig};
pub use worker::AnalysisHandle;

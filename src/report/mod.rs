//! Where findings and traffic facts go: the audit log (with its evidence)
//! and the metrics.

pub mod audit;
pub mod evidence;
pub mod metrics;

pub use metrics::Metrics;

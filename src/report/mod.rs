//! Where findings and traffic facts go: the audit log (with its evidence)
//! and the metrics.

pub mod audit;
pub mod junit;
mod log_safe;
pub mod metrics;
pub mod pipeline;
pub mod sarif;

pub use log_safe::log_safe;
pub use metrics::Metrics;

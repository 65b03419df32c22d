//! What the proxy reports about the traffic: metrics (and, later, the audit log).

pub mod metrics;

pub use metrics::Metrics;

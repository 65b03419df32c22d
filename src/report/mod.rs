//! Where findings and traffic facts go: the audit log (with its evidence)
//! and the metrics.

pub mod access;
pub mod audit;
pub mod html;
pub mod junit;
pub mod log_queue;
mod log_safe;
pub mod metrics;
pub mod offline;
pub mod sarif;
pub mod timeline;

pub use log_safe::log_safe;
pub use metrics::Metrics;

/// The report formats of `a2a-tap check` and `a2a-tap probe`: text for
/// people, JSON, JUnit XML and SARIF 2.1.0 for CI systems, one HTML page
/// for people (`html`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Junit,
    Sarif,
    Html,
}

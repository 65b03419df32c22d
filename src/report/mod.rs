//! Where findings go: the audit log (with its evidence) and the metrics.

pub mod audit;
pub mod evidence;

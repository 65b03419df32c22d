//! What only the built binary shows: exit codes, signals and drain, the
//! audit file under rotation and a full disk, process limits, a stderr
//! nobody reads, memory; and `a2a-tap check`.

#[path = "../support/mod.rs"]
mod support;

mod binary;
mod bounds;
mod check;
mod config;
mod hostile;
mod html;
mod probe;
mod quick_start;
mod replicas;
mod routes;
mod rules;
mod signals;

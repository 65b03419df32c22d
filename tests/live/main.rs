//! Validation through the running app (in-process, audit log in memory,
//! a manual clock): every catalogue kind with its legal look-alike, the
//! bindings, agent cards, audit records, paths and encodings, the
//! false-alarm classes, hostile agents.

#[path = "../support/mod.rs"]
mod support;

mod access;
mod audit;
mod bindings;
mod bounds;
mod card;
mod drift;
mod field_kinds;
mod grpc;
mod hostile;
mod kinds;
mod metrics;
mod paths;
mod push;
mod push_kinds;
mod routes;
mod spec_kinds;
mod traces;
mod trust;

//! a2a-tap: a transparent reverse proxy that validates A2A traffic.
//!
//! The pure core (`sse`, `a2a`, `lifecycle`, `findings`, `engine`) does no
//! I/O, reads no clock and is not async, so the live proxy and `a2a-tap
//! check` drive the same engine. Everything else moves bytes and reports.
#![forbid(unsafe_code)]

pub mod a2a;
pub mod analysis;
pub mod app;
pub mod check;
pub mod cli;
pub mod config;
pub mod engine;
pub mod fd_limit;
pub mod findings;
pub mod judge;
pub mod lifecycle;
mod pace;
pub mod probe;
pub mod proxy;
pub mod push;
pub mod report;
pub mod server;
pub mod sse;
#[cfg(test)]
mod testing;
pub mod tls;
pub mod trace;

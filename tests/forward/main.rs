//! Forwarding through the app in-process: bytes, errors, HTTP/2 and gRPC,
//! hostile peers, drain, load, the upstream pools, SSE, serving threads.

#[path = "../support/mod.rs"]
mod support;

mod bytes;
mod chunked;
mod errors;
mod h1_answers;
mod h2;
mod hostile;
mod lifecycle;
mod load;
mod pool;
mod routes;
mod sse;
mod threads;
mod tls;
mod uploads;

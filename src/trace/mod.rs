//! OpenTelemetry traces of A2A exchanges (`[tracing]`, off by default):
//! one server span per exchange the validator judges, named after the
//! operation, a child of the caller's `traceparent` when it sent one, with
//! each finding as an `a2a.finding` event. Spans are built on the analysis
//! thread, never on the serving path, and exported over OTLP/HTTP by a
//! thread of their own. Forwarded trace headers are left as the caller
//! sent them unless `[tracing] propagate = true` (an opt-in alteration)
//! makes the proxy's span the upstream's parent.

pub mod context;
mod encode;
pub mod export;
pub mod otlp;
pub mod span;

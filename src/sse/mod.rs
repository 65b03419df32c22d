//! Server-Sent-Event framing: bytes in, events out.

pub mod framer;

pub use framer::{Frame, Framer, SseEvent};

//! Server-Sent-Event framing: bytes in, events out.

mod block;
pub mod framer;

pub use block::SseEvent;
pub use framer::{Frame, Framer};

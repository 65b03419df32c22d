//! a2a-tap's own HTTP/1.1 server side (in progress on this branch): the
//! request head read as hyper's server reads it.

pub mod conn;
pub mod encode;
pub mod head;

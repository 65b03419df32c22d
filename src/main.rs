//! The `a2a-tap` binary.
#![forbid(unsafe_code)]

fn main() {}

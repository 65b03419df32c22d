//! A2A knowledge: which exchange a request is (`classify`), and what a body
//! or frame says, normalised from 0.3 and 1.0 into one vocabulary (`decode`,
//! `model`); a stream's frames that differ only in skipped text share one
//! decoding (`last_frame`).

pub(crate) mod base64;
pub mod card;
pub mod classify;
pub mod decode;
mod errors;
pub mod grpc;
mod json;
pub mod last_frame;
pub mod model;
pub mod push;
mod routes;
mod spelling;

//! Judging beyond one exchange's engine, the same live and offline: the
//! operator's severity policy (`pipeline`, the one way a finding is kept),
//! the folds of repeated findings, the rules that judge an open exchange
//! against the time, the registry or the agent card (`rules`), and the
//! session that drives whole exchanges in order through one registry
//! (`session`: `check` and `probe`). The outputs (the audit log, metrics
//! and spans live, `check`'s and `probe`'s reports offline) make records
//! of what is kept. Pure like the engine: no I/O, time passed in.

pub mod folds;
pub mod pipeline;
pub mod push;
pub mod rules;
pub mod session;

pub use folds::{Folds, Held};
pub use pipeline::{Pipeline, DETAIL_BYTES};
pub use session::{Answer, Delivered, Ended, Found, IdMap, Judged, Session, Settings};

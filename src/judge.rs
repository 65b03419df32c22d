//! One judging session, the same live and offline: the task registry, the
//! last agent card seen, the operator's severity policy and the folds of
//! repeated findings around the engine of each exchange. What it is given
//! (exchanges, their answers, the time) it turns into kept findings; the
//! outputs (the audit log, metrics and spans live, `check`'s and `probe`'s
//! reports offline) make records of them. Pure like the engine it drives:
//! no I/O, time passed in.

pub mod folds;
pub mod pipeline;
pub mod rules;
pub mod session;

pub use folds::{Folds, Held};
pub use pipeline::{Pipeline, DETAIL_BYTES};
pub use session::{Answer, Judged, Session};

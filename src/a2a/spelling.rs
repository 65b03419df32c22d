//! The spellings the decoder and the classifier accept, normalised in one
//! place: task states of every version (and the SDKs' drift), and JSON-RPC
//! ids in the normal form both sides of an exchange are compared in.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};

use super::model::{RpcId, StateValue, TaskState};

/// Maps every accepted spelling: 1.0 `TASK_STATE_*`, its lower-case form,
/// 0.3 lower-case, and the `CANCELLED` drift. `UNSPECIFIED`/`unknown` (and
/// the `TASK_STATE_UNKNOWN` drift) are `Unspecified`; anything else is
/// `Undefined`. Both keep the raw text.
pub(crate) fn state_from_str(raw: &str) -> StateValue {
    use TaskState::*;
    let known = match raw {
        "TASK_STATE_SUBMITTED" | "task_state_submitted" | "submitted" => Submitted,
        "TASK_STATE_WORKING" | "task_state_working" | "working" => Working,
        "TASK_STATE_INPUT_REQUIRED" | "task_state_input_required" | "input-required" => {
            InputRequired
        }
        "TASK_STATE_AUTH_REQUIRED" | "task_state_auth_required" | "auth-required" => AuthRequired,
        "TASK_STATE_COMPLETED" | "task_state_completed" | "completed" => Completed,
        "TASK_STATE_FAILED" | "task_state_failed" | "failed" => Failed,
        "TASK_STATE_CANCELED"
        | "task_state_canceled"
        | "canceled"
        | "TASK_STATE_CANCELLED"
        | "task_state_cancelled"
        | "cancelled" => Canceled,
        "TASK_STATE_REJECTED" | "task_state_rejected" | "rejected" => Rejected,
        "TASK_STATE_UNSPECIFIED"
        | "task_state_unspecified"
        | "unknown"
        | "TASK_STATE_UNKNOWN"
        | "task_state_unknown" => return StateValue::Unspecified(raw.to_owned()),
        _ => return StateValue::Undefined(raw.to_owned()),
    };
    StateValue::Known(known)
}

/// The proto enum numbers (`TaskState` in the specification's a2a.proto), for states sent as JSON numbers.
pub(crate) fn state_from_number(n: u64) -> StateValue {
    use TaskState::*;
    let known = match n {
        0 => return StateValue::Unspecified(n.to_string()),
        1 => Submitted,
        2 => Working,
        3 => Completed,
        4 => Failed,
        5 => Canceled,
        6 => InputRequired,
        7 => Rejected,
        8 => AuthRequired,
        _ => return StateValue::Undefined(n.to_string()),
    };
    StateValue::Known(known)
}

/// Deserializes a present `id` member: `null` → `RpcId::Null`, numbers keep
/// their text (`1` stays `1`, `1.0` stays `1.0`; exponents are normalised),
/// strings are strings. Absent members stay `None` via `#[serde(default)]`.
pub(crate) fn rpc_id<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<RpcId<'static>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = RpcId<'static>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON-RPC id (string, number or null)")
        }
        fn visit_unit<E: de::Error>(self) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::Null)
        }
        fn visit_none<E: de::Error>(self) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::Null)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::String(Cow::Owned(v.to_owned())))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::Number(Cow::Owned(v.to_string())))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::Number(Cow::Owned(v.to_string())))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<RpcId<'static>, E> {
            Ok(RpcId::Number(Cow::Owned(format!("{v:?}"))))
        }
    }
    d.deserialize_any(V).map(Some)
}

//! Borrowing serde shapes of A2A JSON as it appears on the wire (every
//! version and envelope in one union struct), the JSON-RPC id, and the state
//! spellings. Parts, metadata and history are skipped, never built.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::model::{RpcId, StateValue, Status, TaskState};

/// Any object the decoder may meet at the top, in `result`, or inside a
/// StreamResponse wrapper. Which fields are present decides its shape.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Obj<'a> {
    pub jsonrpc: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "rpc_id")]
    pub id: Option<RpcId>,
    #[serde(borrow)]
    pub result: Option<Box<Obj<'a>>>,
    #[serde(borrow)]
    pub error: Option<Box<ErrObj<'a>>>,
    #[serde(borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub task: Option<Box<Obj<'a>>>,
    #[serde(borrow)]
    pub message: Option<Box<Obj<'a>>>,
    #[serde(borrow)]
    pub status_update: Option<Box<Obj<'a>>>,
    #[serde(borrow)]
    pub artifact_update: Option<Box<Obj<'a>>>,
    #[serde(borrow)]
    pub tasks: Option<Vec<Obj<'a>>>,
    pub status: Option<StatusField>,
    #[serde(borrow)]
    pub task_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub context_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub message_id: Option<Cow<'a, str>>,
    pub role: Option<IgnoredAny>,
    pub parts: Option<IgnoredAny>,
    #[serde(borrow)]
    pub artifact: Option<ArtifactObj<'a>>,
    #[serde(borrow)]
    pub artifacts: Option<Vec<ArtifactObj<'a>>>,
    pub append: Option<bool>,
    pub last_chunk: Option<bool>,
    #[serde(rename = "final")]
    pub final_flag: Option<bool>,
    /// RFC 9457 problem fields (`status` is in `StatusField::Code`).
    #[serde(rename = "type", borrow)]
    pub problem_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub title: Option<Cow<'a, str>>,
}

/// An artifact: only its id matters.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactObj<'a> {
    #[serde(borrow)]
    pub artifact_id: Option<Cow<'a, str>>,
}

/// A JSON-RPC `error` or a REST google.rpc.Status-like `error`.
#[derive(Deserialize)]
pub(crate) struct ErrObj<'a> {
    pub code: Option<i64>,
    #[serde(borrow)]
    pub details: Option<Vec<Detail<'a>>>,
}

/// One `details[]` entry; the ErrorInfo's `reason` names the A2A error.
#[derive(Deserialize)]
pub(crate) struct Detail<'a> {
    #[serde(borrow)]
    pub reason: Option<Cow<'a, str>>,
}

/// `status`: a task status object, or a problem body's HTTP status number
/// (or, in odd bodies, a status string, kept only to not fail).
pub(crate) enum StatusField {
    Status(Status),
    Code(i64),
    Text,
}

#[derive(Deserialize)]
struct StatusObj {
    #[serde(default)]
    state: Option<StateRaw>,
    #[serde(default)]
    timestamp: Option<String>,
}

struct StateRaw(StateValue);

impl<'de> Deserialize<'de> for StatusField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StatusField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a status object or number")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<StatusField, A::Error> {
                let s = StatusObj::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(StatusField::Status(Status {
                    // 1.0 JSON omits fields at their default, and the default
                    // state is UNSPECIFIED: an absent state is that.
                    state: s
                        .state
                        .map_or(StateValue::Unspecified(String::new()), |r| r.0),
                    timestamp: s.timestamp,
                }))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<StatusField, E> {
                Ok(StatusField::Code(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<StatusField, E> {
                Ok(StatusField::Code(v))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<StatusField, E> {
                Ok(StatusField::Text)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StateRaw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StateRaw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a state name or number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StateRaw, E> {
                Ok(StateRaw(state_from_str(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<StateRaw, E> {
                Ok(StateRaw(state_from_number(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<StateRaw, E> {
                Ok(StateRaw(StateValue::Undefined(v.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

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

/// The proto enum numbers (A2A.md table), for states sent as JSON numbers.
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
pub(crate) fn rpc_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RpcId>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = RpcId;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON-RPC id (string, number or null)")
        }
        fn visit_unit<E: de::Error>(self) -> Result<RpcId, E> {
            Ok(RpcId::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<RpcId, E> {
            Ok(RpcId::Null)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<RpcId, E> {
            Ok(RpcId::String(v.to_owned()))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<RpcId, E> {
            Ok(RpcId::Number(v.to_string()))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<RpcId, E> {
            Ok(RpcId::Number(v.to_string()))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<RpcId, E> {
            Ok(RpcId::Number(format!("{v:?}")))
        }
    }
    d.deserialize_any(V).map(Some)
}

//! The spellings the decoder and the classifier accept, normalised in one
//! place: task states of every version (and the SDKs' drift), and JSON-RPC
//! ids in the normal form both sides of an exchange are compared in.

use std::borrow::Cow;

#[cfg(test)]
use super::model::RpcId;
use super::model::{StateValue, TaskState};

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

/// Deserializes a present `id` member: `null` → `RpcId::Null`, numbers in
/// their normal form (`number_id`), strings are strings. Absent members
/// stay `None` via `#[serde(default)]`. The number's text is read raw:
/// serde_json reads a number beyond 64 bits as an f64, which would make
/// two ids one. (The classifier's tests compare its reader with this.)
#[cfg(test)]
pub(crate) fn rpc_id<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<RpcId<'static>>, D::Error> {
    use serde::de::{self, Deserialize};
    let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
    let text = raw.get();
    let id = match text.as_bytes().first() {
        Some(b'n') => RpcId::Null,
        Some(b'"') => RpcId::String(Cow::Owned(
            serde_json::from_str::<String>(text).map_err(de::Error::custom)?,
        )),
        _ => match number_id(text) {
            Some(n) => RpcId::Number(Cow::Owned(n.into_owned())),
            None => {
                return Err(de::Error::custom(
                    "expected a JSON-RPC id (string, number or null)",
                ))
            }
        },
    };
    Ok(Some(id))
}

/// The longest integer written out in digits in a normal form; beyond it
/// the form is `<digits>e<exponent>`, so `1e999999` is never expanded.
const PLAIN_DIGITS: usize = 40;

/// A JSON number's normal form as a JSON-RPC id: one text per value, and
/// two values never share one (JSON-RPC 2.0 §5: the response's id is "the
/// same as the value of the id member in the Request"; numbers compare by
/// value, exactly, at any length). `1`, `1.0`, `1e0` and `10e-1` are all
/// `1`; `9007199254740993` and `9007199254740992` stay two (an f64 would
/// make them one); `-0` is `0`. An integer of at most 40 digits is written
/// out (a plain one is its own normal form, borrowed); any other value is
/// `<digits>e<exponent>` with the digits' trailing zeros moved into the
/// exponent (`1.5` → `15e-1`). Exponents beyond ±2^62 are clamped (no id a
/// client sends comes near). `None` if `raw` is not a JSON number.
pub(crate) fn number_id(raw: &str) -> Option<Cow<'_, str>> {
    let b = raw.as_bytes();
    let (neg, body) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let int_len = body.iter().take_while(|c| c.is_ascii_digit()).count();
    if int_len == 0 {
        return None;
    }
    // The fast path: plain digits, no leading zero, short enough.
    if int_len == body.len() && int_len <= PLAIN_DIGITS && (body[0] != b'0' || int_len == 1) {
        return Some(match (neg, body) {
            (true, b"0") => Cow::Borrowed("0"),
            _ => Cow::Borrowed(raw),
        });
    }
    let mut rest = &body[int_len..];
    let mut frac: &[u8] = &[];
    if let Some(after) = rest.strip_prefix(b".") {
        let n = after.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        frac = &after[..n];
        rest = &after[n..];
    }
    const LIMIT: i64 = 1 << 62;
    let mut exp: i64 = 0;
    if let Some(after) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let (minus, digits) = match after.first() {
            Some(b'-') => (true, &after[1..]),
            Some(b'+') => (false, &after[1..]),
            _ => (false, after),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        for d in digits {
            exp = exp
                .saturating_mul(10)
                .saturating_add(i64::from(d - b'0'))
                .min(LIMIT);
        }
        if minus {
            exp = -exp;
        }
        rest = &[];
    }
    if !rest.is_empty() {
        return None;
    }
    // value = digits × 10^exp, the digits without leading or trailing zeros.
    let all = body[..int_len].iter().chain(frac).copied();
    let mut digits: Vec<u8> = all.skip_while(|&c| c == b'0').collect();
    exp = exp.saturating_sub(i64::try_from(frac.len()).unwrap_or(LIMIT));
    while digits.last() == Some(&b'0') {
        digits.pop();
        exp = exp.saturating_add(1);
    }
    if digits.is_empty() {
        return Some(Cow::Borrowed("0"));
    }
    let mut out = String::with_capacity(digits.len() + 24);
    if neg {
        out.push('-');
    }
    out.extend(digits.iter().map(|&c| char::from(c)));
    let zeros = usize::try_from(exp).ok();
    match zeros.filter(|z| digits.len().saturating_add(*z) <= PLAIN_DIGITS) {
        Some(z) => out.extend(std::iter::repeat_n('0', z)),
        None => {
            out.push('e');
            out.push_str(&exp.to_string());
        }
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::number_id;

    #[test]
    fn one_value_one_form_exactly() {
        let form = |raw: &str| number_id(raw).map(|c| c.into_owned());
        for (raw, want) in [
            ("1", "1"),
            ("1.0", "1"),
            ("1e0", "1"),
            ("10e-1", "1"),
            ("0.1E1", "1"),
            ("-0", "0"),
            ("0.000", "0"),
            ("-0e5", "0"),
            ("2e3", "2000"),
            ("1.50", "15e-1"),
            ("-1.5", "-15e-1"),
            ("9007199254740993", "9007199254740993"),
            ("9007199254740993.0", "9007199254740993"),
            ("18446744073709551616", "18446744073709551616"),
            ("1e40", "1e40"),
            ("1e39", "1000000000000000000000000000000000000000"),
        ] {
            assert_eq!(form(raw).as_deref(), Some(want), "{raw}");
        }
        // A plain integer longer than the written-out limit takes the
        // exponent form too, as the same value spelled otherwise does.
        let long = format!("1{}", "0".repeat(50));
        assert_eq!(form(&long), form("1e50"));
        assert_eq!(form(&long).as_deref(), Some("1e50"));
        assert_ne!(form("9007199254740993"), form("9007199254740992"));
        for bad in ["", "-", "1.", ".5", "1e", "1e+", "0x1", "1 ", "\"1\""] {
            assert_eq!(form(bad), None, "{bad:?}");
        }
        // A huge exponent is clamped, not expanded.
        assert_eq!(
            form("1e99999999999999999999").as_deref(),
            Some("1e4611686018427387904")
        );
    }
}

//! A2A error answers: the `error` object of a JSON-RPC or REST body as the
//! decoder reads it, and the names an A2A error goes by (JSON-RPC code,
//! ErrorInfo reason, RFC 9457 problem type or title).

use super::json::members::{integer, members, nullable, objects, string, Int};
use super::json::{Cursor, Kind, Result};
use super::model::{A2aError, ErrorInfo};

/// A JSON-RPC `error` or a REST google.rpc.Status-like `error`: its code,
/// and the A2A error a `details[].reason` (else the code) names.
pub(super) fn error_obj(cur: &mut Cursor<'_>, m: &'static str) -> Result<Option<ErrorInfo>> {
    nullable(cur, |cur, kind| {
        if kind != Kind::Object {
            return cur.type_error(m, "an object");
        }
        let mut code = None;
        let mut by_reason = None;
        members(cur, &["code", "details"], |cur, i| {
            if i == 1 {
                by_reason = details(cur)?;
            } else {
                code = self::code(cur)?;
            }
            Ok(())
        })?;
        Ok(info(code.unwrap_or(0), by_reason))
    })
}

/// The error an error object's `code` and `details[].reason` name: the
/// reason, else the JSON-RPC code.
pub(super) fn info(code: i64, by_reason: Option<A2aError>) -> ErrorInfo {
    let error = by_reason
        .or_else(|| error_from_code(code))
        .unwrap_or(A2aError::Other);
    ErrorInfo { code, error }
}

/// An error object's integer `code` (`null`: absent).
pub(super) fn code(cur: &mut Cursor<'_>) -> Result<Option<i64>> {
    nullable(cur, |cur, kind| match kind {
        Kind::Number => match integer(cur, "code", "an integer")? {
            Int::Negative(c) => Ok(c),
            Int::Unsigned(u) => match i64::try_from(u) {
                Ok(c) => Ok(c),
                Err(_) => cur.type_error("code", "an integer"),
            },
        },
        _ => cur.type_error("code", "an integer"),
    })
}

/// `details[]`: the A2A error the first entry whose `reason` names one
/// names.
pub(super) fn details(cur: &mut Cursor<'_>) -> Result<Option<A2aError>> {
    let mut by_reason = None;
    objects(cur, "details", |cur| {
        members(cur, &["reason"], |cur, _| {
            if let Some(r) = string(cur, "reason")? {
                if by_reason.is_none() {
                    by_reason = error_from_reason(&r.value());
                }
            }
            Ok(())
        })
    })?;
    Ok(by_reason)
}

/// The REST ErrorInfo `reason` names.
fn error_from_reason(reason: &str) -> Option<A2aError> {
    use A2aError::*;
    Some(match reason {
        "TASK_NOT_FOUND" => TaskNotFound,
        "TASK_NOT_CANCELABLE" => TaskNotCancelable,
        "PUSH_NOTIFICATION_NOT_SUPPORTED" => PushNotificationNotSupported,
        "UNSUPPORTED_OPERATION" => UnsupportedOperation,
        "CONTENT_TYPE_NOT_SUPPORTED" => ContentTypeNotSupported,
        "INVALID_AGENT_RESPONSE" => InvalidAgentResponse,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED" => ExtendedAgentCardNotConfigured,
        "EXTENSION_SUPPORT_REQUIRED" => ExtensionSupportRequired,
        "VERSION_NOT_SUPPORTED" => VersionNotSupported,
        _ => return None,
    })
}

/// The JSON-RPC A2A error codes.
fn error_from_code(code: i64) -> Option<A2aError> {
    use A2aError::*;
    Some(match code {
        -32001 => TaskNotFound,
        -32002 => TaskNotCancelable,
        -32003 => PushNotificationNotSupported,
        -32004 => UnsupportedOperation,
        -32005 => ContentTypeNotSupported,
        -32006 => InvalidAgentResponse,
        -32007 => ExtendedAgentCardNotConfigured,
        -32008 => ExtensionSupportRequired,
        -32009 => VersionNotSupported,
        _ => return None,
    })
}

/// A problem `type` URI's last segment or a `title`, compared without case
/// or separators: `.../task-not-found`, `TaskNotFoundError`, `Task not found`.
pub(super) fn error_from_text(text: &str) -> Option<A2aError> {
    let tail = text.rsplit(['/', '#', ':']).next().unwrap_or(text);
    let key: String = tail
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let key = key.strip_suffix("ERROR").unwrap_or(&key);
    const NAMES: [&str; 9] = [
        "TASK_NOT_FOUND",
        "TASK_NOT_CANCELABLE",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "UNSUPPORTED_OPERATION",
        "CONTENT_TYPE_NOT_SUPPORTED",
        "INVALID_AGENT_RESPONSE",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        "EXTENSION_SUPPORT_REQUIRED",
        "VERSION_NOT_SUPPORTED",
    ];
    NAMES
        .iter()
        .find(|n| n.chars().filter(|c| *c != '_').eq(key.chars()))
        .and_then(|n| error_from_reason(n))
}

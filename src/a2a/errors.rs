//! A2A error answers: the `error` object of a JSON-RPC or REST body as the
//! decoder reads it, and the names an A2A error goes by (JSON-RPC code,
//! ErrorInfo reason, RFC 9457 problem type or title).

use super::json::members::{integer, members, nullable, objects, string, Int};
use super::json::{Cursor, Kind, Result};
use super::model::{A2aError, DetailFault, ErrorInfo};

impl ErrorInfo {
    /// The A2A error `code` names read as a JSON-RPC code (§5.4), if any.
    pub fn jsonrpc_code_names(&self) -> Option<A2aError> {
        error_from_code(self.code)
    }
}

/// A JSON-RPC `error` or a REST google.rpc.Status-like `error`: its code,
/// the A2A error a `details[].reason` (else the code) names, and the fault
/// of its typed details (`details[]`, or a JSON-RPC `data` array).
pub(super) fn error_obj(cur: &mut Cursor<'_>, m: &'static str) -> Result<Option<ErrorInfo>> {
    nullable(cur, |cur, kind| {
        if kind != Kind::Object {
            return cur.type_error(m, "an object");
        }
        let mut code = None;
        let mut typed = Details::default();
        let mut data_typed = Details::default();
        members(cur, &["code", "details", "data"], |cur, i| {
            match i {
                0 => code = self::code(cur)?,
                1 => typed = details(cur)?,
                _ => data_typed = data(cur)?,
            }
            Ok(())
        })?;
        let mut e = info(code.unwrap_or(0), typed.reason.or(data_typed.reason));
        e.fault = typed.fault.or(data_typed.fault);
        Ok(e)
    })
}

/// The error an error object's `code` and `details[].reason` name: the
/// reason, else the JSON-RPC code.
pub(super) fn info(code: i64, by_reason: Option<A2aError>) -> ErrorInfo {
    let error = by_reason
        .or_else(|| error_from_code(code))
        .unwrap_or(A2aError::Other);
    ErrorInfo::new(code, error)
}

/// An error object sent bare (google.rpc.Status): its code and details.
pub(super) fn bare(code: i64, details: Option<Details>) -> ErrorInfo {
    let details = details.unwrap_or_default();
    let mut e = info(code, details.reason);
    e.fault = details.fault;
    e
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

/// What an error's `details[]` say: the A2A error the first entry whose
/// `reason` names one names, and the first fault of an entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Details {
    pub reason: Option<A2aError>,
    pub fault: Option<DetailFault>,
}

/// `details[]`: an array of typed objects (google.protobuf.Any).
pub(super) fn details(cur: &mut Cursor<'_>) -> Result<Details> {
    let mut out = Details::default();
    let mut entry = 0;
    objects(cur, "details", |cur| {
        let (reason, fault) = typed_entry(cur, entry)?;
        out.reason = out.reason.or(reason);
        out.fault = out.fault.or(fault);
        entry += 1;
        Ok(())
    })?;
    Ok(out)
}

/// A JSON-RPC `error.data`: free-form, so only an array is read as typed
/// entries (an entry that is not an object names no type either).
fn data(cur: &mut Cursor<'_>) -> Result<Details> {
    let mut out = Details::default();
    if cur.peek()? != Kind::Array {
        cur.skip_value()?;
        return Ok(out);
    }
    cur.begin_array()?;
    let (mut first, mut entry) = (true, 0);
    while cur.next_item(&mut first)? {
        let (reason, fault) = if cur.peek()? == Kind::Object {
            typed_entry(cur, entry)?
        } else {
            cur.skip_value()?;
            (None, Some(DetailFault::Untyped { entry }))
        };
        out.reason = out.reason.or(reason);
        out.fault = out.fault.or(fault);
        entry += 1;
    }
    Ok(out)
}

/// One typed entry (the cursor at its `{`): the A2A error its `reason`
/// names, and its fault: no `@type`, or an ErrorInfo naming an A2A error
/// outside the domain `a2a-protocol.org`.
fn typed_entry(
    cur: &mut Cursor<'_>,
    entry: u32,
) -> Result<(Option<A2aError>, Option<DetailFault>)> {
    let (mut ty, mut reason, mut domain) = (None, None, None);
    members(cur, &["@type", "reason", "domain"], |cur, i| {
        let v = string(cur, ["@type", "reason", "domain"][i])?.map(|s| s.value().into_owned());
        match i {
            0 => ty = v,
            1 => reason = v.as_deref().and_then(error_from_reason),
            _ => domain = v,
        }
        Ok(())
    })?;
    let fault = match &ty {
        None => Some(DetailFault::Untyped { entry }),
        Some(t) if t.ends_with("google.rpc.ErrorInfo") => match (reason, domain.as_deref()) {
            (Some(r), d) if d != Some(A2A_DOMAIN) => Some(DetailFault::Domain {
                entry,
                reason: r,
                has_domain: d.is_some(),
            }),
            _ => None,
        },
        Some(_) => None,
    };
    Ok((reason, fault))
}

/// The domain of the ErrorInfo an A2A error carries.
const A2A_DOMAIN: &str = "a2a-protocol.org";

/// The REST ErrorInfo `reason` names.
pub(crate) fn error_from_reason(reason: &str) -> Option<A2aError> {
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
pub(super) fn error_from_code(code: i64) -> Option<A2aError> {
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

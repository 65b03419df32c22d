//! Body or frame bytes → one normalised `Decoded`, from any of: 1.0 JSON-RPC
//! envelope, 1.0 bare StreamResponse / Task / ListTasks result, 0.3 `kind`
//! objects, bare event objects of real-world dumps, JSON-RPC / REST errors.
//!
//! Shape rules, first match wins, for the top object (no `jsonrpc`/`result`)
//! or the envelope's `result`:
//! 1. `kind` (0.3): `task` | `message` | `status-update` | `artifact-update`;
//! 2. exactly one 1.0 wrapper: `task` | `message` | `statusUpdate` |
//!    `artifactUpdate` (two or more is malformed);
//! 3. `tasks` array: a ListTasks result;
//! 4. `taskId` + `status`: a status update; `taskId` + `artifact`: an
//!    artifact update (the `kind`-less objects of real-world dumps);
//! 5. `id` + `status`: a bare Task (GetTask, CancelTask);
//! 6. `messageId`, or `role` + `parts`: a bare Message.
//!
//! Errors: an envelope's `error`; a top-level `error` object (REST
//! google.rpc.Status-like, `code` = the HTTP code it states); an RFC 9457
//! problem (`type`/`title` with a numeric `status`). The A2A error is taken
//! from a `details[].reason`, else from a JSON-RPC code -32001..-32009 (for
//! problems: from the `type`/`title` text); otherwise `Other`.

use std::borrow::Cow;

use serde_json::error::Category;

use super::model::{
    A2aError, ArtifactUpdate, Decoded, ErrorInfo, Event, Malformed, MessageEvent, Payload, RpcId,
    StatusUpdate, TaskSnapshot,
};
use super::wire::{ErrObj, Obj, StatusField};

/// Decodes one JSON body or SSE event's data.
pub fn decode(data: &[u8]) -> Result<Decoded, Malformed> {
    let text = std::str::from_utf8(data).map_err(|e| bad(format!("not valid UTF-8: {e}")))?;
    let first = text
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .bytes()
        .next();
    if first != Some(b'{') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => bad("JSON value is not an object"),
            Err(e) => bad(format!("not valid JSON: {e}")),
        });
    }
    let mut top: Obj<'_> = serde_json::from_str(text).map_err(|e| match e.classify() {
        Category::Data => bad(format!("not a known A2A shape: {e}")),
        _ => bad(format!("not valid JSON: {e}")),
    })?;
    if top.jsonrpc.is_some() || top.result.is_some() {
        let rpc_id = Some(top.id.unwrap_or(RpcId::Null));
        let payload = match (top.result.take(), top.error.take()) {
            (Some(mut result), None) => payload(&mut result)?,
            (None, Some(err)) => Payload::Error(error_info(&err)),
            (Some(_), Some(_)) => return Err(bad("JSON-RPC response with both result and error")),
            (None, None) => return Err(bad("JSON-RPC response without result or error")),
        };
        return Ok(Decoded { rpc_id, payload });
    }
    if let Some(err) = &top.error {
        return Ok(Decoded {
            rpc_id: None,
            payload: Payload::Error(error_info(err)),
        });
    }
    if let (Some(StatusField::Code(code)), true) = (
        &top.status,
        top.problem_type.is_some() || top.title.is_some(),
    ) {
        let hint = top.problem_type.as_deref().or(top.title.as_deref());
        let error = hint.and_then(error_from_text).unwrap_or(A2aError::Other);
        return Ok(Decoded {
            rpc_id: None,
            payload: Payload::Error(ErrorInfo { code: *code, error }),
        });
    }
    Ok(Decoded {
        rpc_id: None,
        payload: payload(&mut top)?,
    })
}

fn bad(reason: impl Into<String>) -> Malformed {
    Malformed(reason.into())
}

/// Rules 1–6 of the module docs. Fields are taken out of `o` (a boxed
/// object is read in place: the union struct is too large to move).
fn payload(o: &mut Obj<'_>) -> Result<Payload, Malformed> {
    if let Some(kind) = &o.kind {
        let event = match kind.as_ref() {
            "task" => Event::Task(task(o)?),
            "message" => Event::Message(message(o)),
            "status-update" => Event::StatusUpdate(status_update(o)?),
            "artifact-update" => Event::ArtifactUpdate(artifact_update(o)?),
            other => return Err(bad(format!("unknown kind {other:?}"))),
        };
        return Ok(Payload::Event(event));
    }
    let wrappers = usize::from(o.task.is_some())
        + usize::from(o.message.is_some())
        + usize::from(o.status_update.is_some())
        + usize::from(o.artifact_update.is_some());
    if wrappers > 1 {
        return Err(bad(
            "StreamResponse with more than one of task, message, statusUpdate, artifactUpdate",
        ));
    }
    let event = if let Some(mut t) = o.task.take() {
        Event::Task(task(&mut t)?)
    } else if let Some(mut m) = o.message.take() {
        Event::Message(message(&mut m))
    } else if let Some(mut s) = o.status_update.take() {
        Event::StatusUpdate(status_update(&mut s)?)
    } else if let Some(mut a) = o.artifact_update.take() {
        Event::ArtifactUpdate(artifact_update(&mut a)?)
    } else if let Some(tasks) = o.tasks.take() {
        let list = tasks
            .into_iter()
            .map(|mut t| task(&mut t))
            .collect::<Result<_, _>>()?;
        return Ok(Payload::TaskList(list));
    } else if o.task_id.is_some() && matches!(o.status, Some(StatusField::Status(_))) {
        Event::StatusUpdate(status_update(o)?)
    } else if o.task_id.is_some() && o.artifact.is_some() {
        Event::ArtifactUpdate(artifact_update(o)?)
    } else if o.id.is_some() && matches!(o.status, Some(StatusField::Status(_))) {
        Event::Task(task(o)?)
    } else if o.message_id.is_some() || (o.role.is_some() && o.parts.is_some()) {
        Event::Message(message(o))
    } else {
        return Err(bad("no known A2A shape"));
    };
    Ok(Payload::Event(event))
}

fn owned(s: Option<Cow<'_, str>>) -> Option<String> {
    s.map(Cow::into_owned)
}

fn status_of(o: &mut Obj<'_>, what: &str) -> Result<super::model::Status, Malformed> {
    match o.status.take() {
        Some(StatusField::Status(s)) => Ok(s),
        _ => Err(bad(format!("{what} without a status object"))),
    }
}

fn task(o: &mut Obj<'_>) -> Result<TaskSnapshot, Malformed> {
    let id = match o.id.take() {
        Some(RpcId::String(id)) => id,
        _ => return Err(bad("task without a string id")),
    };
    let status = status_of(o, "task")?;
    let artifact_ids = o
        .artifacts
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|a| owned(a.artifact_id))
        .collect();
    Ok(TaskSnapshot {
        id,
        context_id: owned(o.context_id.take()),
        status,
        artifact_ids,
    })
}

fn message(o: &mut Obj<'_>) -> MessageEvent {
    MessageEvent {
        message_id: owned(o.message_id.take()),
        task_id: owned(o.task_id.take()),
        context_id: owned(o.context_id.take()),
    }
}

fn status_update(o: &mut Obj<'_>) -> Result<StatusUpdate, Malformed> {
    let status = status_of(o, "status update")?;
    let task_id = owned(o.task_id.take()).ok_or_else(|| bad("status update without taskId"))?;
    Ok(StatusUpdate {
        task_id,
        context_id: owned(o.context_id.take()),
        status,
        final_flag: o.final_flag,
    })
}

fn artifact_update(o: &mut Obj<'_>) -> Result<ArtifactUpdate, Malformed> {
    let task_id = owned(o.task_id.take()).ok_or_else(|| bad("artifact update without taskId"))?;
    let artifact_id = o
        .artifact
        .take()
        .and_then(|a| owned(a.artifact_id))
        .ok_or_else(|| bad("artifact update without artifact.artifactId"))?;
    Ok(ArtifactUpdate {
        task_id,
        context_id: owned(o.context_id.take()),
        artifact_id,
        append: o.append.unwrap_or(false),
        last_chunk: o.last_chunk.unwrap_or(false),
    })
}

fn error_info(err: &ErrObj<'_>) -> ErrorInfo {
    let code = err.code.unwrap_or(0);
    let by_reason = err
        .details
        .iter()
        .flatten()
        .filter_map(|d| d.reason.as_deref())
        .find_map(error_from_reason);
    let error = by_reason
        .or_else(|| error_from_code(code))
        .unwrap_or(A2aError::Other);
    ErrorInfo { code, error }
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
fn error_from_text(text: &str) -> Option<A2aError> {
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

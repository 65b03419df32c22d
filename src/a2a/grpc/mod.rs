//! The gRPC binding (spec §10): calls by their path
//! (`/lf.a2a.v1.A2AService/<Method>`, 0.3 `/a2a.v1.A2AService/<Method>`),
//! length-prefixed protobuf messages in the bodies, and the call's status
//! in `grpc-status` / `grpc-status-details-bin` (a `google.rpc.Status` with
//! an `ErrorInfo` naming the A2A error). Messages decode into the same
//! vocabulary as the JSON bindings, so every rule applies unchanged.

mod messages;
pub mod proto;
mod read;
pub mod repeats;
mod status;
mod wire;

pub(crate) use read::gunzip;
pub use read::{decode_bounded, decode_response, Render};
pub use status::{GrpcStatus, OK};

use std::borrow::Cow;

use prost::Message as _;

use super::model::{Binding, Exchange, Operation, Version};

/// The 1.0 service.
const SERVICE_1_0: &str = "lf.a2a.v1.A2AService";
/// The 0.3 service.
const SERVICE_0_3: &str = "a2a.v1.A2AService";

/// Whether a `Content-Type` is gRPC's (`application/grpc`, `+proto`, any
/// parameters; case ignored).
pub fn is_grpc(content_type: &str) -> bool {
    let m = content_type.split(';').next().unwrap_or("").trim();
    m.eq_ignore_ascii_case("application/grpc")
        || m.get(..17)
            .is_some_and(|p| p.eq_ignore_ascii_case("application/grpc+"))
}

/// The operation and version a gRPC call's path names.
pub fn route(path: &str) -> Option<(Operation, Version)> {
    use Operation::*;
    let path = path.strip_prefix('/')?;
    // Each service's name and its slash, as a prefix: no search for the
    // slash.
    let in_service = |service: &str| path.strip_prefix(service)?.strip_prefix('/');
    let (version, method) = match (in_service(SERVICE_1_0), in_service(SERVICE_0_3)) {
        (Some(method), _) => (Version::V1_0, method),
        (None, Some(method)) => (Version::V0_3, method),
        (None, None) => return None,
    };
    let op = match (version, method) {
        (_, "SendMessage") => SendMessage,
        (_, "SendStreamingMessage") => SendStreamingMessage,
        (_, "GetTask") => GetTask,
        (_, "CancelTask") => CancelTask,
        (_, "CreateTaskPushNotificationConfig") => CreateTaskPushNotificationConfig,
        (_, "GetTaskPushNotificationConfig") => GetTaskPushNotificationConfig,
        (_, "DeleteTaskPushNotificationConfig") => DeleteTaskPushNotificationConfig,
        (Version::V1_0, "ListTasks") => ListTasks,
        (Version::V1_0, "SubscribeToTask") => SubscribeToTask,
        (Version::V1_0, "ListTaskPushNotificationConfigs") => ListTaskPushNotificationConfigs,
        (Version::V1_0, "GetExtendedAgentCard") => GetExtendedAgentCard,
        (Version::V0_3, "TaskSubscription") => SubscribeToTask,
        (Version::V0_3, "ListTaskPushNotificationConfig") => ListTaskPushNotificationConfigs,
        (Version::V0_3, "GetAgentCard") => GetExtendedAgentCard,
        _ => return None,
    };
    Some((op, version))
}

/// One length-prefixed message at the start of `body`: whether it is
/// compressed, and its bytes; `None` when `body` holds no whole message.
pub fn first_message(body: &[u8]) -> Option<(bool, &[u8])> {
    let (&flag, rest) = body.split_first()?;
    let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    Some((flag == 1, rest.get(4..4 + len)?))
}

/// Classifies a gRPC call from its path and its (whole) request body: the
/// ids and the blocking flag come from the request message when it can be
/// read (uncompressed, or gzip with `gzip`); a call whose message cannot be
/// read is still classified, without them.
pub fn classify(path: &str, body: &[u8], gzip: bool) -> Option<Exchange> {
    let (operation, version) = route(path)?;
    let mut ex = Exchange {
        binding: Binding::Grpc,
        version,
        operation,
        rpc_id: None,
        task_id: None,
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    };
    let inflated;
    let msg = match first_message(body) {
        Some((false, m)) => m,
        Some((true, m)) if gzip => {
            inflated = read::gunzip(m, 1 << 20)?;
            &inflated[..]
        }
        _ => return Some(ex),
    };
    request_ids(&mut ex, msg);
    Some(ex)
}

/// The ids (and blocking flag) a request message names; a message that
/// does not decode leaves them unset.
fn request_ids(ex: &mut Exchange, msg: &[u8]) {
    use Operation::*;
    let some = |s: String| (!s.is_empty()).then_some(s);
    let v03 = ex.version == Version::V0_3;
    match ex.operation {
        SendMessage | SendStreamingMessage => {
            let (message, blocking) = if v03 {
                let Ok(r) = proto::SendRequest03::decode(msg) else {
                    return;
                };
                (r.request, r.configuration.is_some_and(|c| c.blocking))
            } else {
                let Ok(r) = proto::SendRequest::decode(msg) else {
                    return;
                };
                (
                    r.message,
                    !r.configuration.is_some_and(|c| c.return_immediately),
                )
            };
            if let Some(m) = message {
                ex.task_id = some(m.task_id);
                ex.context_id = some(m.context_id);
                ex.message_id = some(m.message_id);
            }
            ex.blocking = ex.operation == SendMessage && blocking;
        }
        ListTasks => {
            ex.context_id = proto::ListRequest::decode(msg)
                .ok()
                .and_then(|r| some(r.context_id));
        }
        GetTask | CancelTask | SubscribeToTask if !v03 => {
            ex.task_id = proto::IdRequest::decode(msg).ok().and_then(|r| some(r.id));
        }
        CreateTaskPushNotificationConfig if !v03 => {
            ex.task_id = proto::PushConfig::decode(msg)
                .ok()
                .and_then(|r| some(r.task_id));
        }
        GetTaskPushNotificationConfig | DeleteTaskPushNotificationConfig if !v03 => {
            ex.task_id = proto::PushConfigRequest::decode(msg)
                .ok()
                .and_then(|r| some(r.task_id));
        }
        ListTaskPushNotificationConfigs if !v03 => {
            ex.task_id = proto::PushConfigList::decode(msg)
                .ok()
                .and_then(|r| some(r.task_id));
        }
        GetExtendedAgentCard | GetAgentCard => {}
        // 0.3 names the task as a resource: `tasks/{id}[/...]`.
        _ => {
            ex.task_id = proto::NameRequest03::decode(msg)
                .ok()
                .and_then(|r| resource_task(&r.name).map(Cow::into_owned));
        }
    }
}

/// The task of a 0.3 resource name (`tasks/{id}` or `tasks/{id}/...`).
fn resource_task(name: &str) -> Option<Cow<'_, str>> {
    let id = name.strip_prefix("tasks/")?.split('/').next()?;
    (!id.is_empty()).then_some(Cow::Borrowed(id))
}

#[cfg(test)]
mod equivalence;
#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

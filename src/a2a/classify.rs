//! Request → exchange: binding, version, operation, ids and blocking flag,
//! from the request head and (for JSON-RPC and sends) a body prefix.
//!
//! Binding: a POST whose JSON body names a known 1.0 or 0.3 `method` is
//! JSON-RPC, whatever the path. Otherwise the path's tail is matched against
//! the REST routes (see `routes`), the public agent card's GET among them
//! (`GetAgentCard`). Anything else is not A2A (`None`).
//!
//! Version rule (the specification says a missing `A2A-Version` means 0.3, but 1.0
//! clients are identifiable without it):
//! - JSON-RPC: the method name decides. The 1.0 and 0.3 method sets are
//!   disjoint, and the name fixes the params schema the server applies
//!   (`returnImmediately` vs `blocking`), so a conflicting header is not
//!   believed over it.
//! - REST: the `A2A-Version` header, else the `A2A-Version` query parameter
//!   (`1`, `1.0`, `1.x` → 1.0; `0.3`, `0.3.x` → 0.3; empty or anything else
//!   counts as missing). When missing: 0.3 if the route sits directly under
//!   a `/v1` segment (the 0.3 layout), else 1.0, since every 0.3 REST path
//!   is under `/v1`. ListTasks, which 0.3 lacks, is 1.0 unless declared.
//!
//! Ids: `rpc_id` is the request `id` (absent → `None`, a notification).
//! `task_id`: REST path `{id}`; JSON-RPC `params.id` (get, cancel,
//! subscribe), `params.message.taskId` (sends), `params.taskId` (push
//! configs; 0.3 `params.id`). `context_id`: the message's `contextId`
//! (ListTasks: `params.contextId` / query `contextId`).

use std::borrow::Cow;

use http::{HeaderValue, Method, Uri};

use super::decode::rpc_id_value;
use super::json::members::{boolean, members, nullable};
use super::json::{Cursor, Kind, Result};
use super::model::{Binding, Exchange, Operation, RpcId, Version};
use super::routes::{percent_decode, route};

/// Classifies a request. `body` is the whole request body (the proxy gives up
/// on bodies larger than its limit). `None`: not A2A, pass without judging.
pub fn classify(
    method: &http::Method,
    uri: &http::Uri,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Option<Exchange> {
    if method == Method::POST && super::grpc::route(uri.path()).is_some() {
        return super::grpc::classify(uri.path(), body, grpc_gzip(headers.get(GRPC_ENCODING)));
    }
    classify_with(method, uri, headers.get(A2A_VERSION), body)
}

/// The header naming a gRPC call's message compression.
pub const GRPC_ENCODING: http::HeaderName = http::HeaderName::from_static("grpc-encoding");

/// Whether a `grpc-encoding` value is gzip (the one compression judged).
pub fn grpc_gzip(value: Option<&HeaderValue>) -> bool {
    value.is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"))
}

/// The one header the classifier reads.
pub const A2A_VERSION: http::HeaderName = http::HeaderName::from_static("a2a-version");

/// `classify`, given the request's `A2A-Version` header rather than all
/// of its headers.
pub fn classify_with(
    method: &http::Method,
    uri: &http::Uri,
    a2a_version: Option<&HeaderValue>,
    body: &[u8],
) -> Option<Exchange> {
    let req = if method == Method::POST {
        parse(body)
    } else {
        None
    };
    if let Some(req) = &req {
        if let Some(ex) = req.method.as_deref().and_then(|m| jsonrpc(m, req)) {
            return Some(ex);
        }
    }
    rest(method, uri, a2a_version, req.as_ref())
}

/// A request body: JSON-RPC members and the REST send members side by side.
#[derive(Debug, Default, PartialEq)]
struct Req<'a> {
    id: Option<RpcId<'a>>,
    method: Option<Cow<'a, str>>,
    params: Option<Params<'a>>,
    message: Option<Msg<'a>>,
    configuration: Option<Config>,
}

#[derive(Debug, Default, PartialEq)]
struct Params<'a> {
    id: Option<Cow<'a, str>>,
    task_id: Option<Cow<'a, str>>,
    context_id: Option<Cow<'a, str>>,
    message: Option<Msg<'a>>,
    configuration: Option<Config>,
}

#[derive(Debug, Default, PartialEq)]
struct Msg<'a> {
    task_id: Option<Cow<'a, str>>,
    context_id: Option<Cow<'a, str>>,
    message_id: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, PartialEq)]
struct Config {
    return_immediately: Option<bool>,
    blocking: Option<bool>,
}

/// A JSON object body, or `None`: empty, not JSON, not an object, a member
/// read here of the wrong type or sent twice, or text after the object.
/// Members are read as serde's derive would (`null` is absent, unknown
/// members are skipped), with two differences: an object member sent as an
/// array (JSON-RPC's by-position params, which A2A never uses) reads as
/// empty, where the derive would map the items onto members by position;
/// and what is skipped may nest deeper than serde_json's 128 levels.
fn parse(body: &[u8]) -> Option<Req<'_>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut cur = Cursor::new(text);
    if cur.peek().ok()? != Kind::Object {
        return None;
    }
    let req = read_req(&mut cur).ok()?;
    cur.end().ok()?;
    Some(req)
}

fn read_req<'a>(cur: &mut Cursor<'a>) -> Result<Req<'a>> {
    let mut req = Req::default();
    let names = ["id", "method", "params", "message", "configuration"];
    members(cur, &names, |cur, i| {
        match i {
            0 => req.id = Some(rpc_id_value(cur, "id")?),
            1 => req.method = text(cur, "method")?,
            2 => req.params = nested(cur, "params", read_params)?,
            3 => req.message = nested(cur, "message", read_msg)?,
            _ => req.configuration = nested(cur, "configuration", read_config)?,
        }
        Ok(())
    })?;
    Ok(req)
}

fn read_params<'a>(cur: &mut Cursor<'a>) -> Result<Params<'a>> {
    let mut p = Params::default();
    let names = ["id", "taskId", "contextId", "message", "configuration"];
    members(cur, &names, |cur, i| {
        match i {
            0 => p.id = text(cur, "id")?,
            1 => p.task_id = text(cur, "taskId")?,
            2 => p.context_id = text(cur, "contextId")?,
            3 => p.message = nested(cur, "message", read_msg)?,
            _ => p.configuration = nested(cur, "configuration", read_config)?,
        }
        Ok(())
    })?;
    Ok(p)
}

fn read_msg<'a>(cur: &mut Cursor<'a>) -> Result<Msg<'a>> {
    let mut m = Msg::default();
    members(cur, &["taskId", "contextId", "messageId"], |cur, i| {
        match i {
            0 => m.task_id = text(cur, "taskId")?,
            1 => m.context_id = text(cur, "contextId")?,
            _ => m.message_id = text(cur, "messageId")?,
        }
        Ok(())
    })?;
    Ok(m)
}

fn read_config(cur: &mut Cursor<'_>) -> Result<Config> {
    let mut c = Config::default();
    members(cur, &["returnImmediately", "blocking"], |cur, i| {
        match i {
            0 => c.return_immediately = boolean(cur, "returnImmediately")?,
            _ => c.blocking = boolean(cur, "blocking")?,
        }
        Ok(())
    })?;
    Ok(c)
}

/// A string member's value (`null`: absent).
fn text<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<Option<Cow<'a, str>>> {
    nullable(cur, |cur, kind| match kind {
        Kind::String => cur.string_value(),
        _ => cur.type_error(m, "a string"),
    })
}

/// An object member read by `read` (`null`: absent; an array: empty).
fn nested<'a, T: Default>(
    cur: &mut Cursor<'a>,
    m: &'static str,
    read: impl FnOnce(&mut Cursor<'a>) -> Result<T>,
) -> Result<Option<T>> {
    nullable(cur, |cur, kind| match kind {
        Kind::Object => read(cur),
        Kind::Array => cur.skip_value().map(|()| T::default()),
        _ => cur.type_error(m, "an object"),
    })
}

/// The operation and version a JSON-RPC method name stands for.
fn method_op(name: &str) -> Option<(Operation, Version)> {
    use Operation::*;
    let v03 = match name {
        "message/send" => SendMessage,
        "message/stream" => SendStreamingMessage,
        "tasks/get" => GetTask,
        "tasks/cancel" => CancelTask,
        "tasks/resubscribe" => SubscribeToTask,
        "tasks/pushNotificationConfig/set" => CreateTaskPushNotificationConfig,
        "tasks/pushNotificationConfig/get" => GetTaskPushNotificationConfig,
        "tasks/pushNotificationConfig/list" => ListTaskPushNotificationConfigs,
        "tasks/pushNotificationConfig/delete" => DeleteTaskPushNotificationConfig,
        "agent/getAuthenticatedExtendedCard" => GetExtendedAgentCard,
        // The singular list name of some 1.0 drafts.
        "ListTaskPushNotificationConfig" => {
            return Some((ListTaskPushNotificationConfigs, Version::V1_0))
        }
        _ => {
            let op = Operation::ALL
                .iter()
                .filter(|op| **op != GetAgentCard)
                .find(|op| op.as_str() == name)?;
            return Some((*op, Version::V1_0));
        }
    };
    Some((v03, Version::V0_3))
}

fn owned(s: &Option<Cow<'_, str>>) -> Option<String> {
    s.as_deref().map(str::to_owned)
}

fn jsonrpc(name: &str, req: &Req<'_>) -> Option<Exchange> {
    use Operation::*;
    let (operation, version) = method_op(name)?;
    let params = req.params.as_ref();
    let message = params.and_then(|p| p.message.as_ref());
    let task_id = match operation {
        GetTask | CancelTask | SubscribeToTask => params.and_then(|p| owned(&p.id)),
        SendMessage | SendStreamingMessage => message.and_then(|m| owned(&m.task_id)),
        CreateTaskPushNotificationConfig
        | GetTaskPushNotificationConfig
        | ListTaskPushNotificationConfigs
        | DeleteTaskPushNotificationConfig => params.and_then(|p| {
            owned(&p.task_id).or_else(|| match version {
                Version::V0_3 => owned(&p.id),
                Version::V1_0 => None,
            })
        }),
        ListTasks | GetExtendedAgentCard | GetAgentCard | PushDelivery => None,
    };
    let context_id = match operation {
        ListTasks => params.and_then(|p| owned(&p.context_id)),
        _ => message.and_then(|m| owned(&m.context_id)),
    };
    let config = params.and_then(|p| p.configuration.as_ref());
    Some(Exchange {
        binding: Binding::JsonRpc,
        version,
        operation,
        rpc_id: req.id.clone().map(RpcId::into_owned),
        task_id,
        context_id,
        blocking: blocking(operation, version, config),
        guessed_path: None,
        message_id: message.and_then(|m| owned(&m.message_id)),
    })
}

fn rest(
    method: &Method,
    uri: &Uri,
    a2a_version: Option<&HeaderValue>,
    req: Option<&Req<'_>>,
) -> Option<Exchange> {
    use Operation::*;
    let r = route(method, uri.path())?;
    let declared = declared_version(uri, a2a_version);
    let version = declared.unwrap_or(if r.under_v1 && r.operation != ListTasks {
        Version::V0_3
    } else {
        Version::V1_0
    });
    // Only A2A clients declare a version; without one, the path's tail is
    // a guess until an agent card confirms it. The card path is certain.
    let guessed_path =
        (declared.is_none() && r.operation != GetAgentCard).then(|| uri.path().to_owned());
    let (mut task_id, mut context_id, mut config, mut message_id) = (r.task_id, None, None, None);
    match r.operation {
        SendMessage | SendStreamingMessage => {
            let req = req?; // a send needs its JSON body
            let msg = req.message.as_ref();
            task_id = msg.and_then(|m| owned(&m.task_id));
            context_id = msg.and_then(|m| owned(&m.context_id));
            message_id = msg.and_then(|m| owned(&m.message_id));
            config = req.configuration.as_ref();
        }
        ListTasks => context_id = query_param(uri, "contextId"),
        _ => {}
    }
    Some(Exchange {
        binding: Binding::Rest,
        version,
        operation: r.operation,
        rpc_id: None,
        task_id,
        context_id,
        blocking: blocking(r.operation, version, config),
        guessed_path,
        message_id,
    })
}

/// Non-streaming sends only. 1.0: `returnImmediately` false or absent;
/// 0.3: `blocking: true`.
fn blocking(op: Operation, version: Version, config: Option<&Config>) -> bool {
    if op != Operation::SendMessage {
        return false;
    }
    match version {
        Version::V1_0 => !config.and_then(|c| c.return_immediately).unwrap_or(false),
        Version::V0_3 => config.and_then(|c| c.blocking) == Some(true),
    }
}

/// The `A2A-Version` header, else query parameter; `None` when missing,
/// empty or not a version this proxy knows.
fn declared_version(uri: &Uri, header: Option<&HeaderValue>) -> Option<Version> {
    let header = header
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let raw = header.or_else(|| query_param(uri, "A2A-Version"))?;
    let mut parts = raw.trim().split('.');
    match (parts.next(), parts.next()) {
        (Some("1"), _) => Some(Version::V1_0),
        (Some("0"), Some("3")) => Some(Version::V0_3),
        _ => None,
    }
}

/// A query parameter's percent-decoded value (name compared without case);
/// `None` when absent or empty.
fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?
        .split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| percent_decode(&v.replace('+', " ")))
        .filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests;

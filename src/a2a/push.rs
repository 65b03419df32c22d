//! Push-notification configs in a request body: where each config's
//! webhook `url` lies (so the relay can put its own URL there and nothing
//! else), with what the config asks of deliveries (its id, task,
//! `authentication`); and which config a delete names.
//!
//! Shapes (spec 1.0.1 §3.1.7, §4.3.1, §9.4.7, §11; 0.3 §7.5): a 1.0 config
//! is flat (`TaskPushNotificationConfig`: `taskId`, `id`, `url`, `token`,
//! `authentication: {scheme, credentials}`), in a send's
//! `configuration.taskPushNotificationConfig` or as Create's params / body;
//! a 0.3 config sits under `pushNotificationConfig` (in a send's
//! `configuration`, or `tasks/pushNotificationConfig/set`'s params beside
//! `taskId`), its `authentication` naming `schemes[]`; 0.3 HTTP+JSON (the
//! proto's JSON) names a send's `configuration.pushNotification`, and a
//! create's `config.pushNotificationConfig`. Implementations mix
//! the two (and some nest a `config` member), so the reader looks for
//! `url` in any of those members, at most a few levels down, and never in
//! a message (whose text may hold any URL).

use std::ops::Range;

use super::json::{Cursor, Kind, Result};
use super::model::{Binding, Exchange, Operation};
use super::routes::percent_decode;

pub mod grpc;

/// One push config found in a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSpot {
    /// The `url` member's string, quotes included, in the body.
    pub url: Range<usize>,
    /// The caller's webhook URL (the string's value).
    pub webhook: String,
    /// The config's id, when the request names one.
    pub id: Option<String>,
    /// The task it is for, when the request names it beside the config.
    pub task_id: Option<String>,
    /// What deliveries must authenticate with.
    pub auth: Option<PushAuth>,
}

/// A config's `authentication`: 1.0 names one `scheme`, 0.3 a list of
/// `schemes`; deliveries must send `Authorization: {scheme} {credentials}`
/// with one of them (§4.3.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PushAuth {
    pub schemes: Vec<String>,
    pub credentials: Option<String>,
}

/// Members a config may sit under (`pushNotification`: 0.3's proto JSON,
/// what 0.3 HTTP+JSON clients send in a send's `configuration`). Proto JSON
/// readers take a field's proto name as well as its camelCase name, and
/// clients send either (the Python SDK 1.3.0 over 0.3 HTTP+JSON: the proto
/// names), so both are read.
const CONTAINERS: [&str; 9] = [
    "params",
    "configuration",
    "taskPushNotificationConfig",
    "task_push_notification_config",
    "pushNotificationConfig",
    "push_notification_config",
    "pushNotification",
    "push_notification",
    "config",
];

/// Deepest a config is looked for (the JSON-RPC 0.3 send's is at 3).
const MAX_DEPTH: u8 = 4;

/// Whether requests of `exchange`'s operation can register a config.
pub fn registers(exchange: &Exchange) -> bool {
    matches!(
        exchange.operation,
        Operation::SendMessage
            | Operation::SendStreamingMessage
            | Operation::CreateTaskPushNotificationConfig
    ) && matches!(exchange.binding, Binding::JsonRpc | Binding::Rest)
}

/// Whether gRPC requests of `exchange`'s operation can register a config.
pub fn registers_grpc(exchange: &Exchange) -> bool {
    exchange.binding == Binding::Grpc
        && matches!(
            exchange.operation,
            Operation::SendMessage
                | Operation::SendStreamingMessage
                | Operation::CreateTaskPushNotificationConfig
        )
}

/// The push configs in `body`, a request of `exchange` (none for an
/// operation that registers none, or a body that is not JSON).
pub fn configs(exchange: &Exchange, body: &[u8]) -> Vec<ConfigSpot> {
    let mut out = Vec::new();
    if !registers(exchange) {
        return out;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return out;
    };
    let mut cur = Cursor::new(text);
    if matches!(cur.peek(), Ok(Kind::Object)) && object(&mut cur, 0, &mut out).is_err() {
        // Not JSON after all: what the agent makes of it is its own.
        out.clear();
    }
    for spot in &mut out {
        if spot.task_id.is_none() {
            spot.task_id = exchange.task_id.clone();
        }
    }
    out
}

/// Reads the object at `cur`: a config when it has a string `url`, its
/// containers read for more.
fn object(cur: &mut Cursor<'_>, depth: u8, out: &mut Vec<ConfigSpot>) -> Result<()> {
    cur.begin_object()?;
    let mut first = true;
    let mut url = None;
    let mut id = None;
    let mut task_id = None;
    let mut auth = None;
    let inner_from = out.len();
    while let Some(key) = cur.next_key(&mut first) {
        let key = key.value();
        let kind = cur.peek()?;
        match (key.as_ref(), kind) {
            ("url", Kind::String) => {
                let start = cur.offset();
                let value = cur.string_value()?.into_owned();
                url = Some((start..cur.offset(), value));
            }
            ("id", Kind::String) => id = Some(cur.string_value()?.into_owned()),
            ("taskId" | "task_id", Kind::String) => {
                task_id = Some(cur.string_value()?.into_owned());
            }
            ("authentication", Kind::Object) => auth = Some(authentication(cur)?),
            (name, Kind::Object) if depth < MAX_DEPTH && CONTAINERS.contains(&name) => {
                object(cur, depth + 1, out)?;
            }
            _ => cur.skip_value()?,
        }
    }
    cur.check()?;
    // A container's `taskId` names the task of the configs inside it
    // (0.3 set: `{taskId, pushNotificationConfig}`).
    if let Some(task) = &task_id {
        for spot in &mut out[inner_from..] {
            spot.task_id.get_or_insert_with(|| task.clone());
        }
    }
    if let Some((span, webhook)) = url {
        out.push(ConfigSpot {
            url: span,
            webhook,
            id,
            task_id,
            auth,
        });
    }
    Ok(())
}

fn authentication(cur: &mut Cursor<'_>) -> Result<PushAuth> {
    cur.begin_object()?;
    let mut first = true;
    let mut auth = PushAuth::default();
    while let Some(key) = cur.next_key(&mut first) {
        let key = key.value();
        match (key.as_ref(), cur.peek()?) {
            ("scheme", Kind::String) => auth.schemes.push(cur.string_value()?.into_owned()),
            ("schemes", Kind::Array) => {
                cur.begin_array()?;
                let mut first = true;
                while cur.next_item(&mut first)? {
                    match cur.peek()? {
                        Kind::String => auth.schemes.push(cur.string_value()?.into_owned()),
                        _ => cur.skip_value()?,
                    }
                }
            }
            ("credentials", Kind::String) => {
                auth.credentials = Some(cur.string_value()?.into_owned());
            }
            _ => cur.skip_value()?,
        }
    }
    cur.check()?;
    Ok(auth)
}

/// The config a delete request names: the REST path's last segment after
/// `pushNotificationConfigs/`; JSON-RPC 1.0 `params.id` (beside
/// `params.taskId`), 0.3 `params.pushNotificationConfigId`.
pub fn deleted_config(exchange: &Exchange, path: &str, body: &[u8]) -> Option<String> {
    if exchange.operation != Operation::DeleteTaskPushNotificationConfig {
        return None;
    }
    match exchange.binding {
        Binding::Rest => {
            let (_, tail) = path.rsplit_once("/pushNotificationConfigs/")?;
            let id = tail.split('/').next().filter(|s| !s.is_empty())?;
            Some(percent_decode(id))
        }
        Binding::JsonRpc => {
            let mut cur = Cursor::new(std::str::from_utf8(body).ok()?);
            delete_params(&mut cur).ok().flatten()
        }
        Binding::Grpc | Binding::Webhook => None,
    }
}

/// `params`' config id in a JSON-RPC delete.
fn delete_params(cur: &mut Cursor<'_>) -> Result<Option<String>> {
    cur.begin_object()?;
    let mut first = true;
    let mut found = None;
    while let Some(key) = cur.next_key(&mut first) {
        if key.value() == "params" && cur.peek()? == Kind::Object {
            cur.begin_object()?;
            let mut first = true;
            let (mut id, mut task_id, mut config_id) = (None, false, None);
            while let Some(key) = cur.next_key(&mut first) {
                let key = key.value();
                match (key.as_ref(), cur.peek()?) {
                    ("id", Kind::String) => id = Some(cur.string_value()?.into_owned()),
                    ("taskId" | "task_id", _) => {
                        task_id = true;
                        cur.skip_value()?;
                    }
                    ("pushNotificationConfigId" | "push_notification_config_id", Kind::String) => {
                        config_id = Some(cur.string_value()?.into_owned());
                    }
                    _ => cur.skip_value()?,
                }
            }
            cur.check()?;
            found = config_id.or(id.filter(|_| task_id));
        } else {
            cur.skip_value()?;
        }
    }
    cur.check()?;
    Ok(found)
}

#[cfg(test)]
mod tests;

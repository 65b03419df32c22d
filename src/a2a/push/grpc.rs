//! Push configs in gRPC messages (spec 1.0.1 `a2a.proto`; 0.3's
//! `a2a.v1`): a config's `url` field replaced, the lengths of the messages
//! around it written anew, every other field copied byte for byte; and
//! relay URLs in answers shown as the caller's own.
//!
//! Where the config is, by (version, operation):
//! - 1.0 send: `SendMessageRequest.configuration` (3) →
//!   `SendMessageConfiguration.task_push_notification_config` (2), a
//!   `TaskPushNotificationConfig` (`id` 2, `task_id` 3, `url` 4, `token` 5,
//!   `authentication` 6: `scheme` 1, `credentials` 2);
//! - 1.0 create: the request is that `TaskPushNotificationConfig`;
//! - 0.3 send: `SendMessageRequest.configuration` (2) → `push_notification`
//!   (2), a `PushNotificationConfig` (`id` 1, `url` 2, `token` 3,
//!   `authentication` 4: `schemes` 1, `credentials` 2);
//! - 0.3 create: `CreateTaskPushNotificationConfigRequest.config` (3) →
//!   `push_notification_config` (2).

use super::PushAuth;
use crate::a2a::model::{Exchange, Operation, Version};

/// A config found in a gRPC request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcConfig {
    pub webhook: String,
    pub id: Option<String>,
    pub task_id: Option<String>,
    pub auth: Option<PushAuth>,
}

/// The field numbers of one version's config message.
struct Layout {
    id: u32,
    task_id: Option<u32>,
    url: u32,
    auth: u32,
}

const CONFIG_1_0: Layout = Layout {
    id: 2,
    task_id: Some(3),
    url: 4,
    auth: 6,
};
const CONFIG_0_3: Layout = Layout {
    id: 1,
    task_id: None,
    url: 2,
    auth: 4,
};

/// Deepest an answer is searched for relay URLs.
const MAX_DEPTH: u8 = 8;

/// The gRPC request `body` of `exchange` with the `url` of each push config
/// replaced by what `relay` gives for it (`None`: left as it is); `None`
/// when there is nothing to replace (no config, a compressed or broken
/// message, another operation).
pub fn rewrite(
    exchange: &Exchange,
    body: &[u8],
    relay: &mut dyn FnMut(&GrpcConfig) -> Option<String>,
) -> Option<Vec<u8>> {
    let (path, layout): (&[u32], &Layout) = match (exchange.version, exchange.operation) {
        (Version::V1_0, Operation::SendMessage | Operation::SendStreamingMessage) => {
            (&[3, 2], &CONFIG_1_0)
        }
        (Version::V1_0, Operation::CreateTaskPushNotificationConfig) => (&[], &CONFIG_1_0),
        (Version::V0_3, Operation::SendMessage | Operation::SendStreamingMessage) => {
            (&[2, 2], &CONFIG_0_3)
        }
        (Version::V0_3, Operation::CreateTaskPushNotificationConfig) => (&[3, 2], &CONFIG_0_3),
        _ => return None,
    };
    let msg = one_message(body)?;
    let mut changed = false;
    let mut edit = |cfg: &[u8]| config(cfg, layout, exchange, relay, &mut changed);
    let new = at_path(msg, path, &mut edit)?;
    changed.then(|| frame(&new))
}

/// The task and config a gRPC delete names: 1.0 `task_id` (2) and `id`
/// (3); 0.3 `name` (1), `tasks/{task}/pushNotificationConfigs/{config}`.
pub fn deleted_config(exchange: &Exchange, body: &[u8]) -> Option<(Option<String>, String)> {
    if exchange.operation != Operation::DeleteTaskPushNotificationConfig {
        return None;
    }
    let msg = one_message(body)?;
    let fields = fields(msg)?;
    let text = |n: u32| {
        fields
            .iter()
            .rev()
            .find(|f| f.wire == 2 && f.number == n)
            .and_then(|f| std::str::from_utf8(&msg[f.value.clone()]).ok())
    };
    match exchange.version {
        Version::V1_0 => Some((text(2).map(str::to_owned), text(3)?.to_owned())),
        Version::V0_3 => {
            let (task, config) = text(1)?
                .strip_prefix("tasks/")?
                .split_once("/pushNotificationConfigs/")?;
            Some((Some(task.to_owned()), config.to_owned()))
        }
    }
}

/// `body` with each length-delimited field (at any depth) whose bytes
/// `swap` replaces replaced, the messages around it written anew; `None`
/// when nothing was.
pub fn restore(body: &[u8], swap: &dyn Fn(&[u8]) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    let mut changed = false;
    while !rest.is_empty() {
        let (flag, len) = (
            rest.first()?,
            u32::from_be_bytes(rest.get(1..5)?.try_into().ok()?),
        );
        let msg = rest.get(5..5 + len as usize)?;
        match (flag, swapped(msg, swap, 0)) {
            (0, Some(new)) => {
                out.extend_from_slice(&frame(&new));
                changed = true;
            }
            _ => out.extend_from_slice(&rest[..5 + len as usize]),
        }
        rest = &rest[5 + len as usize..];
    }
    changed.then_some(out)
}

fn swapped(msg: &[u8], swap: &dyn Fn(&[u8]) -> Option<Vec<u8>>, depth: u8) -> Option<Vec<u8>> {
    let fields = fields(msg)?;
    let mut out = Vec::with_capacity(msg.len());
    let mut changed = false;
    for f in &fields {
        let value = &msg[f.value.clone()];
        let new = match f.wire {
            2 => swap(value).or_else(|| {
                (depth < MAX_DEPTH)
                    .then(|| swapped(value, swap, depth + 1))
                    .flatten()
            }),
            _ => None,
        };
        match new {
            Some(new) => {
                put_len_field(&mut out, f.number, &new);
                changed = true;
            }
            None => out.extend_from_slice(&msg[f.whole.clone()]),
        }
    }
    changed.then_some(out)
}

/// The one message of a unary request, uncompressed.
fn one_message(body: &[u8]) -> Option<&[u8]> {
    let (&flag, rest) = body.split_first()?;
    let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    (flag == 0 && rest.len() == 4 + len).then(|| &rest[4..])
}

fn frame(msg: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(msg.len() + 5);
    out.push(0);
    out.extend_from_slice(&u32::try_from(msg.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

/// `msg` with the embedded message at `path` edited by `edit` (every
/// occurrence: proto merges repeated embedded messages).
fn at_path(
    msg: &[u8],
    path: &[u32],
    edit: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let Some((&head, tail)) = path.split_first() else {
        return edit(msg);
    };
    let mut out = Vec::with_capacity(msg.len() + 64);
    for f in fields(msg)? {
        if f.wire == 2 && f.number == head {
            let inner = at_path(&msg[f.value.clone()], tail, edit)?;
            put_len_field(&mut out, f.number, &inner);
        } else {
            out.extend_from_slice(&msg[f.whole.clone()]);
        }
    }
    Some(out)
}

/// A config message with its url replaced by `relay`'s.
fn config(
    cfg: &[u8],
    layout: &Layout,
    exchange: &Exchange,
    relay: &mut dyn FnMut(&GrpcConfig) -> Option<String>,
    changed: &mut bool,
) -> Option<Vec<u8>> {
    let fields = fields(cfg)?;
    let text = |f: &Field| String::from_utf8(cfg[f.value.clone()].to_vec()).ok();
    let last = |n: u32| fields.iter().rev().find(|f| f.wire == 2 && f.number == n);
    let Some(webhook) = last(layout.url).and_then(text) else {
        return Some(cfg.to_vec());
    };
    let found = GrpcConfig {
        webhook,
        id: last(layout.id).and_then(text).filter(|s| !s.is_empty()),
        task_id: layout
            .task_id
            .and_then(last)
            .and_then(text)
            .filter(|s| !s.is_empty())
            .or_else(|| exchange.task_id.clone()),
        auth: last(layout.auth).and_then(|f| authentication(&cfg[f.value.clone()])),
    };
    let Some(url) = relay(&found) else {
        return Some(cfg.to_vec());
    };
    *changed = true;
    let mut out = Vec::with_capacity(cfg.len() + url.len());
    for f in &fields {
        if f.wire == 2 && f.number == layout.url {
            put_len_field(&mut out, f.number, url.as_bytes());
        } else {
            out.extend_from_slice(&cfg[f.whole.clone()]);
        }
    }
    Some(out)
}

/// `AuthenticationInfo`: 1.0 `scheme` (1), 0.3 `schemes` (1, repeated);
/// `credentials` (2).
fn authentication(msg: &[u8]) -> Option<PushAuth> {
    let mut auth = PushAuth::default();
    for f in fields(msg)? {
        let text = String::from_utf8(msg[f.value.clone()].to_vec()).ok();
        match (f.number, f.wire, text) {
            (1, 2, Some(s)) => auth.schemes.push(s),
            (2, 2, Some(s)) => auth.credentials = Some(s),
            _ => {}
        }
    }
    Some(auth)
}

/// One field of a message: its number, wire type, the bytes of the whole
/// field and of its value (a length-delimited field's content).
struct Field {
    number: u32,
    wire: u8,
    whole: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

/// The fields of `msg`, or `None` when it is not a protobuf message (groups
/// are not read).
fn fields(msg: &[u8]) -> Option<Vec<Field>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < msg.len() {
        let start = at;
        let tag = varint(msg, &mut at)?;
        let number = u32::try_from(tag >> 3).ok().filter(|n| *n > 0)?;
        let wire = (tag & 7) as u8;
        let value = match wire {
            0 => {
                let from = at;
                varint(msg, &mut at)?;
                from..at
            }
            1 => at..at.checked_add(8).filter(|e| *e <= msg.len())?,
            2 => {
                let len = usize::try_from(varint(msg, &mut at)?).ok()?;
                at..at.checked_add(len).filter(|e| *e <= msg.len())?
            }
            5 => at..at.checked_add(4).filter(|e| *e <= msg.len())?,
            _ => return None,
        };
        at = value.end;
        out.push(Field {
            number,
            wire,
            whole: start..at,
            value,
        });
    }
    Some(out)
}

fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_len_field(out: &mut Vec<u8>, number: u32, value: &[u8]) {
    put_varint(out, (u64::from(number) << 3) | 2);
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests;

//! Response messages into the engine's vocabulary, and back into JSON for
//! a finding's evidence.

use std::borrow::Cow;
use std::io::Read;

use serde_json::{json, Value};

use super::messages::{self, Tally};
use super::wire::WireError;
use crate::a2a::model::{
    ArtifactUpdate, Decoded, Event, Malformed, MessageEvent, Operation, Payload, StateValue,
    Status, StatusUpdate, TaskSnapshot, Version,
};

/// A response message of `op` in `version`, decoded, its text borrowed
/// from `msg`. `Err` when it is not that message (a field of the wrong
/// wire type, invalid UTF-8 in a string, a stream message with no
/// payload): the messages prost refuses (`proto.rs` declares the same
/// fields; the tests hold the two readers to the same answers).
pub fn decode_response(
    version: Version,
    op: Operation,
    msg: &[u8],
) -> Result<Decoded<'_>, Malformed> {
    decode(version, op, msg, &mut Tally::new(usize::MAX))
}

/// `decode_response`, or `None` when the message's repeated fields hold
/// more than `max` elements (`repeats::over`: counted as the message is
/// read, and on the wire past where a malformed message stops reading).
pub fn decode_bounded(
    version: Version,
    op: Operation,
    msg: &[u8],
    max: usize,
) -> Option<Result<Decoded<'_>, Malformed>> {
    let mut tally = Tally::new(max);
    match decode(version, op, msg, &mut tally) {
        Err(_) if tally.over() => None,
        Err(_) if super::repeats::over(op, msg, max) => None,
        read => Some(read),
    }
}

fn decode<'a>(
    version: Version,
    op: Operation,
    msg: &'a [u8],
    tally: &mut Tally,
) -> Result<Decoded<'a>, Malformed> {
    let bad = |what: &str, e: WireError| Malformed(format!("not a {what}: {e}"));
    let payload = match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            let what = if op == Operation::SendMessage {
                "SendMessageResponse"
            } else {
                "StreamResponse"
            };
            let read = messages::stream_response(msg, version, tally).map_err(|e| bad(what, e))?;
            let Some(p) = read else {
                return Err(Malformed(format!("a {what} with no payload")));
            };
            Payload::Event(event(p, version))
        }
        Operation::GetTask | Operation::CancelTask => {
            let t = messages::whole_task(msg, tally).map_err(|e| bad("Task", e))?;
            Payload::Event(Event::Task(task(t)))
        }
        Operation::ListTasks => {
            let list = messages::list_tasks(msg, tally).map_err(|e| bad("ListTasksResponse", e))?;
            Payload::TaskList(list.into_iter().map(task).collect())
        }
        _ => return Err(Malformed(format!("{op}'s answer is not judged"))),
    };
    Ok(Decoded {
        rpc_id: None,
        payload,
        dialect: None,
    })
}

/// A string field as the model holds an optional one: absent when empty
/// (proto3 cannot tell an empty string from none).
fn text(s: &str) -> Option<Cow<'_, str>> {
    (!s.is_empty()).then_some(Cow::Borrowed(s))
}

fn event(p: messages::Payload<'_>, version: Version) -> Event<'_> {
    match p {
        messages::Payload::Task(t) => Event::Task(task(t)),
        messages::Payload::Message(m) => Event::Message(MessageEvent {
            message_id: text(m.message_id),
            task_id: text(m.task_id),
            context_id: text(m.context_id),
        }),
        messages::Payload::StatusUpdate(s) => Event::StatusUpdate(StatusUpdate {
            task_id: Cow::Borrowed(s.task_id),
            context_id: text(s.context_id),
            status: status(s.status),
            // 1.0 has no `final`.
            final_flag: (version == Version::V0_3).then_some(s.r#final),
        }),
        messages::Payload::ArtifactUpdate(a) => Event::ArtifactUpdate(ArtifactUpdate {
            task_id: Cow::Borrowed(a.task_id),
            context_id: text(a.context_id),
            artifact_id: Cow::Borrowed(a.artifact_id),
            append: a.append,
            last_chunk: a.last_chunk,
        }),
    }
}

fn task(t: messages::Task<'_>) -> TaskSnapshot<'_> {
    TaskSnapshot {
        id: Cow::Borrowed(t.id),
        context_id: text(t.context_id),
        status: status(t.status),
        artifact_ids: t.artifact_ids,
    }
}

/// A status; an absent one reads as the unspecified state (proto3: the
/// default), which is what a gRPC client sees.
fn status(s: Option<messages::TaskStatus>) -> Status<'static> {
    let s = s.unwrap_or_default();
    Status {
        state: state(s.state),
        timestamp: s
            .timestamp
            .and_then(|t| rfc3339(t.seconds, t.nanos))
            .map(Cow::Owned),
    }
}

/// The enum's number (the same in 1.0 and 0.3), as the JSON reader takes
/// a state sent as a number.
pub(super) fn state(n: i32) -> StateValue {
    match u64::try_from(n) {
        Ok(n) => crate::a2a::spelling::state_from_number(n),
        Err(_) => StateValue::Undefined(n.to_string()),
    }
}

/// A `google.protobuf.Timestamp` as RFC 3339 (UTC, nanoseconds when set);
/// `None` outside the years 1 to 9999 the type allows.
pub(super) fn rfc3339(seconds: i64, nanos: i32) -> Option<String> {
    const MIN: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
    const MAX: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z
    if !(MIN..=MAX).contains(&seconds) || !(0..1_000_000_000).contains(&nanos) {
        return None;
    }
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, min, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let frac = if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}")
    };
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}{frac}Z"
    ))
}

/// Undoes a gzip-compressed message, up to `limit` bytes; `None` when it is
/// corrupt or larger.
pub(crate) fn gunzip(data: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut d = flate2::read::GzDecoder::new(data).take(limit as u64 + 1);
    d.read_to_end(&mut out).ok()?;
    (out.len() <= limit).then_some(out)
}

/// A decoded message as proto3 JSON, for a finding's evidence.
pub trait Render {
    fn render(&self) -> String;
}

impl Render for Decoded<'_> {
    fn render(&self) -> String {
        let v = match &self.payload {
            Payload::Event(e) => event_json(e),
            Payload::TaskList(list) => {
                json!({"tasks": list.iter().map(task_json).collect::<Vec<_>>()})
            }
            Payload::Error(e) => json!({"code": e.code, "error": format!("{:?}", e.error)}),
        };
        v.to_string()
    }
}

fn status_json(s: &Status) -> Value {
    let state = match &s.state {
        StateValue::Known(k) => {
            Value::String(format!("TASK_STATE_{}", k.as_str().to_ascii_uppercase()))
        }
        StateValue::Unspecified(_) => Value::String("TASK_STATE_UNSPECIFIED".to_owned()),
        // proto3 JSON writes an enum number it has no name for as the number.
        StateValue::Undefined(t) => t.parse::<i64>().map_or_else(|_| json!(t), |n| json!(n)),
    };
    let mut v = json!({"state": state});
    if let Some(ts) = &s.timestamp {
        v["timestamp"] = json!(ts);
    }
    v
}

fn task_json(t: &TaskSnapshot) -> Value {
    let mut v = json!({"id": t.id, "status": status_json(&t.status)});
    if let Some(c) = &t.context_id {
        v["contextId"] = json!(c);
    }
    if !t.artifact_ids.is_empty() {
        v["artifacts"] = t
            .artifact_ids
            .iter()
            .map(|a| json!({"artifactId": a}))
            .collect();
    }
    v
}

fn event_json(e: &Event) -> Value {
    match e {
        Event::Task(t) => json!({"task": task_json(t)}),
        Event::Message(m) => {
            json!({"message": {"messageId": m.message_id, "taskId": m.task_id, "contextId": m.context_id}})
        }
        Event::StatusUpdate(s) => {
            let mut v = json!({"taskId": s.task_id, "contextId": s.context_id, "status": status_json(&s.status)});
            if let Some(f) = s.final_flag {
                v["final"] = json!(f);
            }
            json!({"statusUpdate": v})
        }
        Event::ArtifactUpdate(a) => json!({"artifactUpdate": {
            "taskId": a.task_id, "contextId": a.context_id,
            "artifact": {"artifactId": a.artifact_id},
            "append": a.append, "lastChunk": a.last_chunk}}),
    }
}

//! The reader that `decode_response` replaced, kept for the tests as the
//! oracle of the borrowing one: prost decodes the `proto.rs` messages and
//! their strings are owned. For every message the two must agree: the
//! same `Decoded`, or both `Err`.

use std::borrow::Cow;

use prost::Message as _;

use super::proto;
use super::read::{rfc3339, state};
use crate::a2a::model::{
    ArtifactUpdate, Decoded, Event, Malformed, MessageEvent, Operation, Payload, Status,
    StatusUpdate, TaskSnapshot, Version,
};

/// `decode_response` as prost read it.
pub(super) fn decode_response(
    version: Version,
    op: Operation,
    msg: &[u8],
) -> Result<Decoded<'static>, Malformed> {
    let bad = |what: &str, e: prost::DecodeError| Malformed(format!("not a {what}: {e}"));
    let payload = match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            let what = if op == Operation::SendMessage {
                "SendMessageResponse"
            } else {
                "StreamResponse"
            };
            let event = match version {
                Version::V1_0 => proto::StreamResponse::decode(msg)
                    .map_err(|e| bad(what, e))?
                    .payload
                    .map(event),
                Version::V0_3 => proto::StreamResponse03::decode(msg)
                    .map_err(|e| bad(what, e))?
                    .payload
                    .map(event03),
            };
            let Some(event) = event else {
                return Err(Malformed(format!("a {what} with no payload")));
            };
            Payload::Event(event)
        }
        Operation::GetTask | Operation::CancelTask => {
            let t = proto::Task::decode(msg).map_err(|e| bad("Task", e))?;
            Payload::Event(Event::Task(task(t)))
        }
        Operation::ListTasks => {
            let list =
                proto::ListTasksResponse::decode(msg).map_err(|e| bad("ListTasksResponse", e))?;
            Payload::TaskList(list.tasks.into_iter().map(task).collect())
        }
        _ => return Err(Malformed(format!("{op}'s answer is not judged"))),
    };
    Ok(Decoded {
        rpc_id: None,
        payload,
        dialect: None,
    })
}

fn text(s: String) -> Option<Cow<'static, str>> {
    (!s.is_empty()).then_some(Cow::Owned(s))
}

fn event(p: proto::Payload) -> Event<'static> {
    match p {
        proto::Payload::Task(t) => Event::Task(task(t)),
        proto::Payload::Message(m) => Event::Message(message(m)),
        proto::Payload::StatusUpdate(s) => Event::StatusUpdate(StatusUpdate {
            task_id: Cow::Owned(s.task_id),
            context_id: text(s.context_id),
            status: status(s.status),
            final_flag: None,
        }),
        proto::Payload::ArtifactUpdate(a) => Event::ArtifactUpdate(artifact(a)),
    }
}

fn event03(p: proto::Payload03) -> Event<'static> {
    match p {
        proto::Payload03::Task(t) => Event::Task(task(t)),
        proto::Payload03::Message(m) => Event::Message(message(m)),
        proto::Payload03::StatusUpdate(s) => Event::StatusUpdate(StatusUpdate {
            task_id: Cow::Owned(s.task_id),
            context_id: text(s.context_id),
            status: status(s.status),
            final_flag: Some(s.r#final),
        }),
        proto::Payload03::ArtifactUpdate(a) => Event::ArtifactUpdate(artifact(a)),
    }
}

fn task(t: proto::Task) -> TaskSnapshot<'static> {
    TaskSnapshot {
        id: Cow::Owned(t.id),
        context_id: text(t.context_id),
        status: status(t.status),
        artifact_ids: t
            .artifacts
            .into_iter()
            .map(|a| Cow::Owned(a.artifact_id))
            .collect(),
    }
}

fn message(m: proto::Message) -> MessageEvent<'static> {
    MessageEvent {
        message_id: text(m.message_id),
        task_id: text(m.task_id),
        context_id: text(m.context_id),
    }
}

fn artifact(a: proto::ArtifactUpdate) -> ArtifactUpdate<'static> {
    ArtifactUpdate {
        task_id: Cow::Owned(a.task_id),
        context_id: text(a.context_id),
        artifact_id: Cow::Owned(a.artifact.map(|a| a.artifact_id).unwrap_or_default()),
        append: a.append,
        last_chunk: a.last_chunk,
    }
}

fn status(s: Option<proto::TaskStatus>) -> Status<'static> {
    let s = s.unwrap_or_default();
    Status {
        state: state(s.state),
        timestamp: s
            .timestamp
            .and_then(|t| rfc3339(t.seconds, t.nanos))
            .map(Cow::Owned),
    }
}

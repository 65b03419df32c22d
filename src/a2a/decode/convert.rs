//! The union shape → the model: which A2A object an object is (rules 1–6
//! of the module docs), and each kind's required members.

use super::obj::MEMBERS;
use super::obj::{Obj, StatusField};
use crate::a2a::json::JStr;
use crate::a2a::model::{
    ArtifactUpdate, Event, Malformed, MessageEvent, Payload, RpcId, Status, StatusUpdate,
    TaskSnapshot, Text,
};

pub(super) fn bad(reason: impl Into<String>) -> Malformed {
    Malformed(reason.into())
}

/// The dialect an object says it is written in: 0.3 by its `kind`, 1.0 by
/// being a StreamResponse wrapper (a wrapper key beside other members says
/// nothing: older drafts' Tasks carry a `message`).
pub(super) fn dialect(o: &Obj<'_>) -> Option<crate::a2a::model::Version> {
    use crate::a2a::model::Version;
    match (o.kind.is_some(), o.is_wrapper()) {
        (true, _) => Some(Version::V0_3),
        (false, true) => Some(Version::V1_0),
        (false, false) => None,
    }
}

/// Rules 1–7 of the module docs, decided on the whole object. Members are
/// taken out of `o`.
pub(super) fn payload<'a>(o: &mut Obj<'a>) -> Result<Payload<'a>, Malformed> {
    if let Some(kind) = o.kind {
        let event = match kind.value().as_ref() {
            "task" => Event::Task(task(o)?),
            "message" => Event::Message(message(o)),
            "status-update" => Event::StatusUpdate(status_update(o)?),
            "artifact-update" => Event::ArtifactUpdate(artifact_update(o)?),
            other => return Err(bad(format!("unknown kind {other:?}"))),
        };
        return Ok(Payload::Event(event));
    }
    if o.is_wrapper() && o.wrappers > 1 {
        return Err(bad(format!(
            "a StreamResponse with {} where the oneof allows one",
            names(o.names & WRAPPERS)
        )));
    }
    let event = if o.is_wrapper() {
        match o.wrapper.take() {
            Some(wrapped) => return wrapped.map(Payload::Event),
            None => return Err(bad("a StreamResponse wrapper without its payload")),
        }
    } else if let Some(tasks) = o.tasks.take() {
        return Ok(Payload::TaskList(tasks?));
    } else if o.task_id.is_some() && matches!(o.status, Some(StatusField::Status(_))) {
        Event::StatusUpdate(status_update(o)?)
    } else if o.task_id.is_some() && o.artifact.is_some() {
        Event::ArtifactUpdate(artifact_update(o)?)
    } else if o.id.is_some() && matches!(o.status, Some(StatusField::Status(_))) {
        Event::Task(task(o)?)
    } else if o.message_id.is_some() || (o.role && o.parts) {
        Event::Message(message(o))
    } else if o.page || o.members == 0 {
        // Proto3 JSON omits an empty `tasks`: `{}` and `{"pageSize":50}`
        // are empty ListTasks pages.
        return Ok(Payload::TaskList(Vec::new()));
    } else {
        return Err(unknown_shape(o));
    };
    Ok(Payload::Event(event))
}

/// The bits of `Obj::names` of the four StreamResponse wrapper keys.
const WRAPPERS: u32 = 0b1111 << 5;

/// What an object that fits no shape held: the member names the shapes
/// use that it sent (a closed list, so the detail stays short), and how
/// many members it had in all.
fn unknown_shape(o: &Obj<'_>) -> Malformed {
    let n = o.members;
    let held = match o.names {
        0 => "none of the members A2A shapes use".to_owned(),
        bits => names(bits),
    };
    let wrapper = if o.names & WRAPPERS != 0 {
        "; a 1.0 StreamResponse wrapper has no member beside its payload"
    } else {
        ""
    };
    bad(format!(
        "no known A2A shape: an object of {n} member(s) with {held}{wrapper}"
    ))
}

/// The member names of `bits` (bit i: `MEMBERS[i]`), quoted.
fn names(bits: u32) -> String {
    let list: Vec<String> = MEMBERS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, m)| format!("`{m}`"))
        .collect();
    list.join(", ")
}

fn text(s: Option<JStr<'_>>) -> Option<Text<'_>> {
    s.map(JStr::value)
}

fn status_of<'a>(o: &mut Obj<'a>, what: &str) -> Result<Status<'a>, Malformed> {
    match o.status.take() {
        Some(StatusField::Status(s)) => Ok(s),
        _ => Err(bad(format!("{what} without a status object"))),
    }
}

pub(super) fn task<'a>(o: &mut Obj<'a>) -> Result<TaskSnapshot<'a>, Malformed> {
    let id = match o.id.take() {
        Some(RpcId::String(id)) => id,
        _ => return Err(bad("task without a string id")),
    };
    let status = status_of(o, "task")?;
    Ok(TaskSnapshot {
        id,
        context_id: text(o.context_id.take()),
        status,
        artifact_ids: o.artifact_ids.take().unwrap_or_default(),
    })
}

pub(super) fn message<'a>(o: &mut Obj<'a>) -> MessageEvent<'a> {
    MessageEvent {
        message_id: text(o.message_id.take()),
        task_id: text(o.task_id.take()),
        context_id: text(o.context_id.take()),
    }
}

pub(super) fn status_update<'a>(o: &mut Obj<'a>) -> Result<StatusUpdate<'a>, Malformed> {
    let status = status_of(o, "status update")?;
    let task_id = text(o.task_id.take()).ok_or_else(|| bad("status update without taskId"))?;
    Ok(StatusUpdate {
        task_id,
        context_id: text(o.context_id.take()),
        status,
        final_flag: o.final_flag,
    })
}

pub(super) fn artifact_update<'a>(o: &mut Obj<'a>) -> Result<ArtifactUpdate<'a>, Malformed> {
    let task_id = text(o.task_id.take()).ok_or_else(|| bad("artifact update without taskId"))?;
    let artifact_id = text(o.artifact.take().flatten())
        .ok_or_else(|| bad("artifact update without artifact.artifactId"))?;
    o.built_update = true;
    Ok(ArtifactUpdate {
        task_id,
        context_id: text(o.context_id.take()),
        artifact_id,
        append: o.append.unwrap_or(false),
        last_chunk: o.last_chunk.unwrap_or(false),
    })
}

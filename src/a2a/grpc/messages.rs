//! The response messages judging reads (`proto.rs` declares the same
//! fields for prost), read in place: strings borrowed from the message,
//! and prost's rules of merging kept, so the two read every message alike.
//! A scalar or string field sent twice keeps its last value; an embedded
//! message sent twice is one message with the fields of both (later ones
//! winning); a repeated field gathers every element; a oneof keeps its
//! last member, merged with an earlier one of the same member.
//!
//! The elements of the repeated fields judging keeps are counted as they
//! are read, as `repeats.rs` counts them on the wire (a Task's artifacts,
//! a list's tasks; a level's count ends at its first group, where that
//! walk stops), so a message over the bound is left as soon as it is.

use std::borrow::Cow;

use super::wire::{Reader, Result, WireError, WireType};
use crate::a2a::model::Version;

/// The elements of the repeated fields read so far, against the most
/// judging reads in one message.
pub(super) struct Tally {
    n: usize,
    max: usize,
}

impl Tally {
    /// None read yet, `max` the most.
    pub(super) fn new(max: usize) -> Tally {
        Tally { n: 0, max }
    }

    /// Whether the message held more than the most.
    pub(super) fn over(&self) -> bool {
        self.n > self.max
    }

    /// One more element: an error past the most, ending the reading.
    fn add(&mut self) -> Result<()> {
        self.n += 1;
        if self.over() {
            return Err(WireError::over());
        }
        Ok(())
    }
}

/// `google.protobuf.Timestamp`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Timestamp {
    pub(super) seconds: i64,
    pub(super) nanos: i32,
}

/// `TaskStatus`: `state` 1, `timestamp` 3.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct TaskStatus {
    pub(super) state: i32,
    pub(super) timestamp: Option<Timestamp>,
}

/// `Task`: `id` 1, `context_id` 2, `status` 3, the ids of `artifacts` 4.
#[derive(Debug, Default)]
pub(super) struct Task<'a> {
    pub(super) id: &'a str,
    pub(super) context_id: &'a str,
    pub(super) status: Option<TaskStatus>,
    pub(super) artifact_ids: Vec<Cow<'a, str>>,
}

/// `Message`: `message_id` 1, `context_id` 2, `task_id` 3.
#[derive(Debug, Default)]
pub(super) struct Message<'a> {
    pub(super) message_id: &'a str,
    pub(super) context_id: &'a str,
    pub(super) task_id: &'a str,
}

/// `TaskStatusUpdateEvent`: `task_id` 1, `context_id` 2, `status` 3, and
/// in 0.3 `final` 4 (1.0's field 4 is metadata, unread).
#[derive(Debug, Default)]
pub(super) struct StatusUpdate<'a> {
    pub(super) task_id: &'a str,
    pub(super) context_id: &'a str,
    pub(super) status: Option<TaskStatus>,
    pub(super) r#final: bool,
}

/// `TaskArtifactUpdateEvent`: `task_id` 1, `context_id` 2, the id of
/// `artifact` 3, `append` 4, `last_chunk` 5.
#[derive(Debug, Default)]
pub(super) struct ArtifactUpdate<'a> {
    pub(super) task_id: &'a str,
    pub(super) context_id: &'a str,
    /// Empty when no artifact was sent.
    pub(super) artifact_id: &'a str,
    pub(super) append: bool,
    pub(super) last_chunk: bool,
}

/// `StreamResponse`'s (and `SendMessageResponse`'s) oneof.
#[derive(Debug)]
pub(super) enum Payload<'a> {
    Task(Task<'a>),
    Message(Message<'a>),
    StatusUpdate(StatusUpdate<'a>),
    ArtifactUpdate(ArtifactUpdate<'a>),
}

/// A `StreamResponse` (fields 1 to 4, the oneof) of `version`. A member
/// other than the one held starts afresh (prost drops the one held); the
/// same member again is merged into it.
pub(super) fn stream_response<'a>(
    msg: &'a [u8],
    version: Version,
    tally: &mut Tally,
) -> Result<Option<Payload<'a>>> {
    let depth = super::wire::DEPTH;
    let mut counting = true;
    let mut payload = None;
    let mut r = Reader::new(msg);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => {
                if !matches!(payload, Some(Payload::Task(_))) {
                    payload = Some(Payload::Task(Task::default()));
                }
                if let Some(Payload::Task(t)) = &mut payload {
                    r.nested(wire, depth, "task", |run, d| {
                        task(run, t, d, tally, counting)
                    })?;
                }
            }
            2 => {
                if !matches!(payload, Some(Payload::Message(_))) {
                    payload = Some(Payload::Message(Message::default()));
                }
                if let Some(Payload::Message(m)) = &mut payload {
                    r.nested(wire, depth, "message", |run, d| message(run, m, d))?;
                }
            }
            3 => {
                if !matches!(payload, Some(Payload::StatusUpdate(_))) {
                    payload = Some(Payload::StatusUpdate(StatusUpdate::default()));
                }
                if let Some(Payload::StatusUpdate(s)) = &mut payload {
                    r.nested(wire, depth, "status_update", |run, d| {
                        status_update(run, s, version, d)
                    })?;
                }
            }
            4 => {
                if !matches!(payload, Some(Payload::ArtifactUpdate(_))) {
                    payload = Some(Payload::ArtifactUpdate(ArtifactUpdate::default()));
                }
                if let Some(Payload::ArtifactUpdate(a)) = &mut payload {
                    r.nested(wire, depth, "artifact_update", |run, d| {
                        artifact_update(run, a, d)
                    })?;
                }
            }
            _ => {
                counting &= wire != WireType::StartGroup;
                r.skip(number, wire, depth)?;
            }
        }
    }
    Ok(payload)
}

/// A `ListTasksResponse`'s tasks (field 1).
pub(super) fn list_tasks<'a>(msg: &'a [u8], tally: &mut Tally) -> Result<Vec<Task<'a>>> {
    let depth = super::wire::DEPTH;
    let mut counting = true;
    let mut tasks = Vec::new();
    let mut r = Reader::new(msg);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => {
                let run = r.message(wire, depth).map_err(|e| e.at("tasks"))?;
                if counting {
                    tally.add()?;
                }
                let mut t = Task::default();
                task(run, &mut t, depth - 1, tally, counting).map_err(|e| e.at("tasks"))?;
                tasks.push(t);
            }
            _ => {
                counting &= wire != WireType::StartGroup;
                r.skip(number, wire, depth)?;
            }
        }
    }
    Ok(tasks)
}

/// A whole message that is a `Task`.
pub(super) fn whole_task<'a>(msg: &'a [u8], tally: &mut Tally) -> Result<Task<'a>> {
    let mut t = Task::default();
    task(msg, &mut t, super::wire::DEPTH, tally, true)?;
    Ok(t)
}

/// Merges the `Task` in `run` into `t`, its fields read at `depth`; its
/// artifacts are counted in `tally` while `counting`.
fn task<'a>(
    run: &'a [u8],
    t: &mut Task<'a>,
    depth: u32,
    tally: &mut Tally,
    mut counting: bool,
) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => t.id = r.string(wire).map_err(|e| e.at("Task.id"))?,
            2 => t.context_id = r.string(wire).map_err(|e| e.at("Task.context_id"))?,
            3 => {
                let s = t.status.get_or_insert_with(TaskStatus::default);
                r.nested(wire, depth, "Task.status", |run, d| status(run, s, d))?;
            }
            4 => {
                let run = r.message(wire, depth).map_err(|e| e.at("Task.artifacts"))?;
                if counting {
                    tally.add()?;
                }
                let id = artifact(run, "", depth - 1).map_err(|e| e.at("Task.artifacts"))?;
                t.artifact_ids.push(Cow::Borrowed(id));
            }
            _ => {
                // The walk of `repeats.rs` stops at a group (and counts
                // nothing after it): so does this count.
                counting &= wire != WireType::StartGroup;
                r.skip(number, wire, depth)?;
            }
        }
    }
    Ok(())
}

/// Merges the `TaskStatus` in `run` into `s`.
fn status(run: &[u8], s: &mut TaskStatus, depth: u32) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => s.state = r.int32(wire).map_err(|e| e.at("TaskStatus.state"))?,
            3 => {
                let t = s.timestamp.get_or_insert_with(Timestamp::default);
                r.nested(wire, depth, "TaskStatus.timestamp", |run, d| {
                    timestamp(run, t, d)
                })?;
            }
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// Merges the `Timestamp` in `run` into `t`.
fn timestamp(run: &[u8], t: &mut Timestamp, depth: u32) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => t.seconds = r.uint(wire).map_err(|e| e.at("Timestamp.seconds"))? as i64,
            2 => t.nanos = r.int32(wire).map_err(|e| e.at("Timestamp.nanos"))?,
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// The id of the `Artifact` in `run` merged over `id` (the id it had).
fn artifact<'a>(run: &'a [u8], mut id: &'a str, depth: u32) -> Result<&'a str> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => id = r.string(wire).map_err(|e| e.at("Artifact.artifact_id"))?,
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(id)
}

/// Merges the `Message` in `run` into `m`.
fn message<'a>(run: &'a [u8], m: &mut Message<'a>, depth: u32) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => m.message_id = r.string(wire).map_err(|e| e.at("Message.message_id"))?,
            2 => m.context_id = r.string(wire).map_err(|e| e.at("Message.context_id"))?,
            3 => m.task_id = r.string(wire).map_err(|e| e.at("Message.task_id"))?,
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// Merges the `TaskStatusUpdateEvent` of `version` in `run` into `s`.
fn status_update<'a>(
    run: &'a [u8],
    s: &mut StatusUpdate<'a>,
    version: Version,
    depth: u32,
) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => s.task_id = r.string(wire).map_err(|e| e.at("StatusUpdate.task_id"))?,
            2 => {
                s.context_id = r
                    .string(wire)
                    .map_err(|e| e.at("StatusUpdate.context_id"))?
            }
            3 => {
                let st = s.status.get_or_insert_with(TaskStatus::default);
                r.nested(wire, depth, "StatusUpdate.status", |run, d| {
                    status(run, st, d)
                })?;
            }
            4 if version == Version::V0_3 => {
                s.r#final = r.bool(wire).map_err(|e| e.at("StatusUpdate.final"))?;
            }
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// Merges the `TaskArtifactUpdateEvent` in `run` into `a`.
fn artifact_update<'a>(run: &'a [u8], a: &mut ArtifactUpdate<'a>, depth: u32) -> Result<()> {
    let mut r = Reader::new(run);
    while let Some((number, wire)) = r.field()? {
        match number {
            1 => a.task_id = r.string(wire).map_err(|e| e.at("ArtifactUpdate.task_id"))?,
            2 => {
                a.context_id = r
                    .string(wire)
                    .map_err(|e| e.at("ArtifactUpdate.context_id"))?
            }
            3 => {
                let merged = a.artifact_id;
                a.artifact_id = r.nested(wire, depth, "ArtifactUpdate.artifact", |run, d| {
                    artifact(run, merged, d)
                })?;
            }
            4 => a.append = r.bool(wire).map_err(|e| e.at("ArtifactUpdate.append"))?,
            5 => {
                a.last_chunk = r
                    .bool(wire)
                    .map_err(|e| e.at("ArtifactUpdate.last_chunk"))?
            }
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

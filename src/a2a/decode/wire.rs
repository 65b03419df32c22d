//! The A2A members of one JSON object as the decoder needs them, whatever
//! the version or envelope (one union shape read in one pass), the JSON-RPC
//! id, and the state spellings. Parts, metadata and history are skipped by
//! the cursor, never built; nested objects are converted as they are read.

use super::convert;
use super::obj::{Obj, StatusField, Updates, MEMBERS};
use crate::a2a::errors;
use crate::a2a::json::members::{
    boolean, integer, literal_at, members, nullable, objects, present, string, Int, Seen,
};
use crate::a2a::json::{Cursor, JStr, Kind, Result};
use crate::a2a::model::{Event, Malformed, RpcId, StateValue, Status, TaskSnapshot, Text};
use crate::a2a::spelling::{number_id, state_from_number, state_from_str};

/// The index of a member in `MEMBERS`.
#[inline(always)]
fn member(key: &str) -> Option<usize> {
    Some(match key {
        "jsonrpc" => 0,
        "id" => 1,
        "result" => 2,
        "error" => 3,
        "kind" => 4,
        "task" => 5,
        "message" => 6,
        "statusUpdate" => 7,
        "artifactUpdate" => 8,
        "tasks" => 9,
        "status" => 10,
        "taskId" => 11,
        "contextId" => 12,
        "messageId" => 13,
        "role" => 14,
        "parts" => 15,
        "artifact" => 16,
        "artifacts" => 17,
        "append" => 18,
        "lastChunk" => 19,
        "final" => 20,
        "type" => 21,
        "title" => 22,
        "code" => 23,
        "details" => 24,
        "nextPageToken" => 25,
        "pageSize" => 26,
        "totalSize" => 27,
        _ => return None,
    })
}

/// Reads one object of the union shape into `o`, which starts empty (the
/// cursor must be at `{`). Filled in place: the union is too large to move.
pub(crate) fn read_obj<'a>(cur: &mut Cursor<'a>, o: &mut Obj<'a>) -> Result<()> {
    cur.begin_object()?;
    let mut seen = Seen(0);
    let mut first = true;
    while let Some(key) = cur.next_key(&mut first) {
        // A member sent as `null` counts as absent, here too.
        o.members += u32::from(cur.peek()? != Kind::Null);
        // A member name is matched as sent; an escaped one (never one of
        // the names, as sent) is matched by its value.
        let found = match member(key.as_sent()) {
            None if cur.key_escaped() => member(&key.value()),
            found => found,
        };
        let Some(i) = found else {
            cur.skip_value()?;
            continue;
        };
        let m = seen.once(cur, i, MEMBERS[i])?;
        match i {
            0 => o.jsonrpc = present(cur)?,
            1 => o.id = Some(rpc_id_value(cur, m)?),
            2 => {
                let mut dialect = None;
                object(cur, m, &mut o.result, &mut o.updates, |r| {
                    dialect = convert::dialect(r);
                    convert::payload(r)
                })?;
                o.result_dialect = dialect;
            }
            3 => o.error = errors::error_obj(cur, m)?,
            4 => o.kind = string(cur, m)?,
            6 if cur.peek()? == Kind::String => {
                cur.string()?;
                o.message_text = true;
            }
            5..=8 => {
                let wrapped = object(cur, m, &mut o.wrapper, &mut o.updates, |w| match i {
                    5 => convert::task(w).map(Event::Task),
                    6 => Ok(Event::Message(convert::message(w))),
                    7 => convert::status_update(w).map(Event::StatusUpdate),
                    _ => convert::artifact_update(w).map(Event::ArtifactUpdate),
                })?;
                o.wrappers += u8::from(wrapped);
            }
            9 => o.tasks = tasks(cur, m)?,
            10 => o.status = status(cur, m)?,
            11 => o.task_id = string(cur, m)?,
            12 => o.context_id = string(cur, m)?,
            13 => o.message_id = string(cur, m)?,
            14 => o.role = present(cur)?,
            15 => o.parts = present(cur)?,
            16 => o.artifact = artifact(cur, m)?,
            17 => o.artifact_ids = artifacts(cur, m)?,
            18 => {
                o.append = boolean(cur, m)?;
                o.flags.append = literal_at(cur, o.append);
            }
            19 => {
                o.last_chunk = boolean(cur, m)?;
                o.flags.last_chunk = literal_at(cur, o.last_chunk);
            }
            20 => o.final_flag = boolean(cur, m)?,
            21 => o.problem_type = string(cur, m)?,
            22 => o.title = string(cur, m)?,
            23 => o.code = errors::code(cur)?,
            24 => o.details = Some(errors::details(cur)?),
            _ => {
                cur.skip_value()?;
                o.page = true;
            }
        }
    }
    o.names = seen.0;
    cur.check()
}

/// A nested object of the union shape, converted by `f` straight into
/// `slot` (the conversions are large: no result carries them); false, and
/// `slot` untouched, for `null`.
#[inline(never)]
fn object<'a, T>(
    cur: &mut Cursor<'a>,
    m: &'static str,
    slot: &mut Option<T>,
    updates: &mut Updates,
    f: impl FnOnce(&mut Obj<'a>) -> T,
) -> Result<bool> {
    match cur.peek()? {
        Kind::Null => cur.null().map(|()| false),
        Kind::Object => {
            let mut o = Obj::default();
            read_obj(cur, &mut o)?;
            *slot = Some(f(&mut o));
            updates.absorb(&o);
            Ok(true)
        }
        _ => cur.type_error(m, "an object"),
    }
}

/// An `id` value: `null`, a string, or a number in its normal form
/// (`number_id`), the same for the request's id and the answer's, so the
/// two compare equal exactly when they are the same JSON value.
pub(crate) fn rpc_id_value<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<RpcId<'a>> {
    match cur.peek()? {
        Kind::Null => cur.null().map(|()| RpcId::Null),
        Kind::String => Ok(RpcId::String(cur.string_value()?)),
        Kind::Number => match number_id(cur.number()?) {
            Some(n) => Ok(RpcId::Number(n)),
            None => cur.type_error(m, "a JSON-RPC id"),
        },
        _ => cur.type_error(m, "a JSON-RPC id (string, number or null)"),
    }
}

/// `tasks`: a ListTasks result's tasks, each converted as a Task.
fn tasks<'a>(
    cur: &mut Cursor<'a>,
    m: &'static str,
) -> Result<Option<std::result::Result<Vec<TaskSnapshot<'a>>, Malformed>>> {
    let mut list = Ok(Vec::new());
    let read = objects(cur, m, |cur| {
        let mut o = Obj::default();
        read_obj(cur, &mut o)?;
        let task = convert::task(&mut o);
        if let Ok(v) = &mut list {
            match task {
                Ok(task) => v.push(task),
                Err(e) => list = Err(e),
            }
        }
        Ok(())
    })?;
    Ok(read.then_some(list))
}

/// `artifact`: only its id matters.
fn artifact<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<Option<Option<JStr<'a>>>> {
    nullable(cur, |cur, kind| match kind {
        Kind::Object => artifact_id(cur),
        _ => cur.type_error(m, "an object"),
    })
}

fn artifact_id<'a>(cur: &mut Cursor<'a>) -> Result<Option<JStr<'a>>> {
    let mut id = None;
    members(cur, &["artifactId"], |cur, _| {
        id = string(cur, "artifactId")?;
        Ok(())
    })?;
    Ok(id)
}

/// `artifacts`: the ids of a task's artifacts.
fn artifacts<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<Option<Vec<Text<'a>>>> {
    let mut ids = Vec::new();
    let read = objects(cur, m, |cur| {
        if let Some(id) = artifact_id(cur)? {
            ids.push(id.value());
        }
        Ok(())
    })?;
    Ok(read.then_some(ids))
}

/// `status`: a status object, a number, or (in odd bodies) a string.
fn status<'a>(cur: &mut Cursor<'a>, m: &'static str) -> Result<Option<StatusField<'a>>> {
    const WANT: &str = "a status object or integer";
    nullable(cur, |cur, kind| {
        Ok(match kind {
            Kind::Object => StatusField::Status(status_obj(cur)?),
            Kind::String => {
                cur.string()?;
                StatusField::Text
            }
            Kind::Number => match integer(cur, m, WANT)? {
                Int::Unsigned(u) => StatusField::Code(i64::try_from(u).unwrap_or(i64::MAX)),
                Int::Negative(i) => StatusField::Code(i),
            },
            _ => return cur.type_error(m, WANT),
        })
    })
}

fn status_obj<'a>(cur: &mut Cursor<'a>) -> Result<Status<'a>> {
    const WANT: &str = "a state name or integer";
    let mut state = None;
    let mut timestamp = None;
    members(cur, &["state", "timestamp"], |cur, i| {
        if i == 1 {
            timestamp = string(cur, "timestamp")?.map(JStr::value);
            return Ok(());
        }
        state = nullable(cur, |cur, kind| match kind {
            Kind::String => Ok(state_from_str(&cur.string_value()?)),
            Kind::Number => Ok(match integer(cur, "state", WANT)? {
                Int::Unsigned(u) => state_from_number(u),
                Int::Negative(i) => StateValue::Undefined(i.to_string()),
            }),
            _ => cur.type_error("state", WANT),
        })?;
        Ok(())
    })?;
    Ok(Status {
        // 1.0 JSON omits fields at their default, and the default state is
        // UNSPECIFIED: an absent state is that.
        state: state.unwrap_or(StateValue::Unspecified(String::new())),
        timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::{member, MEMBERS};

    #[test]
    fn the_member_match_and_the_member_list_agree() {
        // `member` is a match for speed; `MEMBERS` names the duplicate bits.
        for (i, name) in MEMBERS.iter().enumerate() {
            assert_eq!(member(name), Some(i), "{name}");
        }
        for other in ["", "Id", "taskid", "artifactId", "parts ", "results"] {
            assert_eq!(member(other), None, "{other:?}");
        }
    }
}

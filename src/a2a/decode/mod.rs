//! Body or frame bytes → one normalised `Decoded`, from any of: 1.0 JSON-RPC
//! envelope, 1.0 bare StreamResponse / Task / ListTasks result, 0.3 `kind`
//! objects, bare event objects of real-world dumps, JSON-RPC / REST errors.
//!
//! Shape rules, first match wins, for the top object (no `jsonrpc`/`result`)
//! or the envelope's `result`:
//! 1. `kind` (0.3): `task` | `message` | `status-update` | `artifact-update`;
//! 2. a 1.0 StreamResponse wrapper: an object whose one member is `task` |
//!    `message` | `statusUpdate` | `artifactUpdate` (only wrapper keys, two
//!    or more, is malformed); a wrapper key beside other members is not a
//!    wrapper (older drafts' Tasks carry a `message`): the other rules read
//!    the object;
//! 3. `tasks` array: a ListTasks result;
//! 4. `taskId` + `status`: a status update; `taskId` + `artifact`: an
//!    artifact update (the `kind`-less objects of real-world dumps);
//! 5. `id` + `status`: a bare Task (GetTask, CancelTask);
//! 6. `messageId`, or `role` + `parts`: a bare Message;
//! 7. no member at all, or only a page's `nextPageToken` / `pageSize` /
//!    `totalSize`: an empty ListTasks result (proto3 JSON leaves out what
//!    is at its default, an empty list included).
//!
//! Errors: an envelope's `error`; a top-level `error` object (REST
//! google.rpc.Status-like, `code` = the HTTP code it states); an error
//! object sent bare (`code` with a string `message` or a `details[].reason`:
//! google.rpc.Status, or 0.3 HTTP+JSON's JSON-RPC error object); an RFC 9457
//! problem (`type`/`title` with a numeric `status`). The A2A error is taken
//! from a `details[].reason`, else from a JSON-RPC code -32001..-32009 (for
//! problems: from the `type`/`title` text); otherwise `Other`.

//!
//! The files: `obj` (the union shape every object is read into), `wire`
//! (reading it from the cursor), `convert` (shape → model).

mod convert;
mod obj;
mod wire;

pub(crate) use obj::Flags;
pub(crate) use wire::rpc_id_value;

use super::errors::error_from_text;
use super::json::{Cursor, JStr, JsonError, Kind, Skipped, Stop};
use super::model::{A2aError, Decoded, ErrorInfo, Malformed, Payload, RpcId};
use convert::{bad, payload};
use obj::{Obj, StatusField, Updates};
use wire::read_obj;

/// Decodes one JSON body or SSE event's data.
pub fn decode(data: &[u8]) -> Result<Decoded<'_>, Malformed> {
    decode_text(&mut Cursor::new(utf8(data)?), &mut Updates::default())
}

/// `decode`, noting in `skipped` where in `data` the longest strings
/// without escapes that it skipped lie (the decoding does not depend on
/// their content), and in `flags` where the literals of the one artifact
/// update's `append` and `lastChunk` lie.
pub(crate) fn decode_noting_skipped<'a>(
    data: &'a [u8],
    skipped: &mut Skipped,
    flags: &mut Flags,
) -> Result<Decoded<'a>, Malformed> {
    let mut cur = Cursor::noting_skipped(utf8(data)?);
    let mut updates = Updates::default();
    let decoded = decode_text(&mut cur, &mut updates);
    *skipped = cur.skipped();
    *flags = updates.only();
    decoded
}

/// JSON is UTF-8 (RFC 8259 §8.1).
#[inline]
fn utf8(data: &[u8]) -> Result<&str, Malformed> {
    std::str::from_utf8(data).map_err(|e| bad(format!("not valid UTF-8: {e}")))
}

/// Decodes the text at `cur`, adding the artifact updates built to
/// `updates`.
fn decode_text<'a>(cur: &mut Cursor<'a>, updates: &mut Updates) -> Result<Decoded<'a>, Malformed> {
    match cur.peek() {
        Ok(Kind::Object) => {}
        peeked => {
            let what = match peeked {
                Ok(Kind::Array) => "an array",
                Ok(Kind::String) => "a string",
                Ok(Kind::Number) => "a number",
                Ok(Kind::Bool) => "a boolean",
                _ => "null",
            };
            return Err(match cur.skip_value().and_then(|()| cur.end()) {
                Ok(()) => bad(format!("the JSON value is {what}, not an object")),
                Err(Stop) => json_error(cur.take_error()),
            });
        }
    }
    let mut top = Obj::default();
    if read_obj(cur, &mut top).and_then(|()| cur.end()) == Err(Stop) {
        return Err(json_error(cur.take_error()));
    }
    let decoded = top_level(&mut top);
    updates.absorb(&top);
    decoded
}

/// What the top-level object `top` is, by its members.
fn top_level<'a>(top: &mut Obj<'a>) -> Result<Decoded<'a>, Malformed> {
    if top.jsonrpc || top.result.is_some() {
        let rpc_id = Some(top.id.take().unwrap_or(RpcId::Null));
        let dialect = top.result_dialect;
        return match (top.result.take(), top.error.take()) {
            (Some(result), None) => result.map(|payload| Decoded {
                rpc_id,
                payload,
                dialect,
            }),
            (None, Some(err)) => Ok(Decoded {
                rpc_id,
                payload: Payload::Error(err),
                dialect: None,
            }),
            (Some(_), Some(_)) => Err(bad("JSON-RPC response with both result and error")),
            (None, None) => Err(bad("JSON-RPC response without result or error")),
        };
    }
    if let Some(err) = top.error.take() {
        return Ok(Decoded {
            rpc_id: None,
            payload: Payload::Error(err),
            dialect: None,
        });
    }
    if let Some(code) = top
        .code
        .filter(|_| top.message_text || top.details.is_some_and(|d| d.reason.is_some()))
    {
        // An error object sent bare: google.rpc.Status (`code`, `message`,
        // `details`), or a JSON-RPC error object as 0.3 HTTP+JSON servers
        // answer (`{"code":-32001,"message":..}`).
        return Ok(Decoded {
            rpc_id: None,
            payload: Payload::Error(super::errors::bare(code, top.details)),
            dialect: None,
        });
    }
    if let (Some(StatusField::Code(code)), true) = (
        &top.status,
        top.problem_type.is_some() || top.title.is_some(),
    ) {
        let hint = top.problem_type.or(top.title).map(JStr::value);
        let error = hint
            .as_deref()
            .and_then(error_from_text)
            .unwrap_or(A2aError::Other);
        return Ok(Decoded {
            rpc_id: None,
            payload: Payload::Error(ErrorInfo::new(*code, error)),
            dialect: None,
        });
    }
    let dialect = convert::dialect(top);
    Ok(Decoded {
        rpc_id: None,
        payload: payload(top)?,
        dialect,
    })
}

fn json_error(e: JsonError) -> Malformed {
    match e {
        JsonError::Syntax { .. } => bad(format!("not valid JSON: {e}")),
        JsonError::Type { .. } | JsonError::Duplicate(_) => {
            bad(format!("not a known A2A shape: {e}"))
        }
    }
}

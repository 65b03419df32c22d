//! Reads one recorded file (`.sse`, `.jsonl`, `.har`, or `-` for an SSE
//! body on stdin) into exchanges to judge.
//!
//! A bare `.sse` or `.jsonl` says nothing of its request, so it is judged as
//! the event stream of a streamed send. A sidecar `STEM.json` beside it
//! (`{"exchanges":[{"request":{method,path,headers,body},
//! "response":{status,content_type}}]}`) tells how it was asked for: then a
//! `.sse` is judged as that exchange, and a `.jsonl` as one exchange per
//! line (line i answers exchange i).

use std::io::Read;
use std::path::Path;

use super::{display, har, sidecar, CheckError, Recorded, RecordingError};
use crate::a2a::decode::decode;
use crate::a2a::model::{Binding, Exchange, Operation, Version};

/// Loads `path` by its extension.
pub(crate) fn load(path: &Path) -> Result<Vec<Recorded>, CheckError> {
    let read_err = |source| CheckError::Read {
        path: path.to_owned(),
        source,
    };
    if path.as_os_str() == "-" {
        let mut body = Vec::new();
        std::io::stdin().read_to_end(&mut body).map_err(read_err)?;
        return Ok(vec![stream(body, "-".into())]);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let bytes = std::fs::read(path).map_err(read_err)?;
    let format_err = |why| CheckError::Format {
        path: path.to_owned(),
        why,
    };
    let sidecar = match ext {
        "sse" | "jsonl" => sidecar::load(path).map_err(format_err)?,
        _ => None,
    };
    parse(ext, bytes, sidecar, display(path)).map_err(format_err)
}

/// Reads a recording's bytes by its kind (`sse`, `jsonl`, `har`), with the
/// sidecar that names its requests, if any.
pub(crate) fn parse(
    ext: &str,
    bytes: Vec<u8>,
    sidecar: Option<sidecar::Sidecar>,
    label: String,
) -> Result<Vec<Recorded>, RecordingError> {
    match (ext, sidecar) {
        ("sse", Some(sc)) => sc.stream(bytes, &label),
        ("jsonl", Some(sc)) => sc.lines(&bytes, &label),
        ("sse", None) => Ok(vec![stream(bytes, label)]),
        ("jsonl", None) => Ok(vec![stream(jsonl_to_sse(&bytes), label)]),
        ("har", _) => har::exchanges(&bytes, &label),
        (_, _) => Err(RecordingError::UnknownType),
    }
}

/// A recorded event stream, judged as the answer to a streamed send (the
/// recording says nothing about its request). Binding, version and request
/// id are read off the first event that decodes.
fn stream(body: Vec<u8>, label: String) -> Recorded {
    let (binding, version, rpc_id) = sniff(&body);
    Recorded {
        exchange: Exchange {
            binding,
            version,
            operation: Operation::SendStreamingMessage,
            rpc_id,
            task_id: None,
            context_id: None,
            blocking: false,
            guessed_path: None,
            message_id: None,
        },
        status: 200,
        content_type: Some("text/event-stream".into()),
        body,
        at: None,
        started: None,
        assumed: true,
        unrecorded: false,
        end: crate::lifecycle::End::Upstream,
        upstream: label.clone(),
        label,
    }
}

/// Each non-blank line of a JSON Lines file becomes one SSE event.
fn jsonl_to_sse(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 8);
    for line in bytes.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
    }
    out
}

/// Guesses binding, version and request id from the first decodable event.
fn sniff(body: &[u8]) -> (Binding, Version, Option<crate::a2a::model::RpcId<'static>>) {
    let mut found = None;
    let mut framer = crate::sse::Framer::new(1 << 20);
    framer.push(body, &mut |frame| {
        if found.is_some() {
            return;
        }
        if let crate::sse::Frame::Event(ev) = frame {
            if let Ok(d) = decode(ev.data) {
                let v03 = looks_v03(ev.data);
                found = Some((d.rpc_id.map(|id| id.into_owned()), v03));
            }
        }
    });
    match found {
        Some((Some(id), v03)) => (Binding::JsonRpc, version(v03), Some(id)),
        Some((None, v03)) => (Binding::Rest, version(v03), None),
        None => (Binding::JsonRpc, Version::V1_0, None),
    }
}

fn version(v03: bool) -> Version {
    if v03 {
        Version::V0_3
    } else {
        Version::V1_0
    }
}

/// 0.3 payloads carry a `kind` discriminator or lower-case states.
fn looks_v03(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    text.contains("\"kind\"") || !text.contains("TASK_STATE_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_lines_become_events() {
        let sse = jsonl_to_sse(b"{\"a\":1}\r\n\n  \n{\"b\":2}");
        assert_eq!(sse, b"data: {\"a\":1}\n\ndata: {\"b\":2}\n\n");
    }
}

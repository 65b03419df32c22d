//! Evidence for an audit record: the offending frame's data, with part
//! contents optionally redacted, cut to the configured size.

use std::borrow::Cow;

use serde_json::Value;

/// How evidence is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidencePolicy {
    /// Longest evidence kept, in bytes (cut at a character boundary).
    pub max_bytes: usize,
    /// Replace part contents (text, data, raw, file bytes) with their length.
    pub redact_parts: bool,
}

impl Default for EvidencePolicy {
    fn default() -> Self {
        EvidencePolicy {
            max_bytes: 2048,
            redact_parts: false,
        }
    }
}

impl EvidencePolicy {
    /// Prepares raw frame bytes as evidence.
    pub fn prepare(&self, raw: &[u8]) -> String {
        // Valid UTF-8, the usual case, is checked by the standard library's
        // word-at-a-time scan; only invalid text takes the lossy one, which
        // goes a byte at a time.
        let text = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        if self.redact_parts {
            let redacted = redact(&text);
            if redacted.len() <= self.max_bytes {
                return redacted;
            }
            return cut(&redacted, self.max_bytes);
        }
        cut(&text, self.max_bytes)
    }
}

/// `s` cut to at most `max` bytes at a character boundary, the cut marked
/// (only what is kept is copied).
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let mut kept = String::with_capacity(end + '…'.len_utf8());
    kept.push_str(&s[..end]);
    kept.push('…');
    kept
}

/// Redacts by allow-list: inside every Message and Artifact, only ids,
/// roles, kinds and media types keep their values; every other value
/// (part text, data, bytes, URLs, file names, names, descriptions,
/// metadata) is replaced by its length, whatever its shape. States, task
/// ids and the structure outside them stay. Data that is not JSON cannot
/// be searched, so it is withheld whole.
fn redact(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(mut v) => {
            walk(&mut v);
            v.to_string()
        }
        Err(_) => format!("[redacted: {} bytes, not JSON]", text.len()),
    }
}

/// Members holding a Message or an Artifact (one, or a list of them):
/// 1.0 and 0.3 JSON, and 0.3 proto-JSON (`msg`, status `update`).
const CONTENT_HOLDERS: [&str; 7] = [
    "message",
    "msg",
    "update",
    "artifact",
    "history",
    "artifacts",
    "messages",
];

/// Members whose values stay inside a Message or Artifact.
const KEPT: [&str; 9] = [
    "messageId",
    "taskId",
    "contextId",
    "artifactId",
    "referenceTaskIds",
    "role",
    "kind",
    "mediaType",
    "mimeType",
];

/// Outside content: finds the Messages and Artifacts (an object sent
/// bare counts too: one with `parts`/`content`, a `messageId`, an
/// `artifactId`, or 0.3 `kind: "message"`).
fn walk(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let is_content = map.contains_key("parts")
                || map.contains_key("content")
                || map.contains_key("messageId")
                || map.contains_key("artifactId")
                || map.get("kind").and_then(Value::as_str) == Some("message");
            if is_content {
                redact_content(v);
                return;
            }
            for (key, child) in map.iter_mut() {
                if CONTENT_HOLDERS.contains(&key.as_str()) && !child.is_string() {
                    redact_content(child);
                } else {
                    walk(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// Inside content: allow-listed members keep their values, objects and
/// lists keep their shape, every other value becomes its length.
fn redact_content(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let kept = KEPT.contains(&key.as_str())
                    && matches!(child, Value::String(_) | Value::Array(_) | Value::Null)
                    && child
                        .as_array()
                        .is_none_or(|ids| ids.iter().all(Value::is_string));
                if kept {
                    continue;
                }
                match child {
                    // Opaque content: its keys may be data too.
                    Value::Object(_) if key == "data" || key == "metadata" => {
                        *child = Value::String(length_of(child));
                    }
                    Value::Object(_) | Value::Array(_) => redact_content(child),
                    Value::Null => {}
                    _ => *child = Value::String(length_of(child)),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_content),
        Value::Null => {}
        other => *other = Value::String(length_of(other)),
    }
}

fn length_of(v: &Value) -> String {
    let n = match v {
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    };
    format!("[redacted: {n} bytes]")
}

#[cfg(test)]
mod tests;

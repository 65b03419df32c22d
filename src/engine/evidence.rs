//! Evidence for an audit record: the offending frame's data, with part
//! contents optionally redacted, cut to the configured size.

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
        let text = String::from_utf8_lossy(raw);
        let text = if self.redact_parts {
            redact(&text)
        } else {
            text.into_owned()
        };
        cut(text, self.max_bytes)
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary, marking the cut.
fn cut(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
    s
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
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_char_boundary() {
        let p = EvidencePolicy {
            max_bytes: 4,
            redact_parts: false,
        };
        assert_eq!(p.prepare("abcdef".as_bytes()), "abcd…");
        assert_eq!(p.prepare("abé".as_bytes()), "abé");
        assert_eq!(p.prepare("abcé".as_bytes()), "abc…");
        assert_eq!(p.prepare(b"abc"), "abc");
    }

    #[test]
    fn redacts_parts_of_both_versions() {
        let p = EvidencePolicy {
            max_bytes: 4096,
            redact_parts: true,
        };
        let raw = br#"{"result":{"artifactUpdate":{"artifact":{"artifactId":"a","parts":[{"text":"secret"},{"data":{"k":1}},{"raw":"AAAA"},{"url":"https://x/y?sig=tok"},{"kind":"file","file":{"bytes":"QUJD","name":"n.pdf","mimeType":"application/pdf"}}]}}}}"#;
        let out = p.prepare(raw);
        for gone in ["secret", "\"k\"", "AAAA", "sig=tok", "QUJD", "n.pdf"] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
        assert!(out.contains("[redacted: 6 bytes]"), "{out}");
        assert!(out.contains("[redacted: 7 bytes]"), "{out}");
        for kept in [
            "\"artifactId\":\"a\"",
            "\"kind\":\"file\"",
            "application/pdf",
        ] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
    }

    /// Allow-list, whatever the shape: parts as an object or a string,
    /// part metadata and filenames, 0.3 proto-JSON `content`, a status
    /// message, history, names; ids, states and roles stay.
    #[test]
    fn redacts_every_shape_of_content() {
        let p = EvidencePolicy {
            max_bytes: 1 << 20,
            redact_parts: true,
        };
        let raw = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
            "task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING",
                "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": {"text": "S1"}}},
                "history": [{"messageId": "m-2", "role": "ROLE_USER", "parts": "S2",
                    "metadata": {"S3": "S4"}}],
                "artifacts": [{"artifactId": "a-1", "name": "S5", "description": "S6",
                    "parts": [{"text": "S7", "filename": "S8", "mediaType": "text/plain",
                        "metadata": {"k": "S9"}}]}],
                "metadata": {"kept": "outside content"}}}});
        let out = p.prepare(raw.to_string().as_bytes());
        for gone in ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9"] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
        for kept in [
            "t-1",
            "c-1",
            "TASK_STATE_WORKING",
            "m-1",
            "m-2",
            "a-1",
            "ROLE_AGENT",
            "text/plain",
            "outside content",
        ] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
        // 0.3: a bare Message result and proto-JSON `content`.
        let v03 = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"S1"}]}}"#;
        let out = p.prepare(v03);
        assert!(
            !out.contains("S1") && out.contains("\"role\":\"agent\""),
            "{out}"
        );
        let proto = br#"{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"m","content":[{"text":"S1"}]}}}}"#;
        let out = p.prepare(proto);
        assert!(
            !out.contains("S1") && out.contains("TASK_STATE_FAILED"),
            "{out}"
        );
        // An error's message text is no Message: kept.
        let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#;
        assert!(p.prepare(err).contains("Task not found"));
    }

    #[test]
    fn withholds_unparseable_data_when_redacting() {
        let p = EvidencePolicy {
            max_bytes: 4096,
            redact_parts: true,
        };
        assert_eq!(
            p.prepare(b"{\"parts\":[{\"text\":\"se"),
            "[redacted: 21 bytes, not JSON]"
        );
    }
}

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

/// Redacts every part's contents. Data that is not JSON cannot be searched
/// for parts, so it is withheld whole.
fn redact(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(mut v) => {
            walk(&mut v);
            v.to_string()
        }
        Err(_) => format!("[redacted: {} bytes, not JSON]", text.len()),
    }
}

fn walk(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "parts" {
                    if let Value::Array(parts) = child {
                        parts.iter_mut().for_each(redact_part);
                    }
                } else {
                    walk(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// 1.0 parts hold `text`, `raw` or `data`; 0.3 parts `text`, `data` or
/// `file.bytes`. URLs and media types stay: they are references, not content.
fn redact_part(part: &mut Value) {
    let Value::Object(map) = part else { return };
    for key in ["text", "raw", "data"] {
        if let Some(field) = map.get_mut(key) {
            *field = Value::String(length_of(field));
        }
    }
    if let Some(Value::Object(file)) = map.get_mut("file") {
        if let Some(bytes) = file.get_mut("bytes") {
            *bytes = Value::String(length_of(bytes));
        }
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
        let raw = br#"{"result":{"artifactUpdate":{"artifact":{"artifactId":"a","parts":[{"text":"secret"},{"data":{"k":1}},{"raw":"AAAA"},{"url":"https://x/y"},{"kind":"file","file":{"bytes":"QUJD"}}]}}}}"#;
        let out = p.prepare(raw);
        assert!(!out.contains("secret"), "{out}");
        assert!(out.contains("[redacted: 6 bytes]"), "{out}");
        assert!(out.contains("[redacted: 7 bytes]"), "{out}");
        assert!(out.contains("https://x/y"), "{out}");
        assert!(!out.contains("QUJD"), "{out}");
        assert!(out.contains("artifactId"), "{out}");
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

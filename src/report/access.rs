//! The access log (`[log] access = true`): one JSON line per exchange,
//! written when it ends. The proxy knows the request and its answer; for
//! an exchange the validator judged, the analysis thread adds the task id
//! and the number of findings before writing it.

use http::HeaderMap;
use serde::Serialize;

use crate::report::audit::LineLog;

/// One exchange, as its access-log line says it.
#[derive(Debug, Clone, Serialize)]
pub struct AccessLine {
    /// Always `"access"`: tells these lines from audit records on a
    /// shared stdout.
    pub log: &'static str,
    /// RFC 3339 UTC time the exchange ended.
    pub ts: String,
    /// The proxy's id for the exchange (its logs and audit records say the same).
    pub request_id: u64,
    pub upstream: String,
    /// The trace id of the caller's `traceparent`, when it sent one
    /// (read, never added).
    pub trace_id: Option<String>,
    /// The caller's `X-Request-Id`, when it sent one.
    pub x_request_id: Option<String>,
    /// The HTTP method.
    pub http_method: String,
    /// The request path (without the query).
    pub path: String,
    /// The A2A binding and operation (`unknown` / `other` when the request
    /// is not A2A).
    pub binding: &'static str,
    pub method: &'static str,
    /// The status the caller got; `null` when it went away before one.
    pub status: Option<u16>,
    pub duration_ms: f64,
    /// Body bytes from the caller and to it.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The task the exchange was about, when the validator learned it.
    pub task_id: Option<String>,
    /// Findings on the exchange; `null` when it was not judged.
    pub findings: Option<u32>,
}

impl AccessLine {
    /// The line as JSON (one line: serde escapes every control character).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// What the access log reads of a request head, kept until the exchange
/// ends.
#[derive(Debug, Clone, Default)]
pub struct CallerIds {
    pub trace_id: Option<String>,
    pub x_request_id: Option<String>,
    pub http_method: String,
    pub path: String,
}

impl CallerIds {
    /// Reads `traceparent` (W3C Trace Context: `00-<trace id>-<span id>-<flags>`)
    /// and `X-Request-Id` (printable ASCII, at most 128 bytes) of a request.
    pub fn read(method: &http::Method, uri: &http::Uri, headers: &HeaderMap) -> CallerIds {
        CallerIds {
            trace_id: headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .and_then(trace_id),
            x_request_id: headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .filter(|v| {
                    !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic())
                })
                .map(str::to_owned),
            http_method: method.as_str().to_owned(),
            path: uri.path().chars().take(1024).collect(),
        }
    }
}

/// The trace id of a `traceparent` value: 32 lower-case hex digits, not
/// all zero (the W3C rule for a valid one).
fn trace_id(value: &str) -> Option<String> {
    let mut parts = value.trim().split('-');
    let version = parts.next()?;
    let id = parts.next()?;
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    (hex(version, 2) && version != "ff" && hex(id, 32) && id.bytes().any(|b| b != b'0'))
        .then(|| id.to_owned())
}

/// Where access lines go.
pub type AccessLog = LineLog;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_ids_are_read_only_from_valid_traceparents() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(
            trace_id(&format!("00-{id}-00f067aa0ba902b7-01")).as_deref(),
            Some(id)
        );
        for bad in [
            "",
            "00",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            assert_eq!(trace_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_request_id_is_kept_only_when_printable_and_short() {
        let read = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert("x-request-id", v.parse().expect("value"));
            CallerIds::read(&http::Method::GET, &"/a?b".parse().expect("uri"), &h)
        };
        let ids = read("abc-123");
        assert_eq!(ids.x_request_id.as_deref(), Some("abc-123"));
        assert_eq!(ids.path, "/a");
        assert_eq!(read("a b").x_request_id, None);
        assert_eq!(read(&"x".repeat(129)).x_request_id, None);
    }
}

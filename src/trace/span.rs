//! The span of one A2A exchange, built on the analysis thread as the
//! exchange is judged: opened with the request, given a `a2a.finding`
//! event per audit record, finished with what the response showed.
//! Attributes follow the draft A2A semantic conventions (`a2a.*`) and the
//! standard `http.*`, `url.*`, `server.*` and `rpc.*` ones.

use super::context::TraceParent;
use super::otlp::{self, KeyValue, Value};
use crate::a2a::model::{Binding, Exchange};

/// A span being built.
#[derive(Debug)]
pub struct OpenSpan {
    span: otlp::Span,
    error: Option<String>,
}

/// What the proxy knew of the request when the exchange began.
#[derive(Debug)]
pub struct Begun<'a> {
    pub exchange: &'a Exchange,
    pub parent: Option<TraceParent>,
    pub trace_state: Option<&'a str>,
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub start_unix_nanos: u64,
    pub http_method: &'a str,
    pub path: &'a str,
    pub server_address: &'a str,
    pub request_id: u64,
}

/// What the response showed, at the exchange's end.
#[derive(Debug, Default)]
pub struct Ended<'a> {
    pub end_unix_nanos: u64,
    pub http_status: Option<u16>,
    pub task_id: Option<&'a str>,
    pub context_id: Option<&'a str>,
    pub task_state: Option<&'static str>,
    /// Events decoded on a stream (`None`: not a stream).
    pub sse_events: Option<u64>,
    pub time_to_first_event_ms: Option<f64>,
}

fn string(key: &str, value: &str) -> KeyValue {
    KeyValue::new(key, Value::String(value.to_owned()))
}

impl OpenSpan {
    pub fn begin(b: Begun<'_>) -> OpenSpan {
        let ex = b.exchange;
        let mut attributes = vec![
            string("a2a.method.name", ex.operation.as_str()),
            string("a2a.protocol.version", ex.version.as_str()),
            string("a2a.binding", ex.binding.as_str()),
            string("http.request.method", b.http_method),
            string("url.path", b.path),
            string("server.address", b.server_address),
            KeyValue::new(
                "a2a_tap.request_id",
                Value::Int(i64::try_from(b.request_id).unwrap_or(i64::MAX)),
            ),
        ];
        if ex.binding == Binding::JsonRpc {
            attributes.push(string("rpc.system", "jsonrpc"));
            attributes.push(string("rpc.method", ex.operation.as_str()));
        }
        let flags = match &b.parent {
            Some(p) => u32::from(p.flags) | otlp::FLAGS_HAS_IS_REMOTE | otlp::FLAGS_IS_REMOTE,
            None => 1 | otlp::FLAGS_HAS_IS_REMOTE,
        };
        OpenSpan {
            span: otlp::Span {
                trace_id: b.trace_id.to_vec(),
                span_id: b.span_id.to_vec(),
                trace_state: b.trace_state.unwrap_or_default().to_owned(),
                parent_span_id: b.parent.map(|p| p.span_id.to_vec()).unwrap_or_default(),
                name: ex.operation.as_str().to_owned(),
                kind: otlp::SPAN_KIND_SERVER,
                start_time_unix_nano: b.start_unix_nanos,
                end_time_unix_nano: 0,
                attributes,
                events: Vec::new(),
                status: None,
                flags,
            },
            error: None,
        }
    }

    /// The span's trace id.
    pub fn trace_id(&self) -> [u8; 16] {
        self.span.trace_id.as_slice().try_into().unwrap_or([0; 16])
    }

    /// An `a2a.finding` event; an error finding sets the span's status to
    /// error (the first one's detail is its message).
    pub fn finding(&mut self, at_unix_nanos: u64, record: &crate::report::audit::Record) {
        let mut attributes = vec![
            string("a2a.finding.kind", record.kind),
            string("a2a.finding.severity", record.severity),
            string("a2a.finding.detail", &record.detail),
            KeyValue::new(
                "a2a.finding.occurrences",
                Value::Int(i64::try_from(record.occurrences).unwrap_or(i64::MAX)),
            ),
        ];
        if let Some(i) = record.event_index {
            attributes.push(KeyValue::new(
                "a2a.finding.event_index",
                Value::Int(i64::try_from(i).unwrap_or(i64::MAX)),
            ));
        }
        self.span.events.push(otlp::Event {
            time_unix_nano: at_unix_nanos,
            name: "a2a.finding".to_owned(),
            attributes,
        });
        if record.severity == "error" && self.error.is_none() {
            self.error = Some(format!("{}: {}", record.kind, record.detail));
        }
    }

    /// The finished span.
    pub fn end(mut self, e: Ended<'_>) -> otlp::Span {
        let span = &mut self.span;
        span.end_time_unix_nano = e.end_unix_nanos.max(span.start_time_unix_nano);
        let attrs = &mut span.attributes;
        if let Some(s) = e.http_status {
            attrs.push(KeyValue::new(
                "http.response.status_code",
                Value::Int(i64::from(s)),
            ));
        }
        for (key, value) in [
            ("a2a.task.id", e.task_id),
            ("a2a.context.id", e.context_id),
            ("a2a.task.state", e.task_state),
        ] {
            if let Some(v) = value {
                attrs.push(string(key, v));
            }
        }
        if let Some(n) = e.sse_events {
            attrs.push(KeyValue::new(
                "a2a.response.sse.event.count",
                Value::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            ));
        }
        if let Some(ms) = e.time_to_first_event_ms {
            attrs.push(KeyValue::new(
                "a2a.response.time_to_first_event_ms",
                Value::Double(ms),
            ));
        }
        if let Some(message) = self.error {
            span.status = Some(otlp::Status {
                message,
                code: otlp::STATUS_ERROR,
            });
        }
        self.span
    }
}

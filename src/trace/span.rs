//! The span of one A2A exchange, built on the analysis thread as the
//! exchange is judged: opened with the request, given an `a2a.finding`
//! event per audit record, and written as OTLP protobuf when it ends.
//! Attributes follow the draft A2A semantic conventions (`a2a.*`) and the
//! standard `http.*`, `url.*`, `server.*` and `rpc.*` ones.

use super::context::TraceParent;
use super::encode::{len_delimited, Out};
use super::otlp;
use crate::a2a::model::{Binding, Exchange};

/// A span being built: what it needs, kept as the exchange gave it.
#[derive(Debug)]
pub struct OpenSpan {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<TraceParent>,
    trace_state: Option<Box<str>>,
    operation: &'static str,
    version: &'static str,
    message_id: Option<Box<str>>,
    binding: Binding,
    http_method: Option<http::Method>,
    path: Option<Box<str>>,
    request_id: u64,
    start_unix_nanos: u64,
    events: Vec<Finding>,
    /// The first error finding's kind and detail: the span's status.
    error: Option<String>,
}

/// One `a2a.finding` event.
#[derive(Debug)]
struct Finding {
    at_unix_nanos: u64,
    kind: &'static str,
    severity: &'static str,
    detail: String,
    occurrences: u64,
    event_index: Option<u64>,
}

/// What the proxy knew of the request when the exchange began.
#[derive(Debug)]
pub struct Begun<'a> {
    pub exchange: &'a Exchange,
    pub parent: Option<TraceParent>,
    pub trace_state: Option<Box<str>>,
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub start_unix_nanos: u64,
    pub http_method: Option<http::Method>,
    pub path: Option<Box<str>>,
    pub request_id: u64,
    /// Ids longer than this are cut (`analysis.max_id_bytes`); a path to
    /// four times it.
    pub max_id: usize,
}

/// What the response showed, at the exchange's end.
#[derive(Debug, Default)]
pub struct Ended<'a> {
    pub end_unix_nanos: u64,
    pub server_address: &'a str,
    pub http_status: Option<u16>,
    pub task_id: Option<&'a str>,
    pub context_id: Option<&'a str>,
    pub task_state: Option<&'static str>,
    /// Events decoded on a stream (`None`: not a stream).
    pub sse_events: Option<u64>,
    pub time_to_first_event_ms: Option<f64>,
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl OpenSpan {
    pub fn begin(b: Begun<'_>) -> OpenSpan {
        OpenSpan {
            trace_id: b.trace_id,
            span_id: b.span_id,
            parent: b.parent,
            trace_state: b.trace_state,
            operation: b.exchange.operation.as_str(),
            version: b.exchange.version.as_str(),
            message_id: b
                .exchange
                .message_id
                .as_deref()
                .map(|m| crate::lifecycle::cut(m, b.max_id).into()),
            binding: b.exchange.binding,
            http_method: b.http_method,
            path: b.path.map(|p| {
                let max = b.max_id.saturating_mul(4);
                match crate::lifecycle::cut(&p, max) {
                    std::borrow::Cow::Borrowed(_) => p,
                    std::borrow::Cow::Owned(c) => c.into(),
                }
            }),
            request_id: b.request_id,
            start_unix_nanos: b.start_unix_nanos,
            events: Vec::new(),
            error: None,
        }
    }

    /// The span's trace id.
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The span's own id.
    pub fn span_id(&self) -> [u8; 8] {
        self.span_id
    }

    /// An `a2a.finding` event; an error finding sets the span's status to
    /// error (the first one's kind and detail are its message).
    pub fn finding(&mut self, at_unix_nanos: u64, record: &crate::report::audit::Record) {
        if record.severity == "error" && self.error.is_none() {
            self.error = Some(format!("{}: {}", record.kind, record.detail));
        }
        self.events.push(Finding {
            at_unix_nanos,
            kind: record.kind,
            severity: record.severity,
            detail: record.detail.clone(),
            occurrences: record.occurrences,
            event_index: record.event_index,
        });
    }

    /// Writes the finished span (a `Span` message's fields) to `out`.
    pub fn encode(&self, e: &Ended<'_>, out: &mut Vec<u8>) {
        let mut o = Out(out);
        o.bytes(1, &self.trace_id);
        o.bytes(2, &self.span_id);
        o.string(3, self.trace_state.as_deref().unwrap_or(""));
        if let Some(p) = &self.parent {
            o.bytes(4, &p.span_id);
        }
        o.string(5, self.operation);
        o.varint(6, otlp::SPAN_KIND_SERVER as u64);
        o.fixed64(7, self.start_unix_nanos);
        o.fixed64(8, e.end_unix_nanos.max(self.start_unix_nanos));
        o.attr_str(9, "a2a.method.name", self.operation);
        o.attr_str(9, "a2a.protocol.version", self.version);
        o.attr_str(9, "a2a.binding", self.binding.as_str());
        if let Some(m) = &self.http_method {
            o.attr_str(9, "http.request.method", m.as_str());
        }
        if let Some(p) = &self.path {
            o.attr_str(9, "url.path", p);
        }
        o.attr_str(9, "server.address", e.server_address);
        o.attr_int(9, "a2a_tap.request_id", int(self.request_id));
        match self.binding {
            Binding::JsonRpc => {
                o.attr_str(9, "rpc.system", "jsonrpc");
                o.attr_str(9, "rpc.method", self.operation);
            }
            Binding::Grpc => {
                let service = if self.version == "0.3" {
                    "a2a.v1.A2AService"
                } else {
                    "lf.a2a.v1.A2AService"
                };
                o.attr_str(9, "rpc.system", "grpc");
                o.attr_str(9, "rpc.service", service);
                o.attr_str(9, "rpc.method", self.operation);
            }
            Binding::Rest | Binding::Webhook => {}
        }
        if let Some(s) = e.http_status {
            o.attr_int(9, "http.response.status_code", i64::from(s));
        }
        if let Some(m) = &self.message_id {
            o.attr_str(9, "a2a.message.id", m);
        }
        for (key, value) in [
            ("a2a.task.id", e.task_id),
            ("a2a.context.id", e.context_id),
            ("a2a.task.state", e.task_state),
        ] {
            if let Some(v) = value {
                o.attr_str(9, key, v);
            }
        }
        if let Some(n) = e.sse_events {
            o.attr_int(9, "a2a.response.sse.event.count", int(n));
        }
        if let Some(ms) = e.time_to_first_event_ms {
            o.attr_double(9, "a2a.response.time_to_first_event_ms", ms);
        }
        for f in &self.events {
            f.encode(&mut o);
        }
        if let Some(message) = &self.error {
            let code = otlp::STATUS_ERROR as u64;
            let len = len_delimited(message.len()) + 1 + prost::encoding::encoded_len_varint(code);
            o.nested(15, len, |o| {
                o.string(2, message);
                o.varint(3, code);
            });
        }
        let flags = match &self.parent {
            Some(p) => u32::from(p.flags) | otlp::FLAGS_HAS_IS_REMOTE | otlp::FLAGS_IS_REMOTE,
            None => 1 | otlp::FLAGS_HAS_IS_REMOTE,
        };
        o.fixed32(16, flags);
    }
}

impl Finding {
    /// `events = 11`: `Event { time_unix_nano = 1; name = 2; attributes = 3 }`,
    /// written into a scratch buffer for its length.
    fn encode(&self, o: &mut Out<'_>) {
        let mut body = Vec::with_capacity(128 + self.detail.len());
        let mut e = Out(&mut body);
        e.fixed64(1, self.at_unix_nanos);
        e.string(2, "a2a.finding");
        e.attr_str(3, "a2a.finding.kind", self.kind);
        e.attr_str(3, "a2a.finding.severity", self.severity);
        e.attr_str(3, "a2a.finding.detail", &self.detail);
        e.attr_int(3, "a2a.finding.occurrences", int(self.occurrences));
        if let Some(i) = self.event_index {
            e.attr_int(3, "a2a.finding.event_index", int(i));
        }
        o.bytes(11, &body);
    }
}

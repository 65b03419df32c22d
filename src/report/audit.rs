//! The JSON Lines audit log: one record per finding, written off the hot
//! path by one thread through a bounded queue, flushed within a second,
//! reopened on request (SIGHUP) so logrotate's rename-then-signal loses
//! nothing.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

use prometheus::IntCounter;
use serde::Serialize;

mod line;
mod writer;
use writer::Sink;

/// The contract's audit record fields, in order: what `Record` writes and
/// what consumers may rely on.
pub const FIELDS: [&str; 16] = [
    "ts",
    "kind",
    "severity",
    "upstream",
    "binding",
    "version",
    "method",
    "task_id",
    "context_id",
    "request_id",
    "trace_id",
    "event_index",
    "occurrences",
    "detail",
    "evidence",
    "rule",
];

/// One audit record, field for field as the contract names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    pub ts: String,
    pub kind: &'static str,
    pub severity: &'static str,
    pub upstream: String,
    pub binding: Option<&'static str>,
    pub version: Option<&'static str>,
    pub method: Option<&'static str>,
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    pub request_id: Option<String>,
    /// The exchange's W3C trace id (the caller's `traceparent`, or the
    /// proxy's own span's when tracing made one).
    pub trace_id: Option<String>,
    pub event_index: Option<u64>,
    /// How many times this kind (and artifact) occurred on the exchange
    /// while this record was held (repeats fold into it).
    pub occurrences: u64,
    pub detail: String,
    pub evidence: Option<String>,
    /// What the finding rests on; parts unknown are omitted.
    pub rule: Rule,
    /// The replica whose fact the finding rests on (shared registry); the
    /// field is absent otherwise, so it is not among `FIELDS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heard_from: Option<String>,
}

/// A record's `rule`: the spec sections (and conformance-kit requirement
/// ids) a finding rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Rule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<&'static str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub tck: &'static [&'static str],
}

impl Rule {
    /// The rule of `kind`.
    pub fn of(kind: crate::findings::Kind) -> Rule {
        Rule {
            spec: kind.spec(),
            tck: kind.tck(),
        }
    }

    /// The rule of a catalogue kind named `name`; empty for other names.
    pub fn of_name(name: &str) -> Rule {
        crate::findings::Kind::from_name(name).map_or_else(Rule::default, Rule::of)
    }

    /// One line for people: `1.0.1 §3.1.2; TCK CORE-STREAM-002`, the parts
    /// unknown left out (`None` when both are).
    pub fn label(&self) -> Option<String> {
        let tck = (!self.tck.is_empty()).then(|| format!("TCK {}", self.tck.join(", ")));
        match (self.spec, tck) {
            (None, None) => None,
            (Some(s), None) => Some(s.to_owned()),
            (None, Some(t)) => Some(t),
            (Some(s), Some(t)) => Some(format!("{s}; {t}")),
        }
    }
}

/// Where records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdout,
    File(PathBuf),
    /// Lines kept in memory (tests of a running app read them there).
    Memory(MemoryAudit),
}

/// An audit log kept in memory: what the writer wrote, whole lines.
#[derive(Debug, Clone, Default)]
pub struct MemoryAudit(Arc<std::sync::Mutex<Vec<u8>>>);

impl PartialEq for MemoryAudit {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for MemoryAudit {}

impl MemoryAudit {
    /// The lines written so far.
    pub fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn append(&self, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
    }
}

impl Target {
    /// `-` is stdout, anything else a file path.
    pub fn parse(s: &str) -> Target {
        if s == "-" {
            Target::Stdout
        } else {
            Target::File(PathBuf::from(s))
        }
    }

    /// How the startup line names it.
    pub fn describe(&self) -> String {
        match self {
            Target::Stdout => "stdout".to_string(),
            Target::File(path) => path.display().to_string(),
            Target::Memory(_) => "memory".to_string(),
        }
    }
}

pub(super) enum Msg {
    Record(Box<Record>),
    /// A line already serialized (the access log's), with the counter of
    /// its kind's drops.
    Line(Box<str>, IntCounter),
    /// Wakes the writer so it notices a reopen request promptly.
    Wake,
}

/// The sending side: cheap to clone, never blocks.
#[derive(Clone)]
pub struct AuditLog {
    tx: SyncSender<Msg>,
    reopen: Arc<AtomicBool>,
    dropped: IntCounter,
}

/// A writer of other JSON lines (the access log) through an audit writer's
/// thread: one writer per target, so that lines to one stdout or file are
/// never interleaved. Its drops are counted apart.
#[derive(Clone)]
pub struct LineLog {
    tx: SyncSender<Msg>,
    dropped: IntCounter,
}

impl std::fmt::Debug for LineLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineLog")
    }
}

impl LineLog {
    /// Queues one line (without its newline); when the queue is full it is
    /// dropped and counted, never waited for.
    pub fn write(&self, line: String) {
        let msg = Msg::Line(line.into_boxed_str(), self.dropped.clone());
        if self.tx.try_send(msg).is_err() {
            self.dropped.inc();
        }
    }
}

/// Owns the writer thread; `close` drains, flushes and joins it.
pub struct AuditWriter {
    handle: Option<JoinHandle<()>>,
}

impl AuditLog {
    /// Starts the writer thread. An unopenable target is not fatal: it is
    /// logged, records are counted as dropped, and opening is retried.
    pub fn start(
        target: Target,
        capacity: usize,
        dropped: IntCounter,
    ) -> io::Result<(AuditLog, AuditWriter)> {
        let (tx, rx) = mpsc::sync_channel(capacity.max(1));
        let reopen = Arc::new(AtomicBool::new(false));
        let mut sink = Sink::new(target, dropped.clone());
        let flag = reopen.clone();
        let handle = std::thread::Builder::new()
            .name("a2a-tap-audit".into())
            .spawn(move || sink.run(rx, &flag))?;
        Ok((
            AuditLog {
                tx,
                reopen,
                dropped,
            },
            AuditWriter {
                handle: Some(handle),
            },
        ))
    }

    /// Queues a record; when the queue is full the record is dropped and
    /// counted, never waited for.
    pub fn write(&self, record: Record) {
        match self.tx.try_send(Msg::Record(Box::new(record))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.inc();
            }
        }
    }

    /// A writer of other lines through this log's thread, their drops
    /// counted in `dropped`.
    pub fn lines(&self, dropped: IntCounter) -> LineLog {
        LineLog {
            tx: self.tx.clone(),
            dropped,
        }
    }

    /// Asks the writer to reopen its file (after logrotate renamed it).
    pub fn reopen(&self) {
        self.reopen.store(true, Ordering::Release);
        let _ = self.tx.try_send(Msg::Wake);
    }
}

impl AuditWriter {
    /// Waits for the writer to drain every queued record and flush. All
    /// `AuditLog` clones must be dropped first, or this waits for them.
    pub fn close(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// What a record says about the exchange a finding came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub upstream: String,
    pub binding: Option<&'static str>,
    pub version: Option<&'static str>,
    pub method: Option<&'static str>,
    pub request_id: Option<String>,
    pub trace_id: Option<String>,
}

impl Origin {
    /// The origin of a finding about `exchange`.
    pub fn of(
        upstream: &str,
        exchange: &crate::a2a::model::Exchange,
        request_id: String,
    ) -> Origin {
        Origin {
            upstream: upstream.to_owned(),
            binding: Some(exchange.binding.as_str()),
            version: Some(exchange.version.as_str()),
            method: Some(exchange.operation.as_str()),
            request_id: Some(request_id),
            trace_id: None,
        }
    }
}

impl Record {
    /// The record of `finding`, stamped now.
    pub fn new(finding: crate::findings::Finding, origin: &Origin) -> Record {
        Record {
            ts: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            kind: finding.kind.as_str(),
            severity: finding.severity.as_str(),
            upstream: origin.upstream.clone(),
            binding: origin.binding,
            version: origin.version,
            method: origin.method,
            task_id: finding.task_id,
            context_id: finding.context_id,
            request_id: origin.request_id.clone(),
            trace_id: origin.trace_id.clone(),
            event_index: finding.event_index,
            occurrences: 1,
            rule: Rule::of(finding.kind),
            detail: finding.detail,
            evidence: finding.evidence,
            heard_from: finding.heard_from,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Finding, Kind};

    #[test]
    fn a_record_has_exactly_the_contract_fields_in_order() {
        let r = Record::new(Finding::new(Kind::StreamStart, "d"), &Origin::default());
        let line = serde_json::to_string(&r).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want = FIELDS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want, "serde_json::Map sorts keys");
        let positions: Vec<usize> = FIELDS
            .iter()
            .map(|f| line.find(&format!("\"{f}\":")).unwrap())
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "written in contract order: {line}"
        );
    }
}

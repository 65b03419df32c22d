//! The JSON Lines audit log: one record per finding, written off the hot
//! path by one thread through a bounded queue, flushed within a second,
//! reopened on request (SIGHUP) so logrotate's rename-then-signal loses
//! nothing.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::IntCounter;
use serde::Serialize;

/// The contract's audit record fields, in order: what `Record` writes and
/// what consumers may rely on.
pub const FIELDS: [&str; 13] = [
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
    "event_index",
    "detail",
    "evidence",
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
    pub event_index: Option<u64>,
    pub detail: String,
    pub evidence: Option<String>,
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
}

enum Msg {
    Record(Box<Record>),
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

// === impl Sink ===

/// Where the writer thread writes: a file it can cut back to a line's end
/// after a short write, or stdout, where it can only start afresh.
enum Out {
    Stdout(io::Stdout),
    File(File),
    Memory(MemoryAudit),
}

impl Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Out::Stdout(o) => o.write(buf),
            Out::File(f) => f.write(buf),
            Out::Memory(m) => {
                m.append(buf);
                Ok(buf.len())
            }
        }
    }
}

/// The writer thread's state.
struct Sink {
    target: Target,
    out: Option<Out>,
    dropped: IntCounter,
    /// The lines of the records taken since the last write, each ending in
    /// a newline...
    batch: Vec<u8>,
    /// ...and where each line ends in `batch`.
    ends: Vec<usize>,
    /// Part of a line reached stdout before a write failed: the next write
    /// starts a new line first.
    torn: bool,
    last_error: Option<Instant>,
}

impl Sink {
    fn new(target: Target, dropped: IntCounter) -> Sink {
        Sink {
            target,
            out: None,
            dropped,
            batch: Vec::new(),
            ends: Vec::new(),
            torn: false,
            last_error: None,
        }
    }

    /// Writes records as they come; after each batch (whatever was queued)
    /// it writes them out, so a record reaches the file within a batch's
    /// time. The reopen flag is read at every message: the wake-up that
    /// follows a SIGHUP may arrive in the middle of a batch, and must not
    /// be taken without the reopen it announces.
    fn run(&mut self, rx: mpsc::Receiver<Msg>, reopen: &AtomicBool) {
        self.open();
        while let Ok(first) = rx.recv() {
            let mut next = Some(first);
            while let Some(msg) = next {
                if reopen.swap(false, Ordering::AcqRel) {
                    self.flush();
                    self.out = None;
                    self.open();
                }
                if let Msg::Record(r) = msg {
                    self.take(&r);
                }
                next = rx.try_recv().ok();
            }
            self.flush();
        }
        self.flush();
    }

    fn open(&mut self) {
        let opened = match &self.target {
            Target::Stdout => Ok(Out::Stdout(io::stdout())),
            Target::Memory(m) => Ok(Out::Memory(m.clone())),
            Target::File(path) => OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map(Out::File),
        };
        match opened {
            Ok(out) => self.out = Some(out),
            Err(e) => self.report(&e, "cannot open audit log"),
        }
    }

    /// Adds a record's line to the batch.
    fn take(&mut self, record: &Record) {
        match serde_json::to_writer(&mut self.batch, record) {
            Ok(()) => {
                self.batch.push(b'\n');
                self.ends.push(self.batch.len());
            }
            Err(_) => {
                self.batch.truncate(self.ends.last().copied().unwrap_or(0));
                self.dropped.inc();
            }
        }
    }

    /// Writes the batch: whole lines or nothing. A write that fails part
    /// way (a full disk, a file size limit) keeps the lines it completed;
    /// a line it cut is taken back off a file (cut at the last line's end)
    /// or, on stdout, ended by a newline before the next write. Every
    /// record not written whole is counted as dropped, and no other.
    fn flush(&mut self) {
        if self.ends.is_empty() {
            return;
        }
        if self.out.is_none() {
            self.open();
        }
        let lines = self.ends.len() as u64;
        let Some(out) = self.out.as_mut() else {
            self.dropped.inc_by(lines);
            self.clear();
            return;
        };
        let start = match out {
            Out::File(f) => f.metadata().map(|m| m.len()).ok(),
            Out::Stdout(_) | Out::Memory(_) => None,
        };
        if std::mem::take(&mut self.torn) && out.write(b"\n").map_or(true, |n| n == 0) {
            self.torn = true;
            self.dropped.inc_by(lines);
            self.clear();
            return;
        }
        let mut written = 0;
        let mut failed = None;
        while written < self.batch.len() {
            match out.write(&self.batch[written..]) {
                Ok(0) => {
                    failed = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            let whole = self.ends.iter().take_while(|end| **end <= written).count();
            let kept = whole.checked_sub(1).map_or(0, |i| self.ends[i]);
            if written > kept {
                // A cut line: off the file, or (stdout) ended next time.
                let cut_back = match (out, start) {
                    (Out::File(f), Some(start)) => f.set_len(start + kept as u64).is_ok(),
                    _ => false,
                };
                self.torn = !cut_back;
            }
            self.dropped.inc_by(lines - whole as u64);
            self.report(&e, "cannot write audit records");
        } else if let Some(Out::Stdout(o)) = self.out.as_mut() {
            if let Err(e) = o.flush() {
                self.report(&e, "cannot flush audit log");
            }
        }
        self.clear();
    }

    /// Empties the batch, keeping a buffer of a usual size.
    fn clear(&mut self) {
        self.batch.clear();
        self.ends.clear();
        if self.batch.capacity() > 1 << 20 {
            self.batch.shrink_to(64 * 1024);
        }
    }

    /// Logs an I/O problem, at most once every ten seconds.
    fn report(&mut self, e: &io::Error, what: &str) {
        let now = Instant::now();
        if self
            .last_error
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(10))
        {
            self.last_error = Some(now);
            tracing::error!(target = ?self.target, error = %e, "{what}");
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
            event_index: finding.event_index,
            detail: finding.detail,
            evidence: finding.evidence,
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

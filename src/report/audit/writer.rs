//! The writer thread: whole lines only, whatever the target does (a short
//! write cut back on files, a torn line ended on stdout), reopening after
//! logrotate, drops counted exactly.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The writer's nap after each batch it wrote: a record reaches the file at
/// most this much later, and the queue (`audit.queue_capacity`, 10,000 by
/// default) would fill in one nap only at ten million records a second.
const NAP: Duration = Duration::from_millis(1);

use prometheus::IntCounter;

use crate::pace::Every;

use super::{MemoryAudit, Msg, Record, Target};

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
pub(super) struct Sink {
    target: Target,
    out: Option<Out>,
    dropped: IntCounter,
    /// The lines of the records taken since the last write, each ending in
    /// a newline...
    batch: Vec<u8>,
    /// ...and where each line ends in `batch`...
    ends: Vec<usize>,
    /// ...and, for a line of another kind than an audit record, the
    /// counter of its drops.
    others: Vec<Option<IntCounter>>,
    /// Part of a line reached stdout before a write failed: the next write
    /// starts a new line first.
    torn: bool,
    /// The pace of I/O error lines: at most one every ten seconds.
    errors: Every,
}

impl Sink {
    pub(super) fn new(target: Target, dropped: IntCounter) -> Sink {
        Sink {
            target,
            out: None,
            dropped,
            batch: Vec::new(),
            ends: Vec::new(),
            others: Vec::new(),
            torn: false,
            errors: Every::new(Duration::from_secs(10)),
        }
    }

    /// Writes records as they come; after each batch (whatever was queued)
    /// it writes them out, so a record reaches the file within a batch's
    /// time, then naps `NAP` before it takes the next: records that come
    /// meanwhile are queued to a thread that is not waiting, so sending
    /// them wakes nothing (a parked receiver makes every record a futex
    /// wake-up on the analysis thread, 16 % of its time in a storm of
    /// findings). The reopen flag is read at every message: the wake-up
    /// that follows a SIGHUP may arrive in the middle of a batch, and must
    /// not be taken without the reopen it announces.
    pub(super) fn run(&mut self, rx: mpsc::Receiver<Msg>, reopen: &AtomicBool) {
        self.open();
        while let Ok(first) = rx.recv() {
            let mut next = Some(first);
            while let Some(msg) = next {
                if reopen.swap(false, Ordering::AcqRel) {
                    self.flush();
                    self.out = None;
                    self.open();
                }
                match msg {
                    Msg::Record(r) => self.take(&r),
                    Msg::Line(line, dropped) => self.take_line(&line, dropped),
                    Msg::Wake => {}
                }
                next = rx.try_recv().ok();
            }
            self.flush();
            std::thread::sleep(NAP);
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
        super::line::write(&mut self.batch, record);
        self.batch.push(b'\n');
        self.ends.push(self.batch.len());
        self.others.push(None);
    }

    /// Adds a line of another kind to the batch.
    fn take_line(&mut self, line: &str, dropped: IntCounter) {
        self.batch.extend_from_slice(line.as_bytes());
        self.batch.push(b'\n');
        self.ends.push(self.batch.len());
        self.others.push(Some(dropped));
    }

    /// Counts the lines of the batch from the `from`th on as dropped, each
    /// under its kind.
    fn count_dropped(&self, from: usize) {
        for other in self.others.iter().skip(from) {
            match other {
                Some(counter) => counter.inc(),
                None => self.dropped.inc(),
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
        let Some(out) = self.out.as_mut() else {
            self.count_dropped(0);
            self.clear();
            return;
        };
        let start = match out {
            Out::File(f) => f.metadata().map(|m| m.len()).ok(),
            Out::Stdout(_) | Out::Memory(_) => None,
        };
        if std::mem::take(&mut self.torn) && out.write(b"\n").map_or(true, |n| n == 0) {
            self.torn = true;
            self.count_dropped(0);
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
            self.count_dropped(whole);
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
        self.others.clear();
        if self.batch.capacity() > 1 << 20 {
            self.batch.shrink_to(64 * 1024);
        }
    }

    /// Logs an I/O problem, at most once every ten seconds.
    fn report(&mut self, e: &io::Error, what: &str) {
        if self.errors.due().is_some() {
            tracing::error!(target = ?self.target, error = %e, "{what}");
        }
    }
}

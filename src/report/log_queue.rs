//! The proxy's own log lines on their way to stderr: a bounded, lossy
//! queue to one writer thread (tracing-appender), bounded here by lines
//! and by bytes, so a stderr nobody reads costs at most `max_bytes` however
//! long the lines are. A line that does not fit is dropped and counted,
//! never waited for.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// What is queued, shared by the writers and the thread that drains them.
#[derive(Debug, Default)]
pub struct LogQueue {
    lines: AtomicUsize,
    bytes: AtomicUsize,
    dropped: AtomicU64,
    max_lines: usize,
    max_bytes: usize,
}

impl LogQueue {
    /// A queue of at most `max_lines` lines and `max_bytes` bytes.
    pub fn new(max_lines: usize, max_bytes: usize) -> Arc<LogQueue> {
        Arc::new(LogQueue {
            max_lines,
            max_bytes,
            ..LogQueue::default()
        })
    }

    /// Lines dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Takes room for `line`; false (counted as a drop) when it does not fit.
    fn admit(&self, line: &[u8]) -> bool {
        // Every line the formatter writes ends with its newline.
        let lines = newlines(line);
        let bytes = self.bytes.fetch_add(line.len(), Ordering::AcqRel);
        let queued = self.lines.fetch_add(lines, Ordering::AcqRel);
        if bytes.saturating_add(line.len()) > self.max_bytes
            || queued.saturating_add(lines) > self.max_lines
        {
            self.release(line.len(), lines);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    fn release(&self, bytes: usize, lines: usize) {
        self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.lines.fetch_sub(lines, Ordering::AcqRel);
    }
}

fn newlines(b: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', b).count()
}

/// The writers' side: admits a line before it is queued to `inner`.
#[derive(Clone)]
pub struct Admit<W> {
    pub inner: W,
    pub queue: Arc<LogQueue>,
}

impl<W: Write> Write for Admit<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.queue.admit(buf) {
            self.inner.write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<'a, W: Clone + Write + 'a> tracing_subscriber::fmt::MakeWriter<'a> for Admit<W> {
    type Writer = Admit<W>;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The draining thread's side: frees what it wrote.
pub struct Drain<W> {
    pub inner: W,
    pub queue: Arc<LogQueue>,
}

impl<W: Write> Write for Drain<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Freed whether or not stderr took it: the line has left the queue.
        let r = self.inner.write(buf);
        let n = match &r {
            Ok(n) => *n,
            Err(_) => buf.len(),
        };
        self.queue.release(n, newlines(&buf[..n.min(buf.len())]));
        // Never an error: a line stderr refused is dropped, not retried.
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_bytes_and_by_lines_and_freed_as_drained() {
        let q = LogQueue::new(3, 100);
        let mut w = Admit {
            inner: Vec::new(),
            queue: q.clone(),
        };
        w.write_all(&[b'x'; 60]).unwrap();
        w.write_all(b"\n").unwrap();
        // 61 + 60 > 100: dropped.
        w.write_all(&[b'y'; 60]).unwrap();
        assert_eq!(q.dropped(), 1);
        assert_eq!(w.inner.len(), 61);
        let mut d = Drain {
            inner: Vec::new(),
            queue: q.clone(),
        };
        d.write_all(&w.inner).unwrap();
        w.write_all(&[b'y'; 60]).unwrap();
        assert_eq!(q.dropped(), 1, "room again once drained");
        for _ in 0..4 {
            w.write_all(b"a\n").unwrap();
        }
        assert_eq!(q.dropped(), 2, "the fourth line is past 3 lines");
    }
}

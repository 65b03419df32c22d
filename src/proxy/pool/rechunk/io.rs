//! The rewriter as an I/O object under hyper's client connection, above
//! TLS: what the upstream sent is read into a scratch buffer and put into
//! hyper's read buffer rewritten (never longer); writes pass untouched.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use hyper::rt::{Read, ReadBuf, ReadBufCursor, Write};

use super::{NextRequest, Rechunk};

/// Most bytes read at once through the scratch buffer.
const MAX_READ: usize = 64 * 1024;

thread_local! {
    /// One scratch buffer per thread, not per connection: a read is
    /// rewritten within one `poll_read` (no `await` holds it), and the
    /// pools' idle connections then cost no memory of their own here.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A connection's I/O whose reads pass through [`Rechunk`].
pub struct RechunkIo<T> {
    inner: T,
    rechunk: Rechunk,
}

impl<T> RechunkIo<T> {
    /// `inner`, its reads rewritten; `next` tells the requests sent on it.
    pub fn new(inner: T, next: Arc<NextRequest>) -> Self {
        RechunkIo {
            inner,
            rechunk: Rechunk::new(next),
        }
    }
}

impl<T: Read + Unpin> Read for RechunkIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.rechunk.is_through() {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let room = buf.remaining().min(MAX_READ);
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => this.read_through(cx, &mut scratch, room, buf),
            // Not nested in practice (the inner stream calls nothing of
            // ours); if it ever were, a buffer of its own, not a panic.
            Err(_) => this.read_through(cx, &mut Vec::new(), room, buf),
        })
    }
}

impl<T: Read + Unpin> RechunkIo<T> {
    /// Reads up to `room` bytes into `scratch`, then puts them rewritten
    /// into `buf`.
    fn read_through(
        &mut self,
        cx: &mut Context<'_>,
        scratch: &mut Vec<u8>,
        room: usize,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        if scratch.len() < room {
            scratch.resize(room, 0);
        }
        let mut read = ReadBuf::new(&mut scratch[..room]);
        ready!(Pin::new(&mut self.inner).poll_read(cx, read.unfilled()))?;
        // Never longer than what was read, which fits `buf`.
        self.rechunk
            .rewrite(read.filled(), &mut |piece| buf.put_slice(piece));
        Poll::Ready(Ok(()))
    }
}

impl<T: Write + Unpin> Write for RechunkIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }
}

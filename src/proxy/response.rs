//! The upstream's response body, whichever way the upstream was reached,
//! with the data already read passed on together.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use super::pool::LeasedBody;
use super::BoxError;

/// Most bytes of data already read that are passed on as one frame.
const MAX_RUN: usize = 32 * 1024;

type Polled = Option<Result<Frame<Bytes>, BoxError>>;

/// A response body from an HTTP/1.1 lease or the HTTP/2 client.
///
/// An upstream writes an SSE stream as one HTTP/1.1 chunk (or HTTP/2 DATA
/// frame) per event, and one socket read often brings many of them. A
/// lease already gives all a read brought as one piece; hyper's HTTP/2
/// client yields them one by one; passed on as they are, each would cost the
/// caller's connection a chunk of its own (a header and a CRLF, three
/// buffers in the write) and the tee a call. Here the data frames hyper has
/// already read are gathered into one, never waiting for another: the
/// body's bytes and their timing are the same, only the chunk boundaries
/// toward the caller differ, as they may on any hop (RFC 9112 §6.1: a
/// transfer coding is a property of the message, not of its content).
pub struct UpstreamResponseBody {
    source: Source,
    /// What hyper gave after a gathered run (trailers, the end or an
    /// error), handed on at the next poll.
    held: Option<Polled>,
}

enum Source {
    /// Read from (and driving) a leased HTTP/1.1 connection.
    Leased(LeasedBody),
    /// From the HTTP/2 client, whose connections run in their own tasks.
    Plain(Incoming),
}

// === impl UpstreamResponseBody ===

impl UpstreamResponseBody {
    /// A body read from a leased HTTP/1.1 connection.
    pub fn leased(body: LeasedBody) -> Self {
        Self::new(Source::Leased(body))
    }

    /// A body from the HTTP/2 client.
    pub fn plain(body: Incoming) -> Self {
        Self::new(Source::Plain(body))
    }

    fn new(source: Source) -> Self {
        UpstreamResponseBody { source, held: None }
    }

    /// `first` and the data frames already read after it, as one; what
    /// came after them (not data) is held for the next poll.
    fn gather(&mut self, first: Bytes, cx: &mut Context<'_>) -> Bytes {
        let mut run: Option<BytesMut> = None;
        while !self.source.is_end_stream()
            && run.as_ref().map_or(first.len(), BytesMut::len) < MAX_RUN
        {
            match self.source.poll_frame(cx) {
                Poll::Pending => break,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => {
                        let run = run.get_or_insert_with(|| {
                            let mut run =
                                BytesMut::with_capacity((first.len() + data.len()).max(4096));
                            run.extend_from_slice(&first);
                            run
                        });
                        run.extend_from_slice(&data);
                    }
                    Err(frame) => {
                        self.held = Some(Some(Ok(frame)));
                        break;
                    }
                },
                Poll::Ready(other) => {
                    self.held = Some(other);
                    break;
                }
            }
        }
        run.map_or(first, BytesMut::freeze)
    }
}

impl Body for UpstreamResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Some(held) = this.held.take() {
            return Poll::Ready(held);
        }
        match this.source.poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                // A lease's data is already all its read brought.
                Ok(data) if matches!(this.source, Source::Leased(_)) => {
                    Poll::Ready(Some(Ok(Frame::data(data))))
                }
                Ok(data) => Poll::Ready(Some(Ok(Frame::data(this.gather(data, cx))))),
                Err(frame) => Poll::Ready(Some(Ok(frame))),
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.held {
            Some(held) => held.is_none(),
            None => self.source.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.held {
            Some(_) => SizeHint::default(),
            None => self.source.size_hint(),
        }
    }
}

// === impl Source ===

impl Source {
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Polled> {
        match self {
            Source::Leased(b) => Pin::new(b).poll_frame(cx).map_err(BoxError::from),
            Source::Plain(b) => Pin::new(b).poll_frame(cx).map_err(BoxError::from),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Source::Leased(b) => b.is_end_stream(),
            Source::Plain(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Source::Leased(b) => b.size_hint(),
            Source::Plain(b) => b.size_hint(),
        }
    }
}

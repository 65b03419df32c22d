//! One upstream connection, polled by the exchange that holds it: the
//! request written (its body streamed as the caller sends it, while the
//! answer is already being read), then the answer's head and body read.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::chunked::Chunked;
use super::head::{self, Framing};
use super::request::{self, Encoding};
use super::Error;
use crate::proxy::gather::Held;
use crate::proxy::{ProxyBody, UpstreamBody};
use http_body_util::BodyExt;

/// Room made for a read, at least (hyper's first read buffer).
const MIN_READ: usize = 8 * 1024;
/// Room made for a read, at most, once reads keep filling it.
const MAX_READ: usize = 64 * 1024;
/// A read buffer larger than this is let go when the connection idles.
const MAX_IDLE_BUFFER: usize = 64 * 1024;

/// One HTTP/1.1 connection to an upstream.
pub struct Conn<T> {
    io: T,
    /// Bytes read and not used yet.
    buf: BytesMut,
    /// The room made for the next read.
    next_read: usize,
    /// A response head longer than this fails.
    max_head: usize,
    /// The request, while it is not written whole.
    writing: Option<Writing>,
    /// The buffer request heads are written in, kept between requests.
    spare: Vec<u8>,
    reading: Reading,
    /// The request was a `HEAD` (its answer has no body).
    head_request: bool,
    /// The bytes of `buf` already parsed as a partial head.
    parsed: usize,
    /// Heads parsed, for the tests of the partial-head check.
    #[cfg(test)]
    pub(super) head_parses: usize,
    /// A failure found after data that was handed on first.
    failed: Option<Error>,
    /// The connection can carry no other request.
    spent: bool,
}

enum Reading {
    Head,
    Body(Decoder),
    Done,
}

enum Decoder {
    Empty,
    Length(u64),
    Chunked(Chunked),
    Close,
}

/// A request being written.
struct Writing {
    /// The request's head, until its first byte is written (a request
    /// none of whose bytes left can be sent again elsewhere).
    parts: Option<http::request::Parts>,
    /// `None` once the body's end is framed.
    body: Option<UpstreamBody>,
    encoding: Encoding,
    /// Bytes of a `Content-Length` body still to come.
    left: u64,
    out: Out,
    /// Whether the body was asked for its first piece.
    primed: bool,
}

/// Bytes to write: a head or chunk line, data, and a closing piece.
struct Out {
    head: Vec<u8>,
    at: usize,
    data: Bytes,
    tail: &'static [u8],
}

/// A send that failed, with the request when none of it was written.
pub type Unsent = (Error, Option<Request<UpstreamBody>>);

// === impl Conn ===

impl<T: AsyncRead + AsyncWrite + Unpin> Conn<T> {
    /// A connection over `io` reading response heads of up to `max_head`
    /// bytes.
    pub fn new(io: T, max_head: usize) -> Conn<T> {
        Conn {
            io,
            buf: BytesMut::new(),
            next_read: MIN_READ,
            max_head,
            writing: None,
            spare: Vec::new(),
            reading: Reading::Done,
            head_request: false,
            parsed: 0,
            #[cfg(test)]
            head_parses: 0,
            failed: None,
            spent: false,
        }
    }

    /// Starts `req`: its head is framed now, written by `poll_send`.
    pub fn start(&mut self, req: Request<UpstreamBody>) {
        let (mut parts, body) = req.into_parts();
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        let ended = body.is_end_stream();
        let exact = body.size_hint().exact();
        let encoding = request::encode(&mut parts, ended, exact, &mut out);
        self.head_request = parts.method == http::Method::HEAD;
        let left = match encoding {
            Encoding::Length(n) => n,
            _ => 0,
        };
        self.writing = Some(Writing {
            parts: Some(parts),
            // A body the framing sends none of is not read.
            body: (encoding != Encoding::Empty).then_some(body),
            encoding,
            left,
            primed: false,
            out: Out {
                head: out,
                at: 0,
                data: Bytes::new(),
                tail: b"",
            },
        });
        self.reading = Reading::Head;
        self.parsed = 0;
    }

    /// Writes the request and reads the answer's head. On failure, the
    /// request comes back when none of it was written.
    pub fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Response<()>, Unsent>> {
        if let Err(e) = self.poll_writing(cx) {
            // Only a write that failed leaves the request whole.
            let unsent = match e {
                Error::Write(_) => self.writing.take().and_then(Writing::unsent),
                _ => None,
            };
            return Poll::Ready(Err((e, unsent)));
        }
        self.poll_head(cx).map_err(|e| (e, None))
    }

    /// The answer's next frame: data (all a read brought), trailers, the
    /// end, or a failure.
    pub fn poll_body(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Some(Err(e)));
        }
        if let Err(e) = self.poll_writing(cx) {
            self.reading = Reading::Done;
            return Poll::Ready(Some(Err(e)));
        }
        loop {
            if let Some(polled) = self.decode() {
                return Poll::Ready(polled);
            }
            match ready!(self.poll_read(cx)) {
                Ok(0) => return Poll::Ready(self.at_eof()),
                Ok(_) => {}
                Err(e) => return Poll::Ready(Some(Err(self.fail(Error::Read(e))))),
            }
        }
    }

    /// Whether the answer's body has no more to give.
    pub fn is_end_stream(&self) -> bool {
        matches!(
            self.reading,
            Reading::Done | Reading::Body(Decoder::Empty | Decoder::Length(0))
        ) && self.failed.is_none()
    }

    /// What is known of the rest of the answer's body.
    pub fn size_hint(&self) -> SizeHint {
        match self.reading {
            Reading::Body(Decoder::Length(n)) => SizeHint::with_exact(n),
            Reading::Body(Decoder::Empty) | Reading::Done => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }

    /// Whether the exchange ended in a way that lets another follow.
    pub fn reusable(&self) -> bool {
        // A failure, or an answer without keep-alive, spent it.
        !self.spent && self.writing.is_none() && self.buf.is_empty() && self.is_end_stream()
    }

    /// Readies a reusable connection for its idle time: a large read
    /// buffer is let go.
    pub fn idle(&mut self) {
        self.reading = Reading::Done;
        if self.buf.capacity() > MAX_IDLE_BUFFER {
            self.buf = BytesMut::new();
            self.next_read = MIN_READ;
        }
        if self.spare.capacity() > MAX_IDLE_BUFFER {
            self.spare = Vec::new();
        }
    }

    /// Whether an idle connection is still open and silent (an upstream
    /// that closed it, or sent what nobody asked for, makes it unusable).
    pub fn poll_usable(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.spent {
            return Poll::Ready(false);
        }
        match self.poll_read(cx) {
            Poll::Pending => Poll::Ready(true),
            Poll::Ready(_) => {
                self.spent = true;
                Poll::Ready(false)
            }
        }
    }

    /// Writes what it can of the request; `Ok` while it is pending too,
    /// and once the upstream stopped taking it after its first bytes.
    fn poll_writing(&mut self, cx: &mut Context<'_>) -> Result<(), Error> {
        let Some(writing) = self.writing.as_mut() else {
            return Ok(());
        };
        match writing.poll(&mut self.io, cx) {
            Poll::Pending => Ok(()),
            Poll::Ready(Ok(())) => {
                if let Some(done) = self.writing.take() {
                    self.spare = done.out.head;
                }
                Ok(())
            }
            Poll::Ready(Err(Error::Write(e))) if writing.parts.is_none() => {
                // Part of the request left: the upstream may have answered
                // without reading the rest (a 413 before a large body), and
                // that answer is what the caller gets. The request stops
                // here; a connection that broke fails the read too.
                tracing::debug!(error = %e, "upstream stopped reading the request");
                self.writing = None;
                self.spent = true;
                Ok(())
            }
            Poll::Ready(Err(e)) => Err(self.fail(e)),
        }
    }

    fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<Result<Response<()>, Error>> {
        loop {
            // A head that came in pieces is parsed again only once a new
            // piece may have ended it (hyper's check): a head trickled a
            // byte at a time costs a scan of each byte, not a parse of the
            // whole head for each.
            if head::may_end(&self.buf, self.parsed) {
                #[cfg(test)]
                {
                    self.head_parses += usize::from(!self.buf.is_empty());
                }
                match head::parse(&mut self.buf, self.head_request) {
                    Ok(Some(head)) => {
                        self.parsed = 0;
                        // An answer that ends the connection's use.
                        self.spent |= !head.keep_alive;
                        self.reading = Reading::Body(match head.framing {
                            Framing::Empty | Framing::Length(0) => Decoder::Empty,
                            Framing::Length(n) => Decoder::Length(n),
                            Framing::Chunked => Decoder::Chunked(Chunked::new()),
                            Framing::Close => Decoder::Close,
                        });
                        return Poll::Ready(Ok(head.response));
                    }
                    Ok(None) => self.parsed = self.buf.len(),
                    Err(e) => return Poll::Ready(Err(self.fail(e))),
                }
            }
            if self.buf.len() >= self.max_head {
                return Poll::Ready(Err(self.fail(Error::HeadTooLarge(self.max_head))));
            }
            match ready!(self.poll_read(cx)) {
                Ok(0) => return Poll::Ready(Err(self.fail(Error::Incomplete))),
                Ok(_) => {}
                Err(e) => return Poll::Ready(Err(self.fail(Error::Read(e)))),
            }
        }
    }

    /// The next frame the bytes already read give, if they give one.
    fn decode(&mut self) -> Option<Option<Result<Frame<Bytes>, Error>>> {
        let Reading::Body(decoder) = &mut self.reading else {
            return Some(None);
        };
        match decoder {
            Decoder::Empty | Decoder::Length(0) => {
                self.reading = Reading::Done;
                Some(None)
            }
            Decoder::Length(left) => {
                if self.buf.is_empty() {
                    return None;
                }
                let take = (*left).min(self.buf.len() as u64);
                *left -= take;
                let data = self.buf.split_to(take as usize).freeze();
                Some(Some(Ok(Frame::data(data))))
            }
            Decoder::Close => {
                if self.buf.is_empty() {
                    return None;
                }
                Some(Some(Ok(Frame::data(self.buf.split().freeze()))))
            }
            Decoder::Chunked(chunked) if chunked.is_done() => match chunked.take_trailers() {
                Ok(Some(trailers)) => Some(Some(Ok(Frame::trailers(trailers)))),
                Ok(None) => {
                    self.reading = Reading::Done;
                    Some(None)
                }
                Err(e) => Some(Some(Err(self.fail(Error::Read(e))))),
            },
            Decoder::Chunked(chunked) => {
                if self.buf.is_empty() {
                    return None;
                }
                let (data, error) = chunked.take(&mut self.buf);
                match (data, error) {
                    (Some(data), None) => Some(Some(Ok(Frame::data(data)))),
                    (Some(data), Some(e)) => {
                        self.failed = Some(Error::Read(e));
                        self.spent = true;
                        Some(Some(Ok(Frame::data(data))))
                    }
                    (None, Some(e)) => Some(Some(Err(self.fail(Error::Read(e))))),
                    // Framing bytes only: the end, or more to read.
                    (None, None) if chunked.is_done() => self.decode(),
                    (None, None) => None,
                }
            }
        }
    }

    /// The end of the connection while a body is read.
    fn at_eof(&mut self) -> Option<Result<Frame<Bytes>, Error>> {
        self.spent = true;
        let error = match &self.reading {
            Reading::Body(Decoder::Close) => {
                self.reading = Reading::Done;
                return None;
            }
            Reading::Body(Decoder::Chunked(chunked)) => chunked.eof_error(),
            _ => io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "end of file before message length reached",
            ),
        };
        Some(Err(Error::Read(error)))
    }

    /// Marks the connection spent by `e`, and gives `e` back.
    fn fail(&mut self, e: Error) -> Error {
        self.spent = true;
        e
    }

    /// Reads what the connection has into the buffer.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let room = self.buf.capacity() - self.buf.len();
        if room < self.next_read {
            self.buf.reserve(self.next_read);
        }
        let room = self.buf.capacity() - self.buf.len();
        let n = ready!(pin!(self.io.read_buf(&mut self.buf)).poll(cx))?;
        if n == room {
            self.next_read = (self.next_read * 2).min(MAX_READ);
        }
        Poll::Ready(Ok(n))
    }
}

// === impl Writing ===

impl Writing {
    /// Writes until the request is whole, the body has nothing ready, or
    /// the socket is full.
    fn poll<T: AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        if !self.primed {
            // The body's first piece, if it is there, goes with the head.
            self.primed = true;
            if let Poll::Ready(Err(e)) = self.poll_piece(cx) {
                return Poll::Ready(Err(e));
            }
        }
        loop {
            while !self.out.is_empty() {
                let n = ready!(self.out.poll_write(io, cx)).map_err(Error::Write)?;
                if n == 0 {
                    return Poll::Ready(Err(Error::Write(io::ErrorKind::WriteZero.into())));
                }
                self.parts = None;
                self.out.advance(n);
            }
            if self.body.is_none() {
                return Pin::new(io).poll_flush(cx).map_err(Error::Write);
            }
            if self.poll_piece(cx)?.is_pending() {
                // What was written may wait in a TLS layer.
                if let Poll::Ready(Err(e)) = Pin::new(io).poll_flush(cx) {
                    return Poll::Ready(Err(Error::Write(e)));
                }
                return Poll::Pending;
            }
        }
    }

    /// Takes the body's next frame, if it has one ready, and frames it
    /// (or the body's end) for writing.
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        match ready!(Pin::new(body).poll_frame(cx)) {
            // Trailers are not sent: the proxy strips `Trailer`, without
            // which an HTTP/1.1 peer may refuse them.
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => Poll::Ready(self.put(data)),
                Err(_) => Poll::Ready(Ok(())),
            },
            Some(Err(e)) => Poll::Ready(Err(Error::RequestBody(e))),
            None => Poll::Ready(self.end()),
        }
    }

    /// Frames a piece of the body; its end too when the body says so.
    fn put(&mut self, data: Bytes) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        match self.encoding {
            Encoding::Length(_) => {
                self.left = self
                    .left
                    .checked_sub(data.len() as u64)
                    .ok_or(Error::RequestLength)?;
            }
            _ => {
                if self.out.at == self.out.head.len() {
                    self.out.head.clear();
                    self.out.at = 0;
                }
                request::chunk_line(data.len(), &mut self.out.head);
                self.out.tail = b"\r\n";
            }
        }
        self.out.data = data;
        if self.body.as_ref().is_some_and(Body::is_end_stream) {
            self.end()?;
        }
        Ok(())
    }

    /// Frames the body's end.
    fn end(&mut self) -> Result<(), Error> {
        self.body = None;
        match self.encoding {
            Encoding::Length(_) if self.left > 0 => Err(Error::RequestLength),
            Encoding::Chunked if self.out.tail.is_empty() => {
                self.out.tail = b"0\r\n\r\n";
                Ok(())
            }
            Encoding::Chunked => {
                self.out.tail = b"\r\n0\r\n\r\n";
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The request again, when none of it was written: its head, and its
    /// body with the piece already taken from it put back in front.
    fn unsent(self) -> Option<Request<UpstreamBody>> {
        let parts = self.parts?;
        let taken = self.out.data;
        let body = match (self.body, taken.is_empty()) {
            (Some(body), true) => body,
            (rest, _) => http_body_util::Either::Right(ProxyBody::new(Held::before(
                taken,
                rest.map(BodyExt::boxed_unsync),
            ))),
        };
        Some(Request::from_parts(parts, body))
    }
}

// === impl Out ===

impl Out {
    fn is_empty(&self) -> bool {
        self.at == self.head.len() && self.data.is_empty() && self.tail.is_empty()
    }

    fn poll_write<T: AsyncWrite + Unpin>(
        &self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        let slices = [
            IoSlice::new(&self.head[self.at..]),
            IoSlice::new(&self.data),
            IoSlice::new(self.tail),
        ];
        Pin::new(io).poll_write_vectored(cx, &slices)
    }

    fn advance(&mut self, mut n: usize) {
        let head = (self.head.len() - self.at).min(n);
        self.at += head;
        n -= head;
        let data = self.data.len().min(n);
        self.data.advance(data);
        n -= data;
        self.tail = &self.tail[n.min(self.tail.len())..];
    }
}

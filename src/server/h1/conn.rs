//! One caller's HTTP/1.1 connection served by a2a-tap itself: request
//! heads read as hyper's server reads them (`head`), each request handed
//! to the exchange with its body (whole when it came with the head, else
//! streamed as the exchange asks for it), and each answer written as
//! hyper's server writes it (`encode`), its body a frame at a time.

use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch, Notify};
use tokio::time::{Instant, Sleep};

use super::encode::{encode, length_of, Caller, Framing};
use super::head::{self, parse, Refused};
use crate::proxy::activity::Activity;
use crate::proxy::inbound::{Inbound, Piece, Streamed};
use crate::proxy::pool::h1::chunked::Chunked;
use crate::proxy::pool::h1::head::has_token;
use crate::proxy::pool::h1::request::size_line;
use crate::proxy::{BoxError, ProxyBody};

/// Room made for a read, at least.
const MIN_READ: usize = 8 * 1024;
/// Bytes of a next request read ahead while an answer is written.
const MAX_AHEAD: usize = 64 * 1024;

/// How a connection ended.
#[derive(Debug)]
pub enum Ended {
    /// The caller closed it, or it was done (not kept, or drained).
    Closed,
    /// No whole request head within the header deadline.
    HeaderTimeout,
    /// A head refused with this status (answered, then closed).
    Refused(StatusCode),
    /// Reading or writing failed, or the caller left mid-exchange.
    Broken(io::Error),
}

/// A connection's limits.
pub struct Limits {
    /// The read buffer's bound: a head longer than this is refused (431).
    pub max_buf: usize,
    /// The time a request head may take, from the first wait for it.
    pub header_read_timeout: Duration,
}

/// Serves the requests on `io` (whose first bytes, read already, are in
/// `buf`) with `handle`, until the caller closes, a request ends the
/// connection, or `drain` is raised between requests.
pub async fn serve<T, F, Fut>(
    mut io: T,
    mut buf: BytesMut,
    limits: &Limits,
    mut drain: watch::Receiver<bool>,
    activity: &Activity,
    mut handle: F,
) -> Ended
where
    T: AsyncRead + AsyncWrite + Unpin,
    F: FnMut(Request<Inbound>) -> Fut,
    Fut: Future<Output = Response<ProxyBody>>,
{
    let mut out: Vec<u8> = Vec::with_capacity(1024);
    // The connection's one timer for its heads, set again only when it
    // fires before the head being read is due (see `read_head`).
    let mut alarm = pin!(tokio::time::sleep(limits.header_read_timeout));
    loop {
        let head = match read_head(&mut io, &mut buf, limits, &mut drain, alarm.as_mut()).await {
            Ok(Some(head)) => head,
            Ok(None) => return Ended::Closed,
            Err(Waited::Timeout) => return Ended::HeaderTimeout,
            Err(Waited::Refused(refused)) => {
                let status = refused.status();
                let _ = io.write_all(&refusal(status)).await;
                let _ = io.shutdown().await;
                return Ended::Refused(status);
            }
            Err(Waited::Io(e)) => return Ended::Broken(e),
        };
        let head::Head {
            request,
            framing,
            mut keep_alive,
            expect_continue,
            upgrade,
        } = head;
        keep_alive &= !upgrade;
        let (parts, ()) = request.into_parts();
        let method = parts.method.clone();
        let version = parts.version;
        let trailers_allowed = te_trailers(&parts.headers);
        // hyper's rule: an HTTP/1.0 caller is sent no `100 Continue`.
        let expect_continue = expect_continue && version == http::Version::HTTP_11;
        let (body, mut feed) = body_of(framing, &mut buf, expect_continue);
        let answer = {
            let mut exchange = pin!(handle(Request::from_parts(parts, body)));
            loop {
                let Some(f) = feed.as_mut().filter(|f| !f.finished()) else {
                    break exchange.await;
                };
                tokio::select! {
                    answer = &mut exchange => break answer,
                    fed = f.step(&mut io, &mut buf) => if let Err(e) = fed {
                        return Ended::Broken(e);
                    },
                }
            }
        };
        let (head, mut body) = answer.into_parts();
        let length = length_of(&body);
        // A drain begun: this answer is the connection's last, and says so.
        keep_alive &= !*drain.borrow();
        out.clear();
        let caller = Caller {
            method: &method,
            version,
            keep_alive: &mut keep_alive,
        };
        let Ok(encoded) = encode(head, caller, length, &mut out) else {
            return Ended::Closed;
        };
        let answer = Answer {
            head: &out,
            body: &mut body,
            framing: &encoded.framing,
            trailers_allowed,
            has_body: length.is_some(),
        };
        let written = write_answer(&mut io, answer, &mut feed, &mut buf, activity).await;
        if let Err(e) = written {
            return Ended::Broken(e);
        }
        // A body the exchange left unread: what is here already is passed
        // over; more than that ends the connection.
        if let Some(f) = feed.as_mut() {
            f.pass_over(&mut buf);
            if !f.finished() {
                keep_alive = false;
            }
        }
        if encoded.last || !keep_alive {
            let _ = io.shutdown().await;
            return Ended::Closed;
        }
    }
}

/// Why no head came.
enum Waited {
    Timeout,
    Refused(Refused),
    Io(io::Error),
}

/// The next request head; `None` when the caller closed (or the drain
/// began) before any byte of one. It is due `header_read_timeout` after
/// this first wait for it. `alarm` is the connection's timer, set for an
/// earlier head's due time or this one's: when it fires before this head
/// is due, it is set again for it. So a request adds and removes no timer
/// of its own in the runtime's timer wheel, and a kept-alive connection
/// sets its timer about once a timeout.
async fn read_head<T: AsyncRead + Unpin>(
    io: &mut T,
    buf: &mut BytesMut,
    limits: &Limits,
    drain: &mut watch::Receiver<bool>,
    mut alarm: Pin<&mut Sleep>,
) -> Result<Option<head::Head>, Waited> {
    let due = Instant::now() + limits.header_read_timeout;
    let mut parsed = 0;
    loop {
        if !buf.is_empty() && crate::proxy::pool::h1::head::may_end(buf, parsed) {
            match parse(buf) {
                Ok(Some(head)) => return Ok(Some(head)),
                Ok(None) => {}
                Err(refused) => return Err(Waited::Refused(refused)),
            }
        }
        parsed = buf.len();
        if buf.len() >= limits.max_buf {
            return Err(Waited::Refused(Refused::TooLarge));
        }
        if buf.is_empty() && *drain.borrow() {
            return Ok(None);
        }
        let room = (limits.max_buf - buf.len()).min(MIN_READ.max(buf.capacity() - buf.len()));
        buf.reserve(room);
        let read = tokio::select! {
            read = io.read_buf(buf) => read,
            () = alarm.as_mut() => {
                if Instant::now() >= due {
                    return Err(Waited::Timeout);
                }
                alarm.as_mut().reset(due);
                continue;
            }
            _ = drain.changed(), if buf.is_empty() => return Ok(None),
        };
        match read {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) => return Err(Waited::Io(io::ErrorKind::UnexpectedEof.into())),
            Ok(_) => {}
            Err(e) => return Err(Waited::Io(e)),
        }
    }
}

/// The answer hyper gives a refused head.
fn refusal(status: StatusCode) -> Vec<u8> {
    format!(
        "HTTP/1.1 {} {}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or("")
    )
    .into_bytes()
}

/// Whether the caller takes trailers (`TE: trailers`).
fn te_trailers(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::TE)
        .iter()
        .any(|v| has_token(v, "trailers"))
}

/// The request body: whole when it is all in `buf`, else streamed by the
/// returned feed.
fn body_of(
    framing: head::Framing,
    buf: &mut BytesMut,
    expect_continue: bool,
) -> (Inbound, Option<Feed>) {
    match framing {
        head::Framing::Length(0) => (Inbound::Whole(None), None),
        head::Framing::Length(n) if (buf.len() as u64) >= n => {
            let whole = buf.split_to(n as usize).freeze();
            (Inbound::Whole(Some(whole)), None)
        }
        framing => {
            let (tx, rx) = mpsc::channel(1);
            let want = Arc::new(Notify::new());
            let length = match framing {
                head::Framing::Length(n) => Some(n),
                head::Framing::Chunked => None,
            };
            let body = Inbound::Streamed(Streamed {
                rx,
                want: want.clone(),
                wanted: false,
                length,
                done: false,
            });
            let decoder = match framing {
                head::Framing::Length(n) => Decoder::Length(n),
                head::Framing::Chunked => Decoder::Chunked(Chunked::new()),
            };
            let feed = Feed {
                tx: Some(tx),
                want,
                wanted: !expect_continue,
                continue_left: if expect_continue {
                    b"HTTP/1.1 100 Continue\r\n\r\n"
                } else {
                    b""
                },
                decoder,
            };
            (body, Some(feed))
        }
    }
}

enum Decoder {
    Length(u64),
    Chunked(Chunked),
    /// The chunked body's trailers, due after the data read with them.
    Trailers(http::HeaderMap),
    Done,
}

impl Decoder {
    /// The body's next piece from `buf`: data, trailers, or nothing yet.
    fn take(&mut self, buf: &mut BytesMut) -> Result<Option<Frame<Bytes>>, BoxError> {
        match self {
            Decoder::Length(left) => {
                let n = (*left).min(buf.len() as u64) as usize;
                *left -= n as u64;
                if *left == 0 {
                    *self = Decoder::Done;
                }
                Ok((n > 0).then(|| Frame::data(buf.split_to(n).freeze())))
            }
            Decoder::Chunked(chunked) => {
                let (data, error) = chunked.take(buf);
                let data = data.filter(|d| !d.is_empty());
                if let Some(e) = error {
                    return Err(Box::new(e));
                }
                if chunked.is_done() {
                    let trailers = chunked
                        .take_trailers()
                        .map_err(|e| Box::new(e) as BoxError)?;
                    let Some(data) = data else {
                        *self = Decoder::Done;
                        return Ok(trailers.map(Frame::trailers));
                    };
                    *self = trailers.map_or(Decoder::Done, Decoder::Trailers);
                    return Ok(Some(Frame::data(data)));
                }
                Ok(data.map(Frame::data))
            }
            Decoder::Trailers(_) => match std::mem::replace(self, Decoder::Done) {
                Decoder::Trailers(trailers) => Ok(Some(Frame::trailers(trailers))),
                _ => Ok(None),
            },
            Decoder::Done => Ok(None),
        }
    }
}

/// A streamed request body's reader: it reads the caller's bytes and hands
/// them to the exchange, one piece at a time.
struct Feed {
    /// `None` once the body ended (or failed) or the exchange dropped it.
    tx: Option<mpsc::Sender<Piece>>,
    want: Arc<Notify>,
    /// The exchange asked for the body.
    wanted: bool,
    /// What is left to write of `100 Continue` (due when the exchange asks).
    continue_left: &'static [u8],
    decoder: Decoder,
}

impl Feed {
    fn finished(&self) -> bool {
        matches!(self.decoder, Decoder::Done)
    }

    /// Reads and hands on the next piece (waiting for the exchange to ask
    /// first, and for room in the channel).
    async fn step<T: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        buf: &mut BytesMut,
    ) -> io::Result<()> {
        if !self.wanted {
            self.want.notified().await;
            self.wanted = true;
        }
        // Written a `write` at a time, what is left kept after each, so
        // that this step may be dropped at any wait (the answer came).
        while !self.continue_left.is_empty() {
            let n = io.write(self.continue_left).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.continue_left = &self.continue_left[n..];
        }
        let Some(tx) = self.tx.as_ref() else {
            // The exchange let the body go: read on only to pass it over.
            return self.discard(io, buf).await;
        };
        let Ok(permit) = tx.reserve().await else {
            self.tx = None;
            return Ok(());
        };
        if buf.is_empty() && !self.has_piece() {
            buf.reserve(MIN_READ);
            if io.read_buf(buf).await? == 0 {
                permit.send(Err(Box::new(cut_short())));
                self.decoder = Decoder::Done;
                self.tx = None;
                return Ok(());
            }
        }
        match self.decoder.take(buf) {
            Ok(Some(frame)) => permit.send(Ok(frame)),
            Ok(None) => drop(permit),
            Err(e) => {
                permit.send(Err(e));
                self.decoder = Decoder::Done;
                self.tx = None;
            }
        }
        if self.finished() {
            self.tx = None;
        }
        Ok(())
    }

    /// Passes over the body's bytes already in `buf`.
    fn pass_over(&mut self, buf: &mut BytesMut) {
        while !self.finished() && (!buf.is_empty() || self.has_piece()) {
            if self.decoder.take(buf).is_err() {
                self.decoder = Decoder::Done;
                return;
            }
        }
    }

    /// Whether a piece is due without reading more: the trailers read with
    /// the body's last data.
    fn has_piece(&self) -> bool {
        matches!(self.decoder, Decoder::Trailers(_))
    }

    async fn discard<T: AsyncRead + Unpin>(
        &mut self,
        io: &mut T,
        buf: &mut BytesMut,
    ) -> io::Result<()> {
        if buf.is_empty() && !self.has_piece() {
            buf.reserve(MIN_READ);
            if io.read_buf(buf).await? == 0 {
                self.decoder = Decoder::Done;
                return Err(cut_short());
            }
        }
        self.pass_over(buf);
        Ok(())
    }
}

fn cut_short() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the request body ended early")
}

/// An answer to write: its head as encoded, its body, and how the body
/// is framed for the caller.
struct Answer<'a> {
    head: &'a [u8],
    body: &'a mut ProxyBody,
    framing: &'a Framing,
    /// Whether the caller takes trailers (`TE: trailers`).
    trailers_allowed: bool,
    /// Whether the body had anything left to send when the head was
    /// encoded (not at its end already).
    has_body: bool,
}

/// Writes the answer's head and body. While it is written, the request
/// body goes on being read for the exchange (`feed`, from `buf`); once it
/// is done, a read watches for the caller leaving (and reads ahead a next
/// request).
async fn write_answer<T: AsyncRead + AsyncWrite + Unpin>(
    io: &mut T,
    answer: Answer<'_>,
    feed: &mut Option<Feed>,
    buf: &mut BytesMut,
    activity: &Activity,
) -> io::Result<()> {
    let mut io = Counted { io, activity };
    let io = &mut io;
    let Answer {
        head: out,
        body,
        framing,
        trailers_allowed,
        has_body,
    } = answer;
    let sends_body = has_body && *framing != Framing::Length(0);
    if !sends_body {
        return write_all(io, &[out]).await;
    }
    let (chunked, allowed) = match framing {
        Framing::Chunked { trailers } => (true, trailers.as_ref()),
        _ => (false, None),
    };
    // The head goes with the first write.
    let mut head_sent = false;
    let mut peeked = None;
    // What a told length has left: a body that ends short of it, or goes
    // past it, breaks the connection (the caller could not frame it).
    let mut left = match framing {
        Framing::Length(n) => Some(*n),
        _ => None,
    };
    loop {
        let next = 'got: {
            let next = next_frame(body, &mut peeked);
            let mut next = pin!(next);
            // The head goes at once unless the body's first data is
            // already there to go with it (as hyper flushes).
            if !head_sent {
                if let Poll::Ready(got) = poll_fn(|cx| Poll::Ready(next.as_mut().poll(cx))).await {
                    break 'got got;
                }
                head_sent = true;
                write_all(io, &[out]).await?;
            }
            loop {
                let watching = async {
                    match feed.as_mut().filter(|f| !f.finished()) {
                        Some(f) => f.step(io, buf).await,
                        None => watch_caller(io, buf).await,
                    }
                };
                tokio::select! {
                    next = &mut next => break 'got next,
                    watched = watching => watched?,
                }
            }
        };
        let h: &[u8] = if std::mem::replace(&mut head_sent, true) {
            &[]
        } else {
            out
        };
        match next.map_err(io::Error::other)? {
            Next::Data(data, end) => {
                if let Some(left) = left.as_mut() {
                    *left = left
                        .checked_sub(data.len() as u64)
                        .ok_or_else(|| io::Error::other("the answer's body passed its length"))?;
                }
                if chunked {
                    let mut size = [0u8; 18];
                    let n = size_line(data.len(), &mut size);
                    let tail: &[u8] = if end { b"\r\n0\r\n\r\n" } else { b"\r\n" };
                    write_all(io, &[h, &size[..n], &data, tail]).await?;
                } else {
                    write_all(io, &[h, &data]).await?;
                }
                if end {
                    break;
                }
            }
            Next::Trailers(trailers) => {
                if chunked {
                    let mut last = b"0\r\n".to_vec();
                    if trailers_allowed {
                        for (name, value) in &trailers {
                            if allowed.is_none_or(|names| names.contains(name)) {
                                last.extend_from_slice(name.as_str().as_bytes());
                                last.extend_from_slice(b": ");
                                last.extend_from_slice(value.as_bytes());
                                last.extend_from_slice(b"\r\n");
                            }
                        }
                    }
                    last.extend_from_slice(b"\r\n");
                    write_all(io, &[h, &last]).await?;
                } else if !h.is_empty() {
                    write_all(io, &[h]).await?;
                }
                break;
            }
            Next::End => {
                if left.is_some_and(|n| n > 0) {
                    return Err(io::Error::other(
                        "the answer's body ended short of its length",
                    ));
                }
                if chunked {
                    write_all(io, &[h, b"0\r\n\r\n"]).await?;
                } else if !h.is_empty() {
                    write_all(io, &[h]).await?;
                }
                break;
            }
        }
    }
    io.flush().await
}

/// What the answer's body gave next.
enum Next {
    /// Data, and whether the body ended with it (the body is polled once
    /// more at once, as hyper does, so that an end already there goes out
    /// with the data; a frame found then waits in `peeked`).
    Data(Bytes, bool),
    Trailers(http::HeaderMap),
    End,
}

async fn next_frame(
    body: &mut ProxyBody,
    peeked: &mut Option<Result<Frame<Bytes>, BoxError>>,
) -> Result<Next, BoxError> {
    loop {
        let frame = match peeked.take() {
            Some(frame) => frame,
            None => match poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx)).await {
                Some(frame) => frame,
                None => return Ok(Next::End),
            },
        };
        let frame = match frame?.into_data() {
            Ok(data) if data.is_empty() => continue,
            Ok(data) => data,
            Err(frame) => {
                return Ok(match frame.into_trailers() {
                    Ok(trailers) => Next::Trailers(trailers),
                    Err(_) => Next::End,
                })
            }
        };
        let end = body.is_end_stream()
            || poll_fn(|cx| {
                Poll::Ready(match std::pin::Pin::new(&mut *body).poll_frame(cx) {
                    Poll::Ready(None) => true,
                    Poll::Ready(Some(more)) => {
                        *peeked = Some(more);
                        false
                    }
                    Poll::Pending => false,
                })
            })
            .await;
        return Ok(Next::Data(frame, end));
    }
}

/// Reads while an answer is written: a next request's bytes are kept (up
/// to a bound, then reading stops); the caller's close is an error.
async fn watch_caller<T: AsyncRead + Unpin>(io: &mut T, buf: &mut BytesMut) -> io::Result<()> {
    if buf.len() >= MAX_AHEAD {
        return std::future::pending().await;
    }
    buf.reserve(MIN_READ);
    match io.read_buf(buf).await? {
        0 => Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "the caller left",
        )),
        _ => Ok(()),
    }
}

/// Writes `parts` (at most four) in as few `writev`s as the socket takes.
async fn write_all<T: AsyncWrite + Unpin>(io: &mut T, parts: &[&[u8]]) -> io::Result<()> {
    let mut left: [&[u8]; 4] = [&[]; 4];
    let mut count = 0;
    for part in parts.iter().filter(|p| !p.is_empty()) {
        left[count] = part;
        count += 1;
    }
    let mut first = 0;
    while first < count {
        let slices: [IoSlice<'_>; 4] = std::array::from_fn(|i| {
            IoSlice::new(if first + i < count {
                left[first + i]
            } else {
                &[]
            })
        });
        let mut n = io.write_vectored(&slices[..count - first]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        while first < count && n >= left[first].len() {
            n -= left[first].len();
            first += 1;
        }
        if first < count {
            left[first] = &left[first][n..];
        }
    }
    Ok(())
}

/// The caller's connection while an answer is written to it: each write
/// that waits for the caller, and each that moves bytes, is told to the
/// connection's activity, whose `write_timeout` counts how long the
/// caller takes nothing.
struct Counted<'a, T> {
    io: &'a mut T,
    activity: &'a Activity,
}

impl<T> Counted<'_, T> {
    fn told(&self, polled: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &polled {
            Poll::Pending => self.activity.write_waits(),
            Poll::Ready(Ok(n)) => self.activity.write_went(*n > 0),
            Poll::Ready(Err(_)) => self.activity.write_went(false),
        }
        polled
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<'_, T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<'_, T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut *self.io).poll_write(cx, data);
        self.told(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut *self.io).poll_write_vectored(cx, bufs);
        self.told(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.io).poll_shutdown(cx)
    }
}

/// A connection whose first bytes were read already: they are read again
/// first (an HTTP/2 caller's preface, handed to hyper's h2 server).
pub struct Rewind<T> {
    first: Bytes,
    io: T,
}

impl<T> Rewind<T> {
    pub fn new(first: Bytes, io: T) -> Rewind<T> {
        Rewind { first, io }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        dst: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.first.is_empty() {
            let n = self.first.len().min(dst.remaining());
            dst.put_slice(&self.first[..n]);
            self.first.advance(n);
            return Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.io).poll_read(cx, dst)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// HTTP/2's connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Reads a connection's first bytes into `buf` until they are HTTP/2's
/// preface whole, or cannot be: whether they are it. `Err` when the caller
/// closed before saying anything (the connection's deadlines bound the
/// wait).
pub async fn sniff<T: AsyncRead + Unpin>(io: &mut T, buf: &mut BytesMut) -> io::Result<bool> {
    loop {
        let n = buf.len().min(PREFACE.len());
        if buf[..n] != PREFACE[..n] {
            return Ok(false);
        }
        if n == PREFACE.len() {
            return Ok(true);
        }
        buf.reserve(MIN_READ);
        if io.read_buf(buf).await? == 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
    }
}

#[cfg(test)]
mod tests;

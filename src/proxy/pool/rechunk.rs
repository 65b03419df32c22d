//! Joins the complete chunks of a chunked upstream response that one read
//! brought into one chunk, before hyper's HTTP/1.1 client decodes them;
//! every other byte passes as it was read.
//!
//! hyper's client decodes one chunk per poll of the connection (its body
//! channel holds one item), so an SSE stream written as one chunk per
//! event costs a poll, a channel hand-over and a wake per event. The data
//! and its timing are the same in one chunk (RFC 9112 §7.1: the chunks
//! are the message's framing, not its content): only what a read already
//! holds is joined, nothing waits for more.
//!
//! The rewriter follows the response stream itself and joins only what it
//! is certain hyper frames as it does (`head.rs`). On anything else it
//! gives up for the rest of the connection and passes every byte as read,
//! so that hyper sees what the upstream sent and refuses what it refuses:
//! the rewriter only joins chunks that were well-formed on their own.

use std::sync::atomic::{AtomicU8, Ordering};

mod head;
mod io;
#[cfg(test)]
mod tests;

use head::{Framing, Parsed};
pub use io::RechunkIo;

/// Longest response head the rewriter reads (a longer one: it gives up).
const MAX_HEAD: usize = 64 * 1024;
/// Longest chunk extension it follows.
const MAX_EXTENSION: usize = 1024;
/// Most hex digits of a chunk size (16: any `u64`, leading zeros included).
const MAX_DIGITS: u8 = 16;
/// Most trailer bytes it follows.
const MAX_TRAILERS: usize = 16 * 1024;

/// The method of a request, as far as the framing of its response goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sent {
    /// Any method whose response is framed by its head.
    Other,
    /// `HEAD`: the response has no body, whatever its head says.
    Head,
    /// `CONNECT`: a 2xx turns the connection into a tunnel.
    Connect,
}

/// What a lease tells the rewriter of its connection before each request:
/// the request's method. hyper's HTTP/1.1 client has one request at a time
/// on a connection, so one slot is enough; an answer that comes with no
/// request told makes the rewriter give up.
#[derive(Default, Debug)]
pub struct NextRequest(AtomicU8);

impl NextRequest {
    /// Tells that a request with `method` is about to be sent.
    pub fn announce(&self, method: &http::Method) {
        let sent = if *method == http::Method::HEAD {
            Sent::Head
        } else if *method == http::Method::CONNECT {
            Sent::Connect
        } else {
            Sent::Other
        };
        self.0.store(sent as u8 + 1, Ordering::Release);
    }

    /// The method told since the last take, if any.
    fn take(&self) -> Option<Sent> {
        match self.0.swap(0, Ordering::Acquire) {
            1 => Some(Sent::Other),
            2 => Some(Sent::Head),
            3 => Some(Sent::Connect),
            _ => None,
        }
    }
}

/// The rewriter of one connection's response stream: bytes in (one read at
/// a time), bytes out, never more than came in. Pure: no I/O.
pub struct Rechunk {
    state: State,
    /// The bytes of a head that one read did not bring whole.
    head: Vec<u8>,
    /// The method of the request whose response is being read (taken at
    /// its first head, kept across 1xx heads).
    method: Option<Sent>,
    /// Trailer bytes of the body being read.
    trailers: usize,
    next: std::sync::Arc<NextRequest>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At or inside a response head.
    Head,
    /// In a body of known length: the bytes still to come.
    Length(u64),
    /// In a chunked body.
    Chunked(Chunk),
    /// Given up: every byte passes as read, to the connection's end.
    Through,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// In a size line (`SizeLine::default()` at its start).
    Size(SizeLine),
    /// In a chunk's data: the bytes still to come.
    Data(u64),
    /// After the data: its CR, then its LF.
    DataCr,
    DataLf,
    /// After the last chunk's size line: a trailer line or the final CRLF.
    TrailerStart,
    /// In a trailer line, or at its LF.
    Trailer,
    TrailerLf,
    /// The final CRLF's LF.
    EndLf,
}

/// A size line read so far: hex digits, then `;extension`, then CRLF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SizeLine {
    size: u64,
    digits: u8,
    /// Bytes of extension read (after the `;`), if there is one.
    extension: Option<u16>,
    cr: bool,
}

/// What one byte of a size line did.
enum Line {
    More,
    Done(u64),
    Bad,
}

// === impl Rechunk ===

impl Rechunk {
    /// The rewriter of a new connection, told of its requests by `next`.
    pub fn new(next: std::sync::Arc<NextRequest>) -> Rechunk {
        Rechunk {
            state: State::Head,
            head: Vec::new(),
            method: None,
            trailers: 0,
            next,
        }
    }

    /// Whether it gave up: bytes may go to hyper without passing here.
    pub fn is_through(&self) -> bool {
        self.state == State::Through
    }

    /// Rewrites one read's bytes, `input`, into `out` (called with the
    /// pieces in order; in all, never more bytes than `input`).
    pub fn rewrite(&mut self, input: &[u8], out: &mut impl FnMut(&[u8])) {
        // Bytes from `verbatim` up to `at` pass as read; put out in one go.
        let mut verbatim = 0;
        let mut at = 0;
        let mut spans = Spans::default();
        while at < input.len() {
            if self.state == State::Chunked(Chunk::Size(SizeLine::default())) {
                if let Some(end) = spans.scan(input, at) {
                    out(&input[verbatim..at]);
                    spans.put(input, out);
                    at = end;
                    verbatim = at;
                    continue;
                }
            }
            at = self.advance(input, at);
        }
        out(&input[verbatim..]);
    }

    /// Follows the bytes from `at` (passed as read) and returns where it
    /// stopped: at the end of `input`, or where the fast path may start.
    fn advance(&mut self, input: &[u8], at: usize) -> usize {
        let rest = &input[at..];
        match self.state {
            State::Through => input.len(),
            State::Head => self.head(input, at),
            State::Length(left) => {
                let n = left.min(rest.len() as u64);
                self.state = State::Length(left - n);
                if left == n {
                    self.response_done();
                }
                at + n as usize
            }
            State::Chunked(Chunk::Data(left)) => {
                let n = left.min(rest.len() as u64);
                self.state = State::Chunked(if left == n {
                    Chunk::DataCr
                } else {
                    Chunk::Data(left - n)
                });
                at + n as usize
            }
            State::Chunked(chunk) => {
                // One byte: the framing bytes around the data are few.
                self.state = self.framing_byte(chunk, rest[0]);
                at + 1
            }
        }
    }

    /// One byte of the chunked framing, other than data.
    fn framing_byte(&mut self, chunk: Chunk, b: u8) -> State {
        let next = match (chunk, b) {
            (Chunk::Size(mut line), _) => match line.push(b) {
                Line::More => Chunk::Size(line),
                Line::Done(0) => Chunk::TrailerStart,
                Line::Done(size) => Chunk::Data(size),
                Line::Bad => return State::Through,
            },
            (Chunk::DataCr, b'\r') => Chunk::DataLf,
            (Chunk::DataLf, b'\n') => Chunk::Size(SizeLine::default()),
            (Chunk::TrailerStart, b'\r') => Chunk::EndLf,
            (Chunk::Trailer, b'\r') => Chunk::TrailerLf,
            (Chunk::TrailerStart | Chunk::Trailer, b) if b != b'\n' => {
                self.trailers += 1;
                if self.trailers > MAX_TRAILERS {
                    return State::Through;
                }
                Chunk::Trailer
            }
            (Chunk::TrailerLf, b'\n') => Chunk::TrailerStart,
            (Chunk::EndLf, b'\n') => {
                self.response_done();
                return self.state;
            }
            _ => return State::Through,
        };
        State::Chunked(next)
    }

    /// Head bytes from `at`: a head read whole sets the framing of what
    /// follows; a partial one is kept for the next read.
    fn head(&mut self, input: &[u8], at: usize) -> usize {
        if self.head.is_empty() && self.method.is_none() {
            // The first byte of an answer: its request must have been told.
            match self.next.take() {
                Some(method) => self.method = Some(method),
                None => return self.give_up(input),
            }
        }
        let method = self.method.unwrap_or(Sent::Other);
        let (parsed, kept) = if self.head.is_empty() {
            (head::parse(&input[at..], method), 0)
        } else {
            let kept = self.head.len();
            let take = (input.len() - at).min(MAX_HEAD + 1 - kept.min(MAX_HEAD));
            self.head.extend_from_slice(&input[at..at + take]);
            (head::parse(&self.head, method), kept)
        };
        match parsed {
            Parsed::Partial if kept == 0 && input.len() - at <= MAX_HEAD => {
                self.head.extend_from_slice(&input[at..]);
                input.len()
            }
            Parsed::Partial if kept > 0 && self.head.len() <= MAX_HEAD => input.len(),
            Parsed::Complete(len, framing) if len > kept => {
                // Freed, not kept: heads cut by a read are rare.
                self.head = Vec::new();
                self.enter(framing);
                at + (len - kept)
            }
            _ => self.give_up(input),
        }
    }

    /// The state after a head framed as `framing`.
    fn enter(&mut self, framing: Framing) {
        match framing {
            // A 1xx: the final head of the same request comes next.
            Framing::Interim => self.state = State::Head,
            Framing::Empty | Framing::Length(0) => self.response_done(),
            Framing::Length(n) => self.state = State::Length(n),
            Framing::Chunked => self.state = State::Chunked(Chunk::Size(SizeLine::default())),
            Framing::Unknown => self.state = State::Through,
        }
    }

    /// A final response ended: the next bytes are another request's answer.
    fn response_done(&mut self) {
        self.method = None;
        self.trailers = 0;
        self.state = State::Head;
    }

    /// Gives up for the rest of the connection; returns the end of `input`.
    fn give_up(&mut self, input: &[u8]) -> usize {
        self.state = State::Through;
        self.head = Vec::new();
        input.len()
    }
}

// === impl SizeLine ===

impl SizeLine {
    fn push(&mut self, b: u8) -> Line {
        if self.cr {
            return if b == b'\n' {
                Line::Done(self.size)
            } else {
                Line::Bad
            };
        }
        if let Some(n) = self.extension.as_mut() {
            match b {
                b'\r' => self.cr = true,
                b'\n' => return Line::Bad,
                _ if usize::from(*n) >= MAX_EXTENSION => return Line::Bad,
                _ => *n += 1,
            }
            return Line::More;
        }
        match (hex(b), b) {
            (Some(v), _) if self.digits < MAX_DIGITS => {
                self.digits += 1;
                self.size = (self.size << 4) | u64::from(v);
            }
            (None, b';') if self.digits > 0 => self.extension = Some(0),
            (None, b'\r') if self.digits > 0 => self.cr = true,
            _ => return Line::Bad,
        }
        Line::More
    }
}

fn hex(b: u8) -> Option<u8> {
    let v = HEX[usize::from(b)];
    (v < 16).then_some(v)
}

/// Each byte's value as a hex digit, 0xff for a byte that is not one (a
/// table: size lines are read a digit at a time on every chunk).
static HEX: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            d @ b'0'..=b'9' => d - b'0',
            d @ b'a'..=b'f' => d - b'a' + 10,
            d @ b'A'..=b'F' => d - b'A' + 10,
            _ => 0xff,
        };
        b += 1;
    }
    table
};

// === impl Spans ===

/// Most chunks of a run whose places one scan keeps (a longer run is
/// joined up to there; the next run starts where it stopped).
const MAX_SPANS: usize = 64;

/// The data of two or more consecutive data chunks wholly inside one read,
/// each with a plain size line (hex digits, CRLF) and its CRLF after the
/// data: found in one scan, put out as one chunk.
struct Spans {
    /// Each chunk's data: where it starts in the read, and its length.
    data: [(usize, usize); MAX_SPANS],
    count: usize,
    /// Their data, in all.
    total: u64,
}

impl Default for Spans {
    fn default() -> Self {
        Spans {
            data: [(0, 0); MAX_SPANS],
            count: 0,
            total: 0,
        }
    }
}

impl Spans {
    /// Scans the run starting at `at`; where it ends, if there are two
    /// chunks or more.
    fn scan(&mut self, input: &[u8], at: usize) -> Option<usize> {
        let (mut count, mut total, mut end) = (0, 0u64, at);
        while count < MAX_SPANS {
            let Some((data, len)) = plain_chunk(input, end) else {
                break;
            };
            self.data[count] = (data, len);
            count += 1;
            total += len as u64;
            end = data + len + 2;
        }
        self.count = count;
        self.total = total;
        (count >= 2).then_some(end)
    }

    /// Puts out the run scanned last as one chunk: one size line, the
    /// data, CRLF.
    fn put(&self, input: &[u8], out: &mut impl FnMut(&[u8])) {
        let mut line = [0u8; 18];
        let digits = (64 - self.total.leading_zeros()).div_ceil(4).max(1) as usize;
        for (i, slot) in line[..digits].iter_mut().enumerate() {
            let nibble = (self.total >> (4 * (digits - 1 - i))) & 0xf;
            *slot = b"0123456789abcdef"[nibble as usize];
        }
        line[digits..digits + 2].copy_from_slice(b"\r\n");
        out(&line[..digits + 2]);
        for &(data, len) in &self.data[..self.count] {
            out(&input[data..data + len]);
        }
        out(b"\r\n");
    }
}

/// The chunk at `at` when it is a data chunk wholly in `input` with a plain
/// size line: where its data starts, and its length. One pass over the
/// size line's digits.
fn plain_chunk(input: &[u8], at: usize) -> Option<(usize, usize)> {
    let rest = input.get(at..)?;
    let (mut size, mut digits) = (0u64, 0usize);
    while let Some(v) = rest.get(digits).and_then(|b| hex(*b)) {
        if digits == usize::from(MAX_DIGITS) {
            return None;
        }
        size = (size << 4) | u64::from(v);
        digits += 1;
    }
    if digits == 0 || rest.get(digits..digits + 2)? != b"\r\n" {
        return None;
    }
    let after = rest.len() - digits - 2;
    // The data and its CRLF must be in this read.
    if size == 0 || size > after.saturating_sub(2) as u64 {
        return None;
    }
    let len = size as usize;
    let data = digits + 2;
    (rest.get(data + len..data + len + 2)? == b"\r\n").then_some((at + data, len))
}

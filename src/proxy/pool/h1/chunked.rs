//! The chunked transfer coding of a response body, read with the states
//! and limits of hyper's HTTP/1.1 client (RFC 9112 §7.1), but a buffer at
//! a time: the data of every chunk one read brought comes out together.
//! Pure: bytes in, data ranges out.

use std::io;
use std::ops::Range;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};

/// Most chunk-extension bytes of one body (hyper's limit).
const MAX_EXTENSIONS: u64 = 16 * 1024;
/// Most trailer-section bytes (hyper's limit).
const MAX_TRAILER_BYTES: usize = 16 * 1024;
/// Most trailer lines (hyper's default header count).
const MAX_TRAILERS: usize = 100;

/// A chunked body being read.
#[derive(Debug)]
pub struct Chunked {
    state: State,
    /// The size of the chunk being read, then what is left of its data.
    size: u64,
    /// Extension bytes read in the whole body.
    extensions: u64,
    /// The trailer section read so far, if there is one.
    trailers: Option<BytesMut>,
    trailer_lines: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Start,
    Size,
    SizeLws,
    Extension,
    SizeLf,
    Body,
    BodyCr,
    BodyLf,
    Trailer,
    TrailerLf,
    EndCr,
    EndLf,
    End,
}

/// What one call read: how many input bytes it used, and the failure that
/// stopped it (the data before it still counts).
pub struct Decoded {
    pub used: usize,
    pub error: Option<io::Error>,
}

impl Chunked {
    pub fn new() -> Chunked {
        Chunked {
            state: State::Start,
            size: 0,
            extensions: 0,
            trailers: None,
            trailer_lines: 0,
        }
    }

    /// Whether the last chunk and the trailer section were read.
    pub fn is_done(&self) -> bool {
        self.state == State::End
    }

    /// The failure of an input that ended before the body did.
    pub fn eof_error(&self) -> io::Error {
        let what = match self.state {
            State::Body => "end of file before message length reached",
            _ => "unexpected EOF during chunk size line",
        };
        io::Error::new(io::ErrorKind::UnexpectedEof, what)
    }

    /// Reads `input` up to the body's end or a fault, giving each run of
    /// chunk data to `data` (ranges of `input`, in order).
    pub fn decode(&mut self, input: &[u8], data: &mut impl FnMut(Range<usize>)) -> Decoded {
        let mut at = 0;
        while at < input.len() && self.state != State::End {
            match self.state {
                State::Body => {
                    let take = self.size.min((input.len() - at) as u64) as usize;
                    data(at..at + take);
                    at += take;
                    self.size -= take as u64;
                    if self.size == 0 {
                        self.state = State::BodyCr;
                    }
                    continue;
                }
                // The common shapes in one step each, with the transitions
                // the byte steps below would take: a data's closing CRLF,
                // and a size line of digits alone. Anything else (and an
                // input that ends inside them) goes a byte at a time.
                State::BodyCr if input[at..].starts_with(b"\r\n") => {
                    self.size = 0;
                    self.state = State::Start;
                    at += 2;
                    continue;
                }
                State::Start => {
                    if let Some((size, len)) = size_line(&input[at..]) {
                        self.size = size;
                        self.state = if size == 0 { State::EndCr } else { State::Body };
                        at += len;
                        continue;
                    }
                }
                _ => {}
            }
            match self.step(input[at]) {
                Ok(state) => self.state = state,
                Err(error) => {
                    return Decoded {
                        used: at,
                        error: Some(error),
                    }
                }
            }
            at += 1;
        }
        Decoded {
            used: at,
            error: None,
        }
    }

    /// Decodes the chunks in `buf`, taking what it used: their data
    /// together (one piece as a view of the buffer, more as one copy), and
    /// a fault that stopped it.
    pub fn take(&mut self, buf: &mut BytesMut) -> (Option<Bytes>, Option<io::Error>) {
        let mut first = None;
        let mut joined: Option<BytesMut> = None;
        let decoded = self.decode(buf, &mut |range| match (&first, &mut joined) {
            (None, _) => first = Some(range),
            (Some(one), None) => {
                let mut all = BytesMut::with_capacity(buf.len());
                all.extend_from_slice(&buf[one.clone()]);
                all.extend_from_slice(&buf[range]);
                joined = Some(all);
            }
            (Some(_), Some(all)) => all.extend_from_slice(&buf[range]),
        });
        let data = match (first, joined) {
            (_, Some(all)) => {
                buf.advance(decoded.used);
                Some(all.freeze())
            }
            (Some(one), None) => Some(buf.split_to(decoded.used).freeze().slice(one)),
            (None, None) => {
                buf.advance(decoded.used);
                None
            }
        };
        (data, decoded.error)
    }

    /// The trailer section, once the body is done (a bad one fails it).
    pub fn take_trailers(&mut self) -> io::Result<Option<HeaderMap>> {
        match self.trailers.take() {
            Some(section) => parse_trailers(&section, self.trailer_lines).map(Some),
            None => Ok(None),
        }
    }

    /// One byte outside chunk data.
    fn step(&mut self, b: u8) -> io::Result<State> {
        use State::*;
        Ok(match (self.state, b) {
            (Start, _) => {
                self.digit(b)
                    .ok_or_else(|| invalid("Invalid chunk size line: missing size digit"))??;
                Size
            }
            (Size, _) => match self.digit(b) {
                Some(pushed) => {
                    pushed?;
                    Size
                }
                None => match b {
                    b'\t' | b' ' => SizeLws,
                    b';' => Extension,
                    b'\r' => SizeLf,
                    _ => return Err(invalid("Invalid chunk size line: Invalid Size")),
                },
            },
            (SizeLws, b'\t' | b' ') => SizeLws,
            (SizeLws, b';') => Extension,
            (SizeLws, b'\r') => SizeLf,
            (SizeLws, _) => return Err(invalid("Invalid chunk size linear white space")),
            (Extension, b'\r') => SizeLf,
            (Extension, b'\n') => return Err(bad("invalid chunk extension contains newline")),
            (Extension, _) => {
                self.extensions += 1;
                if self.extensions >= MAX_EXTENSIONS {
                    return Err(bad("chunk extensions over limit"));
                }
                Extension
            }
            (SizeLf, b'\n') if self.size == 0 => EndCr,
            (SizeLf, b'\n') => Body,
            (SizeLf, _) => return Err(invalid("Invalid chunk size LF")),
            (BodyCr, b'\r') => BodyLf,
            (BodyCr, _) => return Err(invalid("Invalid chunk body CR")),
            (BodyLf, b'\n') => {
                self.size = 0;
                Start
            }
            (BodyLf, _) => return Err(invalid("Invalid chunk body LF")),
            (Trailer, _) => {
                self.put_trailer(b)?;
                if b == b'\r' {
                    TrailerLf
                } else {
                    Trailer
                }
            }
            (TrailerLf, b'\n') => {
                if self.trailer_lines >= MAX_TRAILERS {
                    return Err(bad("chunk trailers count overflow"));
                }
                self.trailer_lines += 1;
                self.put_trailer(b)?;
                EndCr
            }
            (TrailerLf, _) => return Err(invalid("Invalid trailer end LF")),
            (EndCr, b'\r') => {
                if self.trailers.is_some() {
                    self.put_trailer(b)?;
                }
                EndLf
            }
            (EndCr, _) => {
                match self.trailers.as_mut() {
                    None => {
                        let mut section = BytesMut::with_capacity(64);
                        section.put_u8(b);
                        self.trailers = Some(section);
                    }
                    Some(_) => self.put_trailer(b)?,
                }
                Trailer
            }
            (EndLf, b'\n') => {
                if self.trailers.is_some() {
                    self.put_trailer(b)?;
                }
                End
            }
            (EndLf, _) => return Err(invalid("Invalid chunk end LF")),
            // Data is read in bulk, and nothing after the end.
            (Body | End, _) => self.state,
        })
    }

    /// Adds a hex digit to the size: `None` when `b` is not one.
    fn digit(&mut self, b: u8) -> Option<io::Result<()>> {
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(
            self.size
                .checked_mul(16)
                .and_then(|s| s.checked_add(u64::from(v)))
                .map(|s| self.size = s)
                .ok_or_else(|| invalid("invalid chunk size: overflow")),
        )
    }

    fn put_trailer(&mut self, b: u8) -> io::Result<()> {
        let section = self.trailers.get_or_insert_with(BytesMut::new);
        section.put_u8(b);
        // As hyper counts: the section fails once it holds the limit.
        if section.len() >= MAX_TRAILER_BYTES {
            return Err(bad("chunk trailers bytes over limit"));
        }
        Ok(())
    }
}

/// A size line of hex digits alone at the start of `input` (at most 16 of
/// them, so the size cannot overflow), ended by CRLF: the size and the
/// line's length. `None` for any other line, or one not whole in `input`.
fn size_line(input: &[u8]) -> Option<(u64, usize)> {
    let mut size = 0u64;
    for (i, &b) in input.iter().enumerate().take(17) {
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            b'\r' if i > 0 => {
                return (input.get(i + 1) == Some(&b'\n')).then_some((size, i + 2));
            }
            _ => return None,
        };
        size = size << 4 | u64::from(v);
    }
    // Seventeen digits (or a line not whole): the byte steps read it.
    None
}

fn parse_trailers(section: &[u8], lines: usize) -> io::Result<HeaderMap> {
    let mut headers = vec![httparse::EMPTY_HEADER; lines];
    match httparse::parse_headers(section, &mut headers) {
        Ok(httparse::Status::Complete((_, headers))) => {
            let mut map = HeaderMap::with_capacity(headers.len());
            for h in headers.iter() {
                let name =
                    HeaderName::try_from(h.name).map_err(|_| invalid("Invalid trailer name"))?;
                let value = HeaderValue::from_bytes(h.value)
                    .map_err(|_| invalid("Invalid trailer value"))?;
                map.append(name, value);
            }
            Ok(map)
        }
        Ok(httparse::Status::Partial) => Err(invalid("Partial header")),
        Err(e) => Err(io::Error::new(io::ErrorKind::InvalidInput, e)),
    }
}

fn invalid(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

fn bad(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

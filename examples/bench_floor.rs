//! The floor for `scripts/bench.sh`: the least an HTTP/1.1 reverse proxy
//! must do, written plainly on tokio and httparse, to show in the same run
//! what a request costs below a2a-tap and nginx. Per caller connection it
//! reads a request head and its `Content-Length` body, writes them to its
//! own keep-alive connection to the upstream unchanged, parses the
//! response head, follows the body's framing (`Content-Length` or chunked)
//! to its end and writes each read to the caller as it came.
//!
//! Not a proxy to use: no hop-by-hop headers, no limits, no chunked request
//! bodies, trailers, interim answers, `HEAD`, pipelining beyond one request
//! at a time, or errors answered; any of them closes the connection.
//!
//! Usage: `bench_floor LISTEN UPSTREAM [THREADS]` (addresses as
//! `127.0.0.1:PORT`; THREADS defaults to the machine's cores), one
//! single-threaded tokio runtime per thread on a `SO_REUSEPORT` listener.
#![forbid(unsafe_code)]

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Most headers read in a head.
const MAX_HEADERS: usize = 64;
/// A request head and body, and a response head, must fit in this.
const BUF: usize = 64 * 1024;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: bench_floor LISTEN UPSTREAM [THREADS]";
    let listen: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let upstream: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let threads = match args.next() {
        Some(n) => n.parse()?,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let serving: Vec<_> = (0..threads)
        .map(|_| std::thread::spawn(move || serve(listen, upstream)))
        .collect();
    for thread in serving {
        thread.join().map_err(|_| "a serving thread panicked")??;
    }
    Ok(())
}

/// One thread: its own runtime and listener on the shared port.
fn serve(listen: SocketAddr, upstream: SocketAddr) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let socket = TcpSocket::new_v4()?;
        socket.set_reuseport(true)?;
        socket.set_reuseaddr(true)?;
        socket.bind(listen)?;
        let listener = socket.listen(1024)?;
        loop {
            let (caller, _) = listener.accept().await?;
            caller.set_nodelay(true)?;
            tokio::spawn(async move {
                // A failed or closed connection just ends.
                let _ = relay(caller, upstream).await;
            });
        }
    })
}

/// Relays one caller connection's requests, one at a time.
async fn relay(mut caller: TcpStream, upstream: SocketAddr) -> Result<(), Error> {
    let mut agent: Option<TcpStream> = None;
    let mut req = vec![0u8; BUF];
    let mut have = 0;
    let mut resp = vec![0u8; BUF];
    loop {
        let whole = loop {
            if let Some(whole) = request_len(&req[..have])? {
                break whole;
            }
            have += read_more(&mut caller, &mut req[have..]).await?;
        };
        if whole > req.len() {
            return Err("request larger than the buffer".into());
        }
        while have < whole {
            have += read_more(&mut caller, &mut req[have..whole]).await?;
        }
        if agent.is_none() {
            let stream = TcpStream::connect(upstream).await?;
            stream.set_nodelay(true)?;
            agent = Some(stream);
        }
        let agent = agent.as_mut().ok_or("no upstream connection")?;
        agent.write_all(&req[..whole]).await?;
        req.copy_within(whole..have, 0);
        have -= whole;

        let mut got = 0;
        let (head, mut body) = loop {
            got += read_more(agent, &mut resp[got..]).await?;
            if let Some(parsed) = response_head(&resp[..got])? {
                break parsed;
            }
        };
        let mut done = body.feed(&resp[head..got])?;
        caller.write_all(&resp[..got]).await?;
        while !done {
            let n = read_more(agent, &mut resp).await?;
            done = body.feed(&resp[..n])?;
            caller.write_all(&resp[..n]).await?;
        }
    }
}

/// Reads into `buf`; a closed connection or a full buffer is an error.
async fn read_more(from: &mut TcpStream, buf: &mut [u8]) -> Result<usize, Error> {
    if buf.is_empty() {
        return Err("head larger than the buffer".into());
    }
    match from.read(buf).await? {
        0 => Err("closed".into()),
        n => Ok(n),
    }
}

/// The length of the request head and body at the start of `bytes`, once
/// the head is complete.
fn request_len(bytes: &[u8]) -> Result<Option<usize>, Error> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(head) = req.parse(bytes)? else {
        return Ok(None);
    };
    let mut length = 0;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("chunked request bodies are not relayed".into());
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(h.value)?.trim().parse::<usize>()?;
        }
    }
    Ok(Some(head + length))
}

/// The response head's length and its body's framing, once complete.
fn response_head(bytes: &[u8]) -> Result<Option<(usize, Framing)>, Error> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head) = resp.parse(bytes)? else {
        return Ok(None);
    };
    let mut framing = Framing::Length(0);
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            framing = Framing::Chunked(Chunked::Size(0));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            framing = Framing::Length(std::str::from_utf8(h.value)?.trim().parse()?);
        }
    }
    Ok(Some((head, framing)))
}

/// Where a response body is in its framing.
enum Framing {
    /// This many bytes left.
    Length(usize),
    Chunked(Chunked),
}

/// Where a chunked body is: in a size line, its LF, a chunk's data (bytes
/// left), the CRLF after it, or the empty trailer section (bytes of its
/// CRLF seen).
#[derive(Clone, Copy)]
enum Chunked {
    Size(usize),
    SizeLf(usize),
    Data(usize),
    DataCr,
    DataLf,
    End(u8),
}

impl Framing {
    /// Follows `bytes` of the body: whether it ended with them.
    fn feed(&mut self, bytes: &[u8]) -> Result<bool, Error> {
        let state = match self {
            Framing::Length(left) => {
                *left = left
                    .checked_sub(bytes.len())
                    .ok_or("more bytes than the length")?;
                return Ok(*left == 0);
            }
            Framing::Chunked(state) => state,
        };
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            *state = match *state {
                Chunked::Data(left) => {
                    let take = left.min(bytes.len() - i);
                    i += take;
                    *state = match left - take {
                        0 => Chunked::DataCr,
                        left => Chunked::Data(left),
                    };
                    continue;
                }
                Chunked::Size(n) => match b {
                    b'\r' => Chunked::SizeLf(n),
                    _ => {
                        let digit = (b as char).to_digit(16).ok_or("bad chunk size")? as usize;
                        Chunked::Size(n.checked_mul(16).ok_or("chunk too large")? + digit)
                    }
                },
                Chunked::SizeLf(0) if b == b'\n' => Chunked::End(0),
                Chunked::SizeLf(n) if b == b'\n' => Chunked::Data(n),
                Chunked::DataCr if b == b'\r' => Chunked::DataLf,
                Chunked::DataLf if b == b'\n' => Chunked::Size(0),
                Chunked::End(0) if b == b'\r' => Chunked::End(1),
                Chunked::End(1) if b == b'\n' && i + 1 == bytes.len() => return Ok(true),
                _ => return Err("bad chunked framing".into()),
            };
            i += 1;
        }
        Ok(false)
    }
}

//! hyper's HTTP/1.1 server is the oracle: each request wire, whole and cut
//! at every offset, is read by hyper's server (as the proxy configures it)
//! and by `parse` with the body framing it gives, and what each made of it
//! must be the same: the refusal's status, or the head, whether the
//! connection is kept, whether `100 Continue` is due, and the body. The
//! same holds for generated heads (property tests): the probes edited
//! byte by byte, and heads composed of the framing headers' usual values,
//! their edges and hostile bytes.

use std::convert::Infallible;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{parse, Framing, Refused};
use crate::proxy::pool::h1::chunked::Chunked;

/// The read buffer's bound, as the proxy sets hyper's (`max_buf_size`).
const MAX_BUF: usize = 64 * 1024;

/// What a server made of a request wire.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Answered with this status, no request served.
    Refused(u16),
    /// Ended before a head was whole (no answer).
    Incomplete,
    /// A request: its description, whether the connection is kept, and
    /// whether `100 Continue` went first.
    Served {
        head: String,
        body: Result<Vec<u8>, ()>,
        keep_alive: bool,
        continued: bool,
    },
}

fn describe(req: &http::Request<()>) -> String {
    let mut out = format!("{} {} {:?}\n", req.method(), req.uri(), req.version());
    for (name, value) in req.headers() {
        out.push_str(&format!("{name}: {:?}\n", value.as_bytes()));
    }
    out
}

async fn hypers(wire: &[u8], max_buf: usize) -> Outcome {
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let service = service_fn(|req: http::Request<hyper::body::Incoming>| async move {
        let (parts, body) = req.into_parts();
        let head = describe(&http::Request::from_parts(parts, ()));
        let body = match body.collect().await {
            Ok(b) => format!("ok {:?}", b.to_bytes().as_ref()),
            Err(_) => "failed".to_owned(),
        };
        let text = format!("{head}\n{body}");
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(text))))
    });
    tokio::spawn(async move {
        let _ = hyper::server::conn::http1::Builder::new()
            .max_buf_size(max_buf)
            .auto_date_header(false)
            // The wire ends with the caller's half-close: hyper must not
            // take it for the caller leaving mid-request.
            .half_close(true)
            .serve_connection(TokioIo::new(server), service)
            .await;
    });
    client.write_all(wire).await.expect("write");
    client.shutdown().await.expect("shutdown");
    let mut out = Vec::new();
    let _ = client.read_to_end(&mut out).await;
    let mut out = &out[..];
    if out.is_empty() {
        return Outcome::Incomplete;
    }
    let continued = out.starts_with(b"HTTP/1.1 100 Continue\r\n\r\n");
    if continued {
        out = &out[25..];
    }
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut resp = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(len)) = resp.parse(out) else {
        panic!("hyper's answer: {:?}", String::from_utf8_lossy(out));
    };
    let code = resp.code.unwrap_or_default();
    if code != 200 {
        return Outcome::Refused(code);
    }
    let has = |name: &str, value: &str| {
        resp.headers.iter().any(|h| {
            h.name.eq_ignore_ascii_case(name) && h.value.eq_ignore_ascii_case(value.as_bytes())
        })
    };
    let keep_alive = if resp.version == Some(1) {
        !has("connection", "close")
    } else {
        has("connection", "keep-alive")
    };
    // The first answer only: bytes after the request's body are a next
    // request, which hyper answers after it. (An answer to CONNECT tells
    // no length: the connection is then the answer's.)
    let told = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
        .map_or(out.len(), |n| len + n);
    let text = String::from_utf8_lossy(&out[len..told]).into_owned();
    let (head, body) = text.split_once("\n\n").expect("described");
    let body = match body.strip_prefix("ok ") {
        Some(bytes) => Ok(bytes.to_owned().into_bytes()),
        None => Err(()),
    };
    Outcome::Served {
        head: format!("{head}\n"),
        // After a body cut short the connection is not used again, however
        // hyper's answer to it reads.
        keep_alive: keep_alive && body.is_ok(),
        body,
        continued,
    }
}

fn ours(wire: &[u8], max_buf: usize) -> Outcome {
    let mut buf = BytesMut::from(wire);
    let head = match parse(&mut buf) {
        Err(refused) => return Outcome::Refused(refused.status().as_u16()),
        Ok(None) if buf.len() >= max_buf => {
            return Outcome::Refused(Refused::TooLarge.status().as_u16())
        }
        Ok(None) => return Outcome::Incomplete,
        Ok(Some(head)) => head,
    };
    let body = match head.framing {
        Framing::Length(n) => buf
            .get(..usize::try_from(n).unwrap_or(usize::MAX))
            .map(<[u8]>::to_vec)
            .ok_or(()),
        Framing::Chunked => {
            let mut chunked = Chunked::new();
            let mut data = Vec::new();
            let decoded = chunked.decode(&buf, &mut |r| data.extend_from_slice(&buf[r]));
            let trailers = chunked.is_done().then(|| chunked.take_trailers());
            match (decoded.error, trailers) {
                (None, Some(Ok(_))) => Ok(data),
                _ => Err(()),
            }
        }
    };
    Outcome::Served {
        head: describe(&head.request),
        keep_alive: head.keep_alive && body.is_ok(),
        body: body.map(|b| format!("{:?}", &b[..]).into_bytes()),
        continued: head.expect_continue
            && head.framing != Framing::Length(0)
            && head.request.version() == http::Version::HTTP_11,
    }
}

fn assert_same(wire: &[u8]) {
    assert_same_within(wire, MAX_BUF);
}

/// `assert_same` with a read buffer of `max_buf` bytes.
fn assert_same_within(wire: &[u8], max_buf: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let theirs = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), hypers(wire, max_buf))
            .await
            .expect("hyper answered")
    });
    let mine = ours(wire, max_buf);
    assert_eq!(mine, theirs, "request {:?}", String::from_utf8_lossy(wire));
}

/// Requests that probe each rule of hyper's head reading and framing.
const CASES: &[&str] = &[
    "GET / HTTP/1.1\r\nhost: a\r\n\r\n",
    "GET /p?q=1 HTTP/1.0\r\nhost: a\r\n\r\n",
    "GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n",
    "GET / HTTP/1.1\r\nconnection: close\r\n\r\n",
    "GET / HTTP/1.1\r\nconnection: close\r\nconnection: keep-alive\r\n\r\n",
    "GET / HTTP/1.1\r\nconnection: keep-alive, close\r\n\r\n",
    "POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello",
    "POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhel",
    "POST / HTTP/1.1\r\ncontent-length: 5, 5\r\n\r\nhello",
    "POST / HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 5\r\n\r\nhello",
    "POST / HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    "POST / HTTP/1.1\r\ncontent-length: +5\r\n\r\nhello",
    "POST / HTTP/1.1\r\ncontent-length: 99999999999999999999999\r\n\r\nhello",
    "POST / HTTP/1.1\r\ncontent-length: 18446744073709551614\r\n\r\nhello",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nx-t: 1\r\n\r\n",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked, gzip\r\n\r\nhello",
    "POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\nhello",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ntransfer-encoding: gzip\r\n\r\nhello",
    "POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    "POST / HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\nhello",
    "POST / HTTP/1.1\r\nexpect: 100-Continue\r\ncontent-length: 0\r\n\r\n",
    "POST / HTTP/1.1\r\nexpect: 100-CONTINUE\r\ncontent-length: 2\r\n\r\nhi",
    "POST / HTTP/1.1\r\nexpect: 100-continue, x\r\ncontent-length: 2\r\n\r\nhi",
    "POST / HTTP/1.1\r\nexpect: 100-continue\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
    "POST / HTTP/1.0\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\nhello",
    "GET / HTTP/1.1\r\nx-folded: a\r\n b\r\n\r\n",
    "GET / HTTP/1.1\r\nbad header: x\r\n\r\n",
    "GET / HTTP/1.1\r\nx-obs: caf\u{e9}\r\nx-tab: a\tb\r\n\r\n",
    "G@T / HTTP/1.1\r\n\r\n",
    "GET /a b HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.2\r\n\r\n",
    "GET / HTTP/2.0\r\n\r\n",
    "GET http://example.com:8080/x HTTP/1.1\r\nhost: other\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\n\r\n",
    "CUSTOM-METHOD /x HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\nhost: a\n\n",
    "\r\nGET / HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\r\nhost: a\r\n",
    "",
];

#[test]
fn every_request_reads_as_hypers_server_reads_it_whole_and_cut_at_every_offset() {
    for case in CASES {
        let wire = case.as_bytes();
        assert_same(wire);
        for cut in 1..wire.len() {
            assert_same(&wire[..cut]);
        }
    }
}

/// The limits at and around their edges: the head's length (the read
/// buffer), the header count, and the request target's length.
#[test]
fn the_limits_fall_where_hypers_fall() {
    let with_headers = |n: usize| {
        let mut wire = String::from("GET / HTTP/1.1\r\n");
        for i in 0..n {
            wire.push_str(&format!("x-h{i}: v\r\n"));
        }
        wire.push_str("\r\n");
        wire
    };
    for n in [99, 100, 101] {
        assert_same(with_headers(n).as_bytes());
    }
    let with_target = |n: usize| format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(n - 1));
    // A target past 65,534 bytes needs a read buffer larger than the
    // default (`proxy.max_header_list_size` raised).
    for n in [65_533, 65_534, 65_535] {
        assert_same(with_target(n).as_bytes());
        assert_same_within(with_target(n).as_bytes(), 2 * MAX_BUF);
    }
    let with_value = |len: usize| {
        let head = "GET / HTTP/1.1\r\nx-big: \r\n\r\n";
        format!(
            "GET / HTTP/1.1\r\nx-big: {}\r\n\r\n",
            "v".repeat(len - head.len())
        )
    };
    for len in [MAX_BUF - 1, MAX_BUF, MAX_BUF + 1] {
        assert_same(with_value(len).as_bytes());
    }
}

/// Bytes a hostile head is made of: the ones the rules turn on (line
/// ends, separators, the digits and tokens of the framing headers) and
/// the ones they must refuse (controls, DEL, bytes past ASCII).
const HOSTILE: &[u8] = b"\r\n \t:,;\"=+-05912aAkZ\x00\x01\x0b\x7f\x80\xe9\xff";

/// A header line's names and values: the usual ones, and each rule's
/// edge.
const NAMES: &[&str] = &[
    "host",
    "content-length",
    "Content-Length",
    "transfer-encoding",
    "Transfer-Encoding",
    "connection",
    "expect",
    "upgrade",
    "te",
    "x-a",
];
const ODD_NAMES: &[&str] = &["content-length ", " transfer-encoding", "x@y", ""];
const VALUES: &[&str] = &[
    "5",
    "0",
    "5, 5",
    "5,6",
    "05",
    "chunked",
    "Chunked",
    "gzip, chunked",
    "chunked, gzip",
    "identity",
    "close",
    "keep-alive",
    "Keep-Alive, close",
    "upgrade",
    "100-continue",
    "h2c",
    "a",
];
const ODD_VALUES: &[&str] = &[
    " 5 ",
    "-1",
    "+5",
    "18446744073709551615",
    " chunked",
    "chunked,",
    ",chunked",
    "100-continue, x",
    "",
];

/// Mostly one of `usual`, sometimes one of `odd`, now and then hostile
/// bytes.
fn token(
    usual: &'static [&'static str],
    odd: &'static [&'static str],
) -> impl Strategy<Value = Vec<u8>> + Clone {
    prop_oneof![
        30 => prop::sample::select(usual).prop_map(|s| s.as_bytes().to_vec()),
        2 => prop::sample::select(odd).prop_map(|s| s.as_bytes().to_vec()),
        1 => proptest::collection::vec(prop::sample::select(HOSTILE), 0..6),
    ]
}

/// A request head made of a request line and header lines, mostly well
/// formed and each part now and then at a rule's edge or hostile, then a
/// body.
fn composed() -> impl Strategy<Value = Vec<u8>> {
    let line_end =
        prop_oneof![40 => Just(&b"\r\n"[..]), 1 => Just(&b"\n"[..]), 1 => Just(&b"\r"[..])];
    let header = (
        token(NAMES, ODD_NAMES),
        token(VALUES, ODD_VALUES),
        line_end.clone(),
    )
        .prop_map(|(name, value, end)| {
            let mut line = name;
            line.extend_from_slice(b": ");
            line.extend_from_slice(&value);
            line.extend_from_slice(end);
            line
        });
    (
        // Not CONNECT: hyper answers it as a tunnel, without the body
        // this oracle reads its description from.
        token(&["GET", "POST", "PUT", "DELETE"], &["get", "G T", ""]),
        token(
            &["/", "/a?b=1", "http://h/x"],
            &["*", "h:80", "/%", "/a b", ""],
        ),
        token(
            &["HTTP/1.1", "HTTP/1.0"],
            &["HTTP/1.2", "HTTP/2.0", "HTTP/1", "http/1.1"],
        ),
        line_end.clone(),
        proptest::collection::vec(header, 0..6),
        line_end,
        prop_oneof![
            Just(b"".to_vec()),
            Just(b"hello".to_vec()),
            Just(b"5\r\nhello\r\n0\r\n\r\n".to_vec()),
            Just(b"5\r\nhello\r\n0\r\nx-t: 1\r\n\r\n".to_vec()),
            proptest::collection::vec(prop::sample::select(HOSTILE), 0..24),
        ],
    )
        .prop_map(|(method, target, version, end, headers, blank, body)| {
            let mut wire = method;
            wire.push(b' ');
            wire.extend_from_slice(&target);
            wire.push(b' ');
            wire.extend_from_slice(&version);
            wire.extend_from_slice(end);
            for line in headers {
                wire.extend_from_slice(&line);
            }
            wire.extend_from_slice(blank);
            wire.extend_from_slice(&body);
            wire
        })
}

/// One of the probes above with a few bytes cut, changed or put in.
fn edited() -> impl Strategy<Value = Vec<u8>> {
    let edit = (
        any::<prop::sample::Index>(),
        prop::sample::select(HOSTILE),
        0u8..3,
    );
    (
        prop::sample::select(CASES),
        proptest::collection::vec(edit, 1..4),
    )
        .prop_map(|(case, edits)| {
            let mut wire = case.as_bytes().to_vec();
            for (at, byte, how) in edits {
                let at = at.index(wire.len() + 1);
                match how {
                    0 => wire.truncate(at),
                    1 if at < wire.len() => wire[at] = byte,
                    _ => wire.insert(at, byte),
                }
            }
            wire
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Generated heads: whatever the caller sends, the head, the framing
    /// of its body (or the refusal) and the connection's fate are
    /// hyper's (a disagreement on framing is a smuggling gap).
    #[test]
    fn hostile_request_heads_read_as_hypers_server_reads_them(wire in composed()) {
        assert_same(&wire);
    }

    /// The probes, edited byte by byte.
    #[test]
    fn edited_probes_read_as_hypers_server_reads_them(wire in edited()) {
        assert_same(&wire);
    }
}

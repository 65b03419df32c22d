//! The connection against hyper as the oracle: every answer, well-formed or
//! hostile and cut anywhere, reads the same through both clients (status,
//! version, headers, reason, body bytes, trailers, failure or not); every
//! request the connection writes reads in hyper's server as it was sent.

use std::convert::Infallible;
use std::future::poll_fn;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full};
use hyper_util::rt::TokioIo;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::Conn;
use crate::proxy::headers::strip_response_hop_by_hop;
use crate::proxy::{ProxyBody, UpstreamBody};
use crate::testing::Pieces;

/// What a client made of an answer.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// No head could be read.
    NoHead,
    Answer {
        status: u16,
        version: http::Version,
        headers: Vec<(String, Vec<u8>)>,
        reason: Option<Vec<u8>>,
        body: Vec<u8>,
        trailers: Option<HeaderMap>,
        /// The body ended cleanly.
        whole: bool,
    },
    /// Nothing came within the deadline.
    Hung,
}

/// An upstream over `server` that reads the request, then writes `wire` in
/// the pieces `cuts` makes, and hangs up.
fn upstream(mut server: DuplexStream, wire: Vec<u8>, cuts: Vec<usize>) {
    tokio::spawn(async move {
        let mut request = vec![0u8; 4096];
        let _ = server.read(&mut request).await;
        let mut at = 0;
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| *c < wire.len()).collect();
        cuts.sort_unstable();
        cuts.push(wire.len());
        for cut in cuts {
            if cut > at {
                let _ = server.write_all(&wire[at..cut]).await;
                let _ = server.flush().await;
                tokio::task::yield_now().await;
                at = cut;
            }
        }
        let _ = server.shutdown().await;
    });
}

fn empty_body() -> UpstreamBody {
    Either::Right(ProxyBody::new(
        Full::new(Bytes::new()).map_err(|never: Infallible| match never {}),
    ))
}

fn request(method: &Method) -> Request<UpstreamBody> {
    Request::builder()
        .method(method.clone())
        .uri("/t")
        .header("host", "up")
        .body(empty_body())
        .expect("request")
}

async fn ours(wire: Vec<u8>, cuts: Vec<usize>, method: Method) -> Outcome {
    let (client, server) = tokio::io::duplex(1 << 16);
    upstream(server, wire, cuts);
    let mut conn = Conn::new(client, 64 * 1024);
    conn.start(request(&method));
    let Ok(head) = poll_fn(|cx| conn.poll_send(cx)).await else {
        return Outcome::NoHead;
    };
    // The forwarding hop's strip finds nothing left to remove.
    let mut stripped = head.headers().clone();
    strip_response_hop_by_hop(&mut stripped);
    assert_eq!(&stripped, head.headers(), "hop-by-hop headers left in");
    let mut body = Vec::new();
    let mut trailers = None;
    let whole = loop {
        match poll_fn(|cx| conn.poll_body(cx)).await {
            None => break true,
            Some(Err(_)) => break false,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => body.extend_from_slice(&data),
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
        }
    };
    answer(head, body, trailers, whole)
}

async fn hypers(wire: Vec<u8>, cuts: Vec<usize>, method: Method) -> Outcome {
    let (client, server) = tokio::io::duplex(1 << 16);
    upstream(server, wire, cuts);
    let Ok((mut sender, conn)) = hyper::client::conn::http1::Builder::new()
        .handshake::<_, Full<Bytes>>(TokioIo::new(client))
        .await
    else {
        return Outcome::NoHead;
    };
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri("/t")
        .header("host", "up")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let Ok(resp) = sender.send_request(req).await else {
        return Outcome::NoHead;
    };
    let (mut head, mut incoming) = resp.into_parts();
    // Ours leaves out what the forwarding hop removes from hyper's.
    strip_response_hop_by_hop(&mut head.headers);
    let mut body = Vec::new();
    let mut trailers = None;
    let whole = loop {
        match incoming.frame().await {
            None => break true,
            Some(Err(_)) => break false,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => body.extend_from_slice(&data),
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
        }
    };
    answer(Response::from_parts(head, ()), body, trailers, whole)
}

fn answer(head: Response<()>, body: Vec<u8>, trailers: Option<HeaderMap>, whole: bool) -> Outcome {
    Outcome::Answer {
        status: head.status().as_u16(),
        version: head.version(),
        headers: head
            .headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect(),
        reason: head
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|r| r.as_bytes().to_vec()),
        body,
        trailers,
        whole,
    }
}

async fn within(outcome: impl std::future::Future<Output = Outcome>) -> Outcome {
    tokio::time::timeout(Duration::from_secs(5), outcome)
        .await
        .unwrap_or(Outcome::Hung)
}

fn both(wire: &[u8], cuts: &[usize], method: &Method) -> (Outcome, Outcome) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let ours = within(ours(wire.to_vec(), cuts.to_vec(), method.clone())).await;
        let hypers = within(hypers(wire.to_vec(), cuts.to_vec(), method.clone())).await;
        (ours, hypers)
    })
}

fn assert_same(wire: &[u8], cuts: &[usize], method: &Method) {
    let (ours, hypers) = both(wire, cuts, method);
    assert_eq!(
        ours,
        hypers,
        "{method} answered {:?} in pieces cut at {cuts:?}",
        String::from_utf8_lossy(wire)
    );
}

/// Answers that probe each framing rule and each limit hyper has.
const CASES: &[&str] = &[
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhel",
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello, and more",
    "HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    "HTTP/1.1 200 OK\r\ncontent-length: +5\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999999\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5 \t ;x\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n000005\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nx-t: 1\r\ny-t: 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nbad trailer\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n11111111111111111\r\nx\r\n0\r\n\r\n",
    // Size lines at the edges of the one-step read of a line of digits:
    // none, several of each case, 16 and 17 digits, and a 17th digit
    // that overflows.
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n1B\r\nabcdefghijklmnopqrstuvwxyz!\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0000000000000005\r\nhello\r\n0000000000000000\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n00000000000000005\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10000000000000000\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.0 200 OK\r\n\r\nto the end",
    "HTTP/1.1 200 OK\r\n\r\nto the end",
    "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
    // Hop-by-hop headers, left out as the forwarding hop removes them: the
    // fixed set, `Proxy-*`, what `Connection` names (in any case, with
    // blanks, beside names it may not remove), and a `Content-Length`
    // beside a `Transfer-Encoding`, wherever they stand.
    "HTTP/1.1 200 OK\r\nx-a: 1\r\nConnection: X-A , keep-alive,, host,Content-Length\r\nKeep-Alive: timeout=5\r\nproxy-x: 2\r\nPROXY-Y: 3\r\nproxy: 4\r\nupgrade: h2c\r\ntrailer: x-t\r\nte: trailers\r\nx-b: 5\r\nhost: h\r\ncontent-length: 2\r\n\r\nok",
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nx-a: 1\r\ntransfer-encoding: chunked\r\nx-b: 2\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nconnection: x-c\r\nconnection: x-d\tx-e\r\nx-c: 1\r\nx-d: 2\r\nx-e: 3\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nconnection: x-c, caf\u{e9}\r\nx-c: 1\r\nconnection: x-d\r\nx-d: 2\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.0 200 OK\r\nconnection: keep-alive, x-c\r\nx-c: 1\r\ncontent-length: 2\r\n\r\nok",
    "HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n",
    "HTTP/1.1 304 Not Modified\r\ntransfer-encoding: chunked\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
    "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 Very Fine\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 599 \r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 099 Low\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-folded: a\r\n b\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nbad header: x\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-obs: caf\u{e9}\r\nx-tab: a\tb\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n",
    "HTTP/2 200 OK\r\ncontent-length: 0\r\n\r\n",
    "\u{15}\u{3}\u{3}\0\u{2}\u{2}\u{a}",
    "",
];

#[test]
fn every_probe_reads_as_hyper_reads_it_whole_and_cut_at_every_offset() {
    for case in CASES {
        let wire = case.as_bytes();
        for method in [Method::GET, Method::HEAD] {
            assert_same(wire, &[], &method);
        }
        for cut in 1..wire.len() {
            assert_same(wire, &[cut], &Method::GET);
        }
    }
}

/// Each limit hyper's decoder has, at and around its edge: the trailer
/// section's bytes, the chunk extensions' bytes, the trailer count, and
/// the header count of a head.
#[test]
fn the_limits_fall_where_hypers_fall() {
    let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    for n in 16_370..16_390 {
        let trailer = format!("{chunked}1\r\nx\r\n0\r\nx-t: {}\r\n\r\n", "a".repeat(n));
        assert_same(trailer.as_bytes(), &[], &Method::GET);
        let extension = format!("{chunked}1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(n));
        assert_same(extension.as_bytes(), &[], &Method::GET);
    }
    for n in 98..102 {
        let lines: String = (0..n).map(|i| format!("x-{i}: v\r\n")).collect();
        let trailers = format!("{chunked}1\r\nx\r\n0\r\n{lines}\r\n");
        assert_same(trailers.as_bytes(), &[], &Method::GET);
        let head = format!("HTTP/1.1 200 OK\r\n{lines}content-length: 0\r\n\r\n");
        assert_same(head.as_bytes(), &[], &Method::GET);
    }
}

/// A well-formed answer from its parts.
fn chunked_wire(body: &[u8], sizes: &[usize], trailer: bool) -> Vec<u8> {
    let mut wire = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    let mut rest = body;
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = (*size).clamp(1, rest.len());
        wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        wire.extend_from_slice(&rest[..n]);
        wire.extend_from_slice(b"\r\n");
        rest = &rest[n..];
    }
    wire.extend_from_slice(b"0\r\n");
    if trailer {
        wire.extend_from_slice(b"x-t: done\r\n");
    }
    wire.extend_from_slice(b"\r\n");
    wire
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Well-formed chunked answers, and the same with one byte changed or
    /// the wire cut short: the same reading as hyper's.
    #[test]
    fn hostile_chunked_answers_read_as_hyper_reads_them(
        body in proptest::collection::vec(any::<u8>(), 0..300),
        sizes in proptest::collection::vec(1usize..64, 1..6),
        trailer in any::<bool>(),
        change in proptest::option::of((any::<prop::sample::Index>(),
            prop::sample::select(b"\r\n0aZ; \t:g".to_vec()))),
        cut_short in proptest::option::of(any::<prop::sample::Index>()),
        cuts in proptest::collection::vec(0usize..400, 0..4),
    ) {
        let mut wire = chunked_wire(&body, &sizes, trailer);
        if let Some((at, byte)) = change {
            let at = at.index(wire.len());
            wire[at] = byte;
        }
        if let Some(end) = cut_short {
            wire.truncate(end.index(wire.len()));
        }
        let (ours, hypers) = both(&wire, &cuts, &Method::GET);
        prop_assert_eq!(ours, hypers);
    }

    /// Lengths and close-delimited bodies, changed and cut the same way.
    #[test]
    fn hostile_length_answers_read_as_hyper_reads_them(
        body in proptest::collection::vec(any::<u8>(), 0..200),
        declared in proptest::option::of(0usize..250),
        version in prop::sample::select(vec!["1.1", "1.0"]),
        change in proptest::option::of((any::<prop::sample::Index>(),
            prop::sample::select(b"\r\n0: ,+".to_vec()))),
        cuts in proptest::collection::vec(0usize..300, 0..4),
    ) {
        let mut wire = format!("HTTP/{version} 200 OK\r\n").into_bytes();
        if let Some(n) = declared {
            wire.extend_from_slice(format!("content-length: {n}\r\n").as_bytes());
        }
        wire.extend_from_slice(b"\r\n");
        wire.extend_from_slice(&body);
        if let Some((at, byte)) = change {
            let at = at.index(wire.len());
            wire[at] = byte;
        }
        let (ours, hypers) = both(&wire, &cuts, &Method::GET);
        prop_assert_eq!(ours, hypers);
    }
}

// --- requests ---

/// What hyper's server read of one request: head and body.
type Received = (Method, String, Vec<(String, Vec<u8>)>, Vec<u8>);

/// Writes `req` on a connection served by hyper's HTTP/1.1 server; what the
/// server read, and whether the answer came back through the connection.
async fn served(req: Request<UpstreamBody>) -> (Received, bool) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    tokio::spawn(async move {
        let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let tx = tx.lock().ok().and_then(|mut t| t.take());
            async move {
                let (head, body) = req.into_parts();
                let body = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let headers = head
                    .headers
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                    .collect();
                if let Some(tx) = tx {
                    let _ = tx.send((head.method, head.uri.to_string(), headers, body.to_vec()));
                }
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"done"))))
            }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(server), service)
            .await;
    });
    let mut conn = Conn::new(client, 64 * 1024);
    conn.start(req);
    let answered = match poll_fn(|cx| conn.poll_send(cx)).await {
        Ok(_) => {
            let mut body = Vec::new();
            while let Some(Ok(frame)) = poll_fn(|cx| conn.poll_body(cx)).await {
                body.extend_from_slice(frame.data_ref().map_or(&[][..], |d| d));
            }
            body == b"done" && conn.reusable()
        }
        Err(_) => false,
    };
    (rx.await.expect("the server read a request"), answered)
}

fn body_of(pieces: &[Vec<u8>], told: bool, pause: bool) -> UpstreamBody {
    let pieces = pieces.iter().map(|p| Bytes::from(p.clone()));
    Either::Right(ProxyBody::new(Pieces::new(pieces, told, pause)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any body, told or streamed, in any pieces: hyper's server reads the
    /// head and the body as they were given, and the answer comes back on
    /// a connection left reusable.
    #[test]
    fn requests_read_in_hypers_server_as_they_were_sent(
        method in prop::sample::select(vec![Method::POST, Method::PUT, Method::GET, Method::DELETE]),
        pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..5),
        told in any::<bool>(),
        pause in any::<bool>(),
        extra in proptest::collection::vec(("x-[a-z]{1,8}", "[ -~]{0,20}"), 0..4),
    ) {
        let mut builder = Request::builder().method(method.clone()).uri("/a/b?c=d").header("host", "up");
        for (name, value) in &extra {
            builder = builder.header(name.as_str(), value.trim());
        }
        let req = builder.body(body_of(&pieces, told, pause)).expect("request");
        let sent_headers: Vec<(String, Vec<u8>)> = req
            .headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let ((got_method, uri, headers, body), answered) = rt.block_on(served(req));
        let all: Vec<u8> = pieces.concat();
        let bodiless_get = !told && method == Method::GET;
        prop_assert_eq!(got_method, method);
        prop_assert_eq!(uri, "/a/b?c=d");
        prop_assert!(answered, "the answer read whole, the connection reusable");
        let framing: Vec<(String, Vec<u8>)> = headers
            .iter()
            .filter(|(n, _)| n == "content-length" || n == "transfer-encoding")
            .cloned()
            .collect();
        let rest: Vec<(String, Vec<u8>)> = headers
            .iter()
            .filter(|(n, _)| n != "content-length" && n != "transfer-encoding")
            .cloned()
            .collect();
        prop_assert_eq!(rest, sent_headers);
        if bodiless_get {
            prop_assert!(body.is_empty());
        } else {
            prop_assert_eq!(&body, &all);
        }
        // The framing is one header: the told length, chunked, or none.
        let want: Vec<(String, Vec<u8>)> = if (told && pieces.is_empty()) || bodiless_get {
            vec![]
        } else if told {
            vec![("content-length".into(), all.len().to_string().into_bytes())]
        } else {
            vec![("transfer-encoding".into(), b"chunked".to_vec())]
        };
        prop_assert_eq!(framing, want);
    }
}

#[tokio::test]
async fn content_lengths_that_disagree_are_never_sent() {
    for (pieces, told) in [
        (vec![], true),
        (vec![b"four".to_vec()], true),
        (vec![b"four".to_vec()], false),
    ] {
        let req = Request::post("/")
            .header("content-length", "3, 4")
            .body(body_of(&pieces, told, false))
            .expect("request");
        let ((_, _, headers, body), answered) = served(req).await;
        let lengths: Vec<&[u8]> = headers
            .iter()
            .filter(|(n, _)| n == "content-length")
            .map(|(_, v)| v.as_slice())
            .collect();
        let want: Vec<&[u8]> = match (pieces.is_empty(), told) {
            (true, _) | (false, false) => vec![],
            (false, true) => vec![b"4"],
        };
        assert_eq!(lengths, want, "{pieces:?} told {told}");
        assert_eq!(body, pieces.concat());
        assert!(answered);
    }
}

#[tokio::test]
async fn a_body_longer_than_its_content_length_fails_the_request() {
    let req = Request::post("/")
        .header("content-length", "3")
        .body(body_of(&[b"four".to_vec()], false, false))
        .expect("request");
    let (client, _server) = tokio::io::duplex(1 << 16);
    let mut conn = Conn::new(client, 64 * 1024);
    conn.start(req);
    let sent = poll_fn(|cx| conn.poll_send(cx)).await;
    assert!(matches!(sent, Err((super::Error::RequestLength, None))));
    assert!(!conn.reusable());
}

#[tokio::test]
async fn a_request_none_of_which_was_written_comes_back_whole() {
    let (client, server) = tokio::io::duplex(1 << 16);
    drop(server);
    let mut conn = Conn::new(client, 64 * 1024);
    let req = Request::post("/x")
        .header("content-length", "5")
        .body(body_of(&[b"hello".to_vec()], true, false))
        .expect("request");
    conn.start(req);
    let Err((super::Error::Write(_), Some(req))) = poll_fn(|cx| conn.poll_send(cx)).await else {
        panic!("a write to a closed connection gives the request back");
    };
    assert_eq!(req.uri(), "/x");
    assert_eq!(req.body().size_hint().exact(), Some(5));
    let body = req.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(&body[..], b"hello");
}

/// The answer's head and its body's data, read through `conn`.
async fn answer_of(conn: &mut Conn<DuplexStream>) -> (Response<()>, Vec<u8>) {
    let head = poll_fn(|cx| conn.poll_send(cx))
        .await
        .map_err(|(e, _)| e)
        .expect("the upstream's answer");
    let mut body = Vec::new();
    while let Some(frame) = poll_fn(|cx| conn.poll_body(cx)).await {
        body.extend_from_slice(frame.expect("data").data_ref().expect("data"));
    }
    (head, body)
}

#[tokio::test]
async fn a_101_has_no_body_and_ends_the_connections_use() {
    let (client, server) = tokio::io::duplex(1 << 16);
    upstream(
        server,
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\nraw".to_vec(),
        vec![],
    );
    let mut conn = Conn::new(client, 64 * 1024);
    conn.start(request(&Method::GET));
    let (head, body) = answer_of(&mut conn).await;
    assert_eq!(head.status(), 101);
    assert!(body.is_empty());
    assert!(!conn.reusable());
}

#[tokio::test]
async fn a_head_longer_than_the_limit_fails() {
    let (client, server) = tokio::io::duplex(1 << 16);
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    let value = "v".repeat(1000);
    for _ in 0..20 {
        wire.extend_from_slice(format!("x-long: {value}\r\n").as_bytes());
    }
    upstream(server, wire, vec![]);
    let mut conn = Conn::new(client, 16 * 1024);
    conn.start(request(&Method::GET));
    let sent = poll_fn(|cx| conn.poll_send(cx)).await;
    assert!(matches!(
        sent,
        Err((super::Error::HeadTooLarge(16384), None))
    ));
}

#[tokio::test]
async fn kept_alive_answers_follow_each_other_and_close_delimited_ones_end_the_connection() {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        let _ = server.read(&mut buf).await;
        let _ = server
            .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
            .await;
        let _ = server.read(&mut buf).await;
        let _ = server.write_all(b"HTTP/1.1 200 OK\r\n\r\nto the end").await;
        let _ = server.shutdown().await;
    });
    let mut conn = Conn::new(client, 64 * 1024);
    for (want, reusable) in [(&b"ok"[..], true), (&b"to the end"[..], false)] {
        conn.start(request(&Method::GET));
        let (_, body) = answer_of(&mut conn).await;
        assert_eq!(body, want);
        assert_eq!(conn.reusable(), reusable);
        conn.idle();
    }
}

#[tokio::test]
async fn an_answer_before_the_whole_body_is_read_is_passed_on() {
    let (client, mut server) = tokio::io::duplex(16 * 1024);
    tokio::spawn(async move {
        let mut head = vec![0u8; 4096];
        let _ = server.read(&mut head).await;
        let _ = server
            .write_all(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 3\r\nconnection: close\r\n\r\nbig")
            .await;
        // Gone without reading the rest of the body.
    });
    let pieces = vec![vec![b'x'; 64 * 1024]; 16];
    let req = Request::post("/upload")
        .body(body_of(&pieces, true, false))
        .expect("request");
    let mut conn = Conn::new(client, 64 * 1024);
    conn.start(req);
    let (head, body) = answer_of(&mut conn).await;
    assert_eq!(head.status(), 413);
    assert_eq!(body, b"big");
    assert!(!conn.reusable());
}

#[test]
fn a_heads_end_is_seen_in_the_fresh_bytes_only() {
    let head = b"HTTP/1.1 200 OK\r\nx: y\r\n\r\n";
    for parsed in 1..head.len() {
        assert!(super::head::may_end(head, parsed), "parsed {parsed}");
    }
    assert!(!super::head::may_end(b"HTTP/1.1 200 OK\r\nx: y\r\n", 10));
    assert!(super::head::may_end(b"HTTP/1.1 200 OK\nx: y\n\n", 20));
    assert!(super::head::may_end(b"HTTP/1.1 200 OK\nx: y\n\r\n", 20));
    assert!(super::head::may_end(b"anything", 0));
}

/// An upstream that trickles a long head piece by piece: the head is
/// parsed again only when a piece may have ended it, not once a piece.
#[tokio::test]
async fn a_head_trickled_in_pieces_is_parsed_about_once() {
    let (client, server) = tokio::io::duplex(1 << 16);
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..90 {
        wire.extend_from_slice(format!("x-{i}: {}\r\n", "v".repeat(2000)).as_bytes());
    }
    wire.extend_from_slice(b"content-length: 2\r\n\r\nok");
    let cuts: Vec<usize> = (1..wire.len()).step_by(512).collect();
    let pieces = cuts.len();
    upstream(server, wire, cuts);
    let mut conn = Conn::new(client, 408 * 1024);
    conn.start(request(&Method::GET));
    let head = poll_fn(|cx| conn.poll_send(cx))
        .await
        .map_err(|(e, _)| e)
        .expect("the head, whole");
    assert_eq!(head.headers().len(), 91);
    assert!(pieces > 300);
    assert!(conn.head_parses <= 3, "{} parses", conn.head_parses);
}

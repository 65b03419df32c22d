//! hyper's HTTP/1.1 server is the oracle: each scripted answer to each
//! request is written by hyper's server (as the proxy configures it) and by
//! `encode` with the body framed as it says, and the bytes must be the same;
//! likewise for answers composed of a status, a version, the header lines
//! `encode` reads or drops and a body (property tests).

use std::convert::Infallible;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Response, StatusCode, Version};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{encode, length_of, Caller, Framing};
use crate::server::h1::head::parse;
use crate::testing::Pieces;

/// An answer: status, version, headers in order, reason phrase, body.
#[derive(Clone)]
struct Answer {
    status: u16,
    version: Version,
    headers: Vec<(&'static str, &'static str)>,
    reason: Option<&'static str>,
    body: Pieces,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pieces: Vec<_> = self
            .body
            .pieces
            .iter()
            .map(|p| String::from_utf8_lossy(p))
            .collect();
        write!(
            f,
            "{} {:?} {:?} {pieces:?} told {}",
            self.status,
            self.version,
            self.headers,
            http_body::Body::size_hint(&self.body).exact().is_some()
        )
    }
}

impl Answer {
    fn response(&self) -> Response<Pieces> {
        let mut r = Response::new(self.body.clone());
        *r.status_mut() = StatusCode::from_u16(self.status).expect("status");
        *r.version_mut() = self.version;
        for (n, v) in &self.headers {
            r.headers_mut().append(*n, HeaderValue::from_static(v));
        }
        if let Some(reason) = self.reason {
            r.extensions_mut()
                .insert(hyper::ext::ReasonPhrase::from_static(reason.as_bytes()));
        }
        r
    }
}

async fn hypers(request: &[u8], answer: Answer) -> Vec<u8> {
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let service = service_fn(move |_req| {
        let r = answer.response();
        async move { Ok::<_, Infallible>(r) }
    });
    tokio::spawn(async move {
        let _ = hyper::server::conn::http1::Builder::new()
            .auto_date_header(false)
            .half_close(true)
            .serve_connection(TokioIo::new(server), service)
            .await;
    });
    client.write_all(request).await.expect("write");
    client.shutdown().await.expect("shutdown");
    let mut out = Vec::new();
    let _ = client.read_to_end(&mut out).await;
    out
}

/// Our answers to the requests in `wire`, one after the other while the
/// connection is kept.
fn ours(wire: &[u8], answer: &Answer) -> Vec<u8> {
    let mut buf = BytesMut::from(wire);
    let mut out = Vec::new();
    while !buf.is_empty() {
        let (answered, last) = answer_one(&mut buf, answer);
        out.extend_from_slice(&answered);
        if last {
            break;
        }
    }
    out
}

fn answer_one(buf: &mut BytesMut, answer: &Answer) -> (Vec<u8>, bool) {
    let head = parse(buf).expect("a request").expect("whole");
    if let crate::server::h1::head::Framing::Length(n) = head.framing {
        let _ = buf.split_to(n as usize);
    } else {
        // The chunked request bodies here are empty: "0\r\n\r\n".
        let _ = buf.split_to(5);
    }
    let mut keep_alive = head.keep_alive;
    let (parts, body) = answer.response().into_parts();
    let length = length_of(&body);
    let caller = Caller {
        method: head.request.method(),
        version: head.request.version(),
        keep_alive: &mut keep_alive,
    };
    let mut out = Vec::new();
    let Ok(encoded) = encode(parts, caller, length, &mut out) else {
        return (Vec::new(), true);
    };
    let data: Vec<u8> = body.pieces.iter().flat_map(|p| p.to_vec()).collect();
    match encoded.framing {
        Framing::Length(n) => out.extend_from_slice(&data[..(n as usize).min(data.len())]),
        Framing::Close => out.extend_from_slice(&data),
        Framing::Chunked { .. } => {
            for p in body.pieces.iter().filter(|p| !p.is_empty()) {
                out.extend_from_slice(format!("{:x}\r\n", p.len()).as_bytes());
                out.extend_from_slice(p);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
    (out, encoded.last || !keep_alive)
}

/// An answer's body: its pieces, and whether its length is told before
/// it is sent.
fn script(pieces: &[&'static str], told: bool) -> Pieces {
    let pieces = pieces.iter().map(|p| Bytes::from_static(p.as_bytes()));
    Pieces::new(pieces, told, false)
}

fn answer(status: u16, headers: &[(&'static str, &'static str)], body: Pieces) -> Answer {
    Answer {
        status,
        version: Version::HTTP_11,
        headers: headers.to_vec(),
        reason: None,
        body,
    }
}

const REQUESTS: &[&str] = &[
    "GET / HTTP/1.1\r\nhost: a\r\n\r\n",
    "HEAD / HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\r\nconnection: close\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n",
    "HEAD / HTTP/1.0\r\n\r\n",
    "POST / HTTP/1.1\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
];

fn answers() -> Vec<Answer> {
    let hello = || script(&["hel", "lo"], true);
    let stream = || script(&["data: 1\n\n", "data: 2\n\n"], false);
    let mut all = vec![
        answer(200, &[], script(&[], true)),
        answer(200, &[("content-type", "application/json")], hello()),
        answer(200, &[("content-type", "text/event-stream")], stream()),
        answer(200, &[("content-length", "5")], hello()),
        answer(
            200,
            &[("content-length", "5")],
            script(&["hel", "lo"], false),
        ),
        answer(
            200,
            &[("content-length", "5"), ("content-length", "5")],
            script(&["hel", "lo"], false),
        ),
        answer(
            200,
            &[("content-length", "5"), ("content-length", "6")],
            script(&["hel", "lo"], false),
        ),
        answer(
            200,
            &[("content-length", "x")],
            script(&["hel", "lo"], false),
        ),
        answer(200, &[("content-length", "5")], script(&[], true)),
        answer(200, &[("transfer-encoding", "chunked")], stream()),
        answer(200, &[("transfer-encoding", "gzip")], stream()),
        answer(
            200,
            &[
                ("transfer-encoding", "gzip"),
                ("transfer-encoding", "chunked"),
            ],
            stream(),
        ),
        answer(
            200,
            &[("content-length", "5"), ("transfer-encoding", "chunked")],
            stream(),
        ),
        answer(
            200,
            &[("transfer-encoding", "chunked"), ("content-length", "5")],
            stream(),
        ),
        answer(200, &[("connection", "close")], hello()),
        answer(200, &[("connection", "keep-alive")], hello()),
        answer(
            200,
            &[("connection", "x-a"), ("x-a", "1"), ("connection", "x-b")],
            hello(),
        ),
        answer(
            200,
            &[("trailer", "grpc-status, grpc-message"), ("x-z", "z")],
            stream(),
        ),
        answer(204, &[("content-length", "0")], script(&[], true)),
        answer(204, &[], stream()),
        answer(
            304,
            &[("content-length", "7"), ("etag", "\"a\"")],
            script(&[], true),
        ),
        answer(304, &[("transfer-encoding", "chunked")], stream()),
        answer(101, &[("upgrade", "websocket")], script(&[], true)),
        answer(404, &[("content-type", "text/plain")], hello()),
        answer(599, &[], hello()),
        answer(
            502,
            &[("set-cookie", "a=1"), ("set-cookie", "b=2"), ("x-e", "")],
            hello(),
        ),
    ];
    let mut reasoned = answer(200, &[], hello());
    reasoned.reason = Some("Fine");
    all.push(reasoned);
    let mut old = answer(200, &[], stream());
    old.version = Version::HTTP_10;
    all.push(old.clone());
    old.headers = vec![("connection", "keep-alive")];
    all.push(old);
    let mut known_old = answer(200, &[], hello());
    known_old.version = Version::HTTP_10;
    all.push(known_old);
    let mut two = answer(200, &[], hello());
    two.version = Version::HTTP_2;
    all.push(two);
    all
}

#[test]
fn every_answer_is_written_as_hypers_server_writes_it() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for request in REQUESTS {
        for answer in answers() {
            assert_written_alike(&runtime, request, &answer);
        }
    }
}

/// `answer` to `request` twice in a row (the second is answered only on
/// a kept connection) is written by `encode` as hyper's server writes it.
fn assert_written_alike(runtime: &tokio::runtime::Runtime, request: &str, answer: &Answer) {
    let wire = request.repeat(2);
    let theirs = runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(10),
            hypers(wire.as_bytes(), answer.clone()),
        )
        .await
        .expect("hyper answered")
    });
    let mine = ours(wire.as_bytes(), answer);
    assert_eq!(
        String::from_utf8_lossy(&mine),
        String::from_utf8_lossy(&theirs),
        "request {request:?}, answer {answer:?}"
    );
}

/// Header lines an answer is composed of: the ones `encode` reads or
/// drops, at their values' edges, and some it passes on.
const ANSWER_HEADERS: &[(&str, &str)] = &[
    ("content-length", "5"),
    ("content-length", "0"),
    ("content-length", "6"),
    ("content-length", "05"),
    ("content-length", "x"),
    ("content-length", "5, 5"),
    ("transfer-encoding", "chunked"),
    ("transfer-encoding", "gzip"),
    ("transfer-encoding", "gzip, chunked"),
    ("transfer-encoding", "chunked, gzip"),
    ("connection", "close"),
    ("connection", "keep-alive"),
    ("connection", "x-a"),
    ("connection", "Close, x-a"),
    ("keep-alive", "timeout=5"),
    ("x-a", "1"),
    ("trailer", "grpc-status"),
    ("upgrade", "h2c"),
    ("content-type", "text/event-stream"),
    ("date", "Thu, 03 Dec 2026 00:00:00 GMT"),
    ("server", "agent"),
    ("x-e", ""),
];

/// An answer composed of a status, a version, header lines and a body
/// told or not.
fn composed_answer() -> impl Strategy<Value = Answer> {
    let status =
        prop::sample::select(&[200u16, 201, 202, 204, 206, 304, 400, 404, 500, 502, 599][..]);
    let version = prop_oneof![
        6 => Just(Version::HTTP_11),
        1 => Just(Version::HTTP_10),
        1 => Just(Version::HTTP_2),
    ];
    let pieces: &'static [&'static str] = &["hel", "lo", "", "data: 1\n\n", "!"];
    let body = (
        proptest::collection::vec(prop::sample::select(pieces), 0..4),
        any::<bool>(),
    );
    (
        status,
        version,
        proptest::collection::vec(prop::sample::select(ANSWER_HEADERS), 0..5),
        body,
    )
        .prop_map(|(status, version, mut headers, (body, told))| {
            // The proxy's answers carry a `content-length` only as the
            // length of the body that follows (the upstream's body is framed
            // by it): one that disagrees is left out, and a body beside one
            // does not tell its length too (hyper's debug build asserts the
            // two agree).
            let total = body.iter().map(|p| p.len()).sum::<usize>().to_string();
            headers.retain(|(name, value)| {
                *name != "content-length"
                    || value.split(',').any(|v| v.trim().parse::<u64>().is_err())
                    || value
                        .split(',')
                        .all(|v| v.trim().trim_start_matches('0') == total.trim_start_matches('0'))
            });
            let told = told && !headers.iter().any(|(n, _)| *n == "content-length");
            Answer {
                status,
                version,
                headers,
                reason: None,
                body: script(&body, told),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Composed answers to each request: the bytes are hyper's, the
    /// framing above all (a caller must read the answer's end where
    /// hyper's server puts it).
    #[test]
    fn composed_answers_are_written_as_hypers_server_writes_them(
        request in prop::sample::select(REQUESTS),
        answer in composed_answer(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        assert_written_alike(&runtime, request, &answer);
    }
}

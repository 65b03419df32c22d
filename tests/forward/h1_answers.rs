//! Chunked answers on the HTTP/1.1 upstream leg (`proxy/pool/h1`) end to
//! end: on a kept-alive upstream connection, after a 100 Continue,
//! answering a HEAD, a malformed chunk size, and over TLS, each through
//! the proxy with the caller getting what hyper's client gave it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::*;

/// What the scripted upstream answers: the request's method and its
/// number (from 0, across connections) → the bytes written, at once.
type Script = fn(&str, usize) -> Vec<u8>;

/// A raw upstream that keeps connections open and answers each request
/// with `script`; the number of requests each connection carried.
async fn scripted(script: Script) -> (SocketAddr, Arc<Mutex<Vec<usize>>>) {
    scripted_over(script, None).await
}

/// `scripted`, over TLS with `tls` when given.
async fn scripted_over(
    script: Script,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (SocketAddr, Arc<Mutex<Vec<usize>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let served = Arc::new(Mutex::new(Vec::new()));
    let counts = served.clone();
    let asked = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            let (counts, asked, tls) = (counts.clone(), asked.clone(), tls.clone());
            tokio::spawn(async move {
                let conn = {
                    let mut c = counts.lock().expect("lock");
                    c.push(0);
                    c.len() - 1
                };
                let answer = |method: &str| {
                    counts.lock().expect("lock")[conn] += 1;
                    script(method, asked.fetch_add(1, Ordering::SeqCst))
                };
                match tls {
                    Some(tls) => {
                        if let Ok(s) = tls.accept(s).await {
                            serve(s, answer).await;
                        }
                    }
                    None => serve(s, answer).await,
                }
            });
        }
    });
    (addr, served)
}

/// Answers each request head read on `s` with what `answer` gives for
/// its method.
async fn serve<S>(mut s: S, answer: impl Fn(&str) -> Vec<u8>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut seen, mut buf) = (Vec::new(), [0u8; 4096]);
    loop {
        let end = loop {
            if let Some(p) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(k) => seen.extend_from_slice(&buf[..k]),
            }
        };
        let head = String::from_utf8_lossy(&seen[..end]).to_string();
        seen.drain(..end);
        let method = head.split(' ').next().unwrap_or("");
        let wire = answer(method);
        if s.write_all(&wire).await.is_err() || s.flush().await.is_err() {
            return;
        }
    }
}

/// `n` SSE events, one chunk each, and their data.
fn events(n: usize, from: usize) -> (Vec<u8>, Vec<u8>) {
    let (mut wire, mut data) = (Vec::new(), Vec::new());
    for i in from..from + n {
        let event = format!("data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"n\":{i}}}}}\n\n");
        wire.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
        data.extend_from_slice(event.as_bytes());
    }
    (wire, data)
}

const CHUNKED_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";

/// A chunked answer of 20 events (the `n`-th request's), with a trailer
/// from the sixth on (a lease whose answer had trailers is not pooled
/// again: hyper's body does not say it ended after them).
fn sse_answer(n: usize) -> Vec<u8> {
    let (wire, _) = events(20, n * 20);
    let trailer = if n >= 5 { "x-sum: 7\r\n" } else { "" };
    [
        CHUNKED_HEAD.as_bytes(),
        &wire,
        format!("0\r\n{trailer}\r\n").as_bytes(),
    ]
    .concat()
}

/// One caller connection to the proxy, kept alive: its requests go to one
/// serving thread, and so to one upstream pool.
async fn caller(tap: SocketAddr) -> hyper::client::conn::http1::SendRequest<Body> {
    let stream = TcpStream::connect(tap).await.expect("connect");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    sender
}

/// Asks `/stream` with `method` on `caller`; the status and the body.
async fn ask(
    caller: &mut hyper::client::conn::http1::SendRequest<Body>,
    method: http::Method,
) -> (StatusCode, Bytes) {
    within("ready", caller.ready()).await.expect("ready");
    let req = Request::builder()
        .method(method)
        .uri("/stream")
        .header("host", "tap")
        .body(full(Bytes::new()))
        .expect("request");
    let resp = within("answer", caller.send_request(req))
        .await
        .expect("answer");
    let status = resp.status();
    let body = within("body", resp.into_body().collect())
        .await
        .expect("body")
        .to_bytes();
    (status, body)
}

/// `times` GETs on one caller connection each get the scripted stream
/// whole, and the upstream served them on one connection (its count of
/// answers on a connection reached `times`).
async fn whole_streams_on_one_connection(
    tap: SocketAddr,
    served: &Mutex<Vec<usize>>,
    times: usize,
) {
    let mut caller = caller(tap).await;
    for n in 0..times {
        let (status, body) = ask(&mut caller, http::Method::GET).await;
        assert_eq!(
            (status, body.to_vec()),
            (StatusCode::OK, events(20, n * 20).1)
        );
    }
    assert!(served.lock().expect("lock").iter().any(|n| *n + 1 >= times));
}

#[tokio::test]
async fn chunked_answers_follow_each_other_on_a_kept_alive_upstream_connection() {
    // Chunked answers (some with trailers) and a content-length one between.
    let (up, served) = scripted(|_, n| match n {
        2 => b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello".to_vec(),
        n => sse_answer(n),
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut caller = caller(tap.listen_addr()).await;
    for n in 0..6 {
        let (status, body) = ask(&mut caller, http::Method::GET).await;
        assert_eq!(status, StatusCode::OK);
        let want = if n == 2 {
            b"hello".to_vec()
        } else {
            events(20, n * 20).1
        };
        assert_eq!(body, want, "answer {n}");
    }
    let served = served.lock().expect("lock").clone();
    assert!(
        served.iter().any(|n| *n >= 3),
        "{served:?}: the upstream connection was not kept alive"
    );
}

#[tokio::test]
async fn a_100_continue_before_a_chunked_answer() {
    let (up, served) =
        scripted(|_, n| [b"HTTP/1.1 100 Continue\r\n\r\n".to_vec(), sse_answer(n)].concat()).await;
    let tap = proxy(config(up)).await;
    whole_streams_on_one_connection(tap.listen_addr(), &served, 3).await;
}

#[tokio::test]
async fn a_head_answered_chunked_has_no_body_and_the_next_answer_is_whole() {
    let (up, served) = scripted(|method, n| match method {
        // No body after a HEAD's answer, whatever its head says.
        "HEAD" => CHUNKED_HEAD.as_bytes().to_vec(),
        _ => sse_answer(n),
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut caller = caller(tap.listen_addr()).await;
    for n in 0..4 {
        let method = if n % 2 == 0 {
            http::Method::HEAD
        } else {
            http::Method::GET
        };
        let (status, body) = ask(&mut caller, method.clone()).await;
        let want = if method == http::Method::HEAD {
            Vec::new()
        } else {
            events(20, n * 20).1
        };
        assert_eq!((status, body.to_vec()), (StatusCode::OK, want), "{method}");
    }
    assert!(served.lock().expect("lock").iter().any(|n| *n >= 2));
}

/// What a raw caller gets for one GET (connection: close), until the
/// proxy closes or fails the connection.
async fn raw_get(tap: SocketAddr) -> Vec<u8> {
    let mut s = TcpStream::connect(tap).await.expect("connect");
    s.write_all(b"GET /stream HTTP/1.1\r\nhost: tap\r\nconnection: close\r\n\r\n")
        .await
        .expect("write");
    crate::hostile::until_closed(&mut s).await
}

/// The data of the whole chunks at the start of a chunked body, and
/// whether the last chunk ended it.
fn whole_chunks(mut wire: &[u8]) -> (Vec<u8>, bool) {
    let mut data = Vec::new();
    while let Some(eol) = wire.windows(2).position(|w| w == b"\r\n") {
        let Ok(n) = usize::from_str_radix(&String::from_utf8_lossy(&wire[..eol]), 16) else {
            break;
        };
        if n == 0 {
            return (data, wire[eol..].starts_with(b"\r\n\r\n"));
        }
        let Some(chunk) = wire.get(eol + 2..eol + 2 + n) else {
            break;
        };
        data.extend_from_slice(chunk);
        wire = &wire[eol + 4 + n..];
    }
    (data, false)
}

/// Before the rewriter, the caller got a 200, the five events before the
/// bad size line, and the connection closed with no last chunk: the same now.
#[tokio::test]
async fn a_malformed_chunk_size_fails_the_answer_after_the_data_before_it() {
    let (up, _) = scripted(|_, _| {
        let (wire, _) = events(5, 0);
        [CHUNKED_HEAD.as_bytes(), &wire, b"zz\r\nnever\r\n0\r\n\r\n"].concat()
    })
    .await;
    let tap = proxy(config(up)).await;
    let got = raw_get(tap.listen_addr()).await;
    let split = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&got[..split]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200 ok\r\n"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let (data, ended) = whole_chunks(&got[split..]);
    assert_eq!(data, events(5, 0).1);
    assert!(!ended, "the answer ended cleanly");
}

/// Above TLS too: the rewriter reads the plaintext, chunked answers on a
/// kept-alive HTTPS upstream connection arrive whole.
#[tokio::test]
async fn chunked_answers_over_tls_arrive_whole() {
    let c = crate::tls::chain(&["127.0.0.1"]);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![c.leaf.clone()], c.leaf_key.clone_key())
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let (up, served) = scripted_over(|_, n| sse_answer(n), Some(acceptor)).await;
    let dir = tempfile::tempdir().expect("dir");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &c.ca_pem).expect("write ca");
    let mut config = config(up);
    config.upstream = Some(format!("https://{up}").parse().expect("url"));
    config.proxy.tls_ca_file = Some(ca);
    let tap = proxy(config).await;
    whole_streams_on_one_connection(tap.listen_addr(), &served, 4).await;
}
